package dev.toolhost.web;

import dev.toolhost.core.spi.ConfigSections;
import dev.toolhost.core.spi.HostContext;
import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.core.spi.SectionReading;
import dev.toolhost.memory.WorkingMemory;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.JsonNode;

/**
 * The web extension is a host's access to the web (the {@code web:} section): {@code web_browse},
 * and {@code web_search} when a provider is configured, with their guide, source {@code
 * builtin:web}; and the {@link OutboundHttp} client under the section's outbound policy, shared
 * with later extensions as a service, so that everything fetched on a model's behalf goes through
 * one set of address checks.
 *
 * <p>Off until configured: a host whose config has no {@code web:} section registers no web tool
 * and opens no client. Pages are fetched by a client under the outbound policy as written; the
 * search provider and GitHub's API by a second one that also opens the hosts of their configured
 * URLs, which an operator chose, so that a model cannot reach those through {@code web_browse}
 * unless the policy opens them too. Keys come from the environment variables the section names and
 * never appear in any output. Found by {@link java.util.ServiceLoader}; made with an {@link
 * OutboundHttp.Lookup}, it resolves names with it.
 */
public final class WebExtension implements HostExtension<WebConfig> {

  /** The extension's name and config key. */
  public static final String NAME = "web";

  private static final Logger LOG = LoggerFactory.getLogger(WebExtension.class);

  private final OutboundHttp.Lookup lookup;

  /** The extension resolving names with the system's resolver. */
  public WebExtension() {
    this(OutboundHttp.Lookup.system());
  }

  /** The extension resolving names with the given resolver (a test's fixed addresses). */
  public WebExtension(OutboundHttp.Lookup lookup) {
    this.lookup = Objects.requireNonNull(lookup, "lookup");
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public Set<Class<?>> provides() {
    return Set.of(OutboundHttp.class);
  }

  /** Large pages are chunked into working memory. */
  @Override
  public Set<Class<?>> uses() {
    return Set.of(WorkingMemory.class);
  }

  @Override
  public JsonNode configSchema() {
    return ConfigSections.schema(WebConfig.Raw.class);
  }

  @Override
  public WebConfig read(JsonNode section, SectionReading reading) {
    return WebConfig.read(section, reading);
  }

  @Override
  public void start(HostContext host, Optional<WebConfig> section) {
    if (section.isEmpty()) {
      return;
    }
    WebConfig config = section.get();
    OutboundPolicy apiPolicy = config.outbound().allowingHost(config.github().apiUrl().getHost());
    if (config.search().isPresent()) {
      apiPolicy = apiPolicy.allowingHost(config.search().get().url().getHost());
    }
    OutboundHttp pages = host.own(OutboundHttp.start(config.outbound(), lookup));
    OutboundHttp apis = host.own(OutboundHttp.start(apiPolicy, lookup));
    Optional<WebSearch> search =
        config
            .search()
            .map(
                s -> {
                  Optional<String> key = Optional.ofNullable(host.environment().get(s.apiKeyEnv()));
                  if (s.provider() == WebConfig.Provider.BRAVE && key.isEmpty()) {
                    LOG.warn(
                        "web_search uses Brave Search, but {} is not set: searches will fail"
                            + " until it is",
                        s.apiKeyEnv());
                  }
                  return new WebSearch(s, apis, key);
                });
    Optional<String> token =
        config.github().tokenEnv().map(variable -> host.environment().get(variable));
    WebTools tools =
        new WebTools(config, pages, apis, search, token, host.service(WorkingMemory.class));
    host.provide(OutboundHttp.class, pages);
    host.registry().registerAll(tools.tools());
    // The network, for helpers and tasks; never for the synthesis of another agent's answer.
    host.allowTools(tools.tools(), "subagent", "scheduled");
    host.guide(WebTools.GUIDE);
  }
}
