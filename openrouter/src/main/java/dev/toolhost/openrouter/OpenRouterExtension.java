package dev.toolhost.openrouter;

import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.spi.ConfigSections;
import dev.toolhost.core.spi.HostContext;
import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.core.spi.SectionReading;
import dev.toolhost.web.OutboundHttp;
import dev.toolhost.web.OutboundPolicy;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.JsonNode;

/**
 * The OpenRouter extension is a host's read-only view of an OpenRouter account (the {@code
 * openrouter:} section): seven tools, source {@code builtin:openrouter}, with their guide. They are
 * tools of the host, so {@code toolhost mcp} and {@code /mcp/{profile}} serve them as any other:
 * that is RockBot's OpenRouter MCP server, with no separate process to run.
 *
 * <p>Off until configured. Calls go through an {@link OutboundHttp} client that opens only the
 * configured API's host (an operator's choice); the key comes from the environment variable the
 * section names and never appears in a result, an error or a log line. Found by {@link
 * java.util.ServiceLoader}.
 */
public final class OpenRouterExtension implements HostExtension<OpenRouterConfig> {

  /** The extension's name and config key. */
  public static final String NAME = "openrouter";

  private static final Logger LOG = LoggerFactory.getLogger(OpenRouterExtension.class);

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public JsonNode configSchema() {
    return ConfigSections.schema(OpenRouterConfig.Raw.class);
  }

  @Override
  public OpenRouterConfig read(JsonNode section, SectionReading reading) {
    return OpenRouterConfig.read(section, reading);
  }

  @Override
  public void start(HostContext host, Optional<OpenRouterConfig> section) {
    if (section.isEmpty()) {
      return;
    }
    OpenRouterConfig config = section.get();
    Optional<String> key =
        Optional.ofNullable(host.environment().get(config.apiKeyEnv())).filter(k -> !k.isBlank());
    if (key.isEmpty()) {
      LOG.warn(
          "The OpenRouter tools have no key: {} is not set, so their calls will fail until it is",
          config.apiKeyEnv());
    }
    OutboundHttp http =
        host.own(
            OutboundHttp.start(OutboundPolicy.defaults().allowingHost(config.baseUrl().getHost())));
    List<ExecutableTool> tools = new OpenRouterTools(config, http, key).tools();
    host.registry().registerAll(tools);
    // Read-only account tools over the network: helpers and tasks, not synthesis.
    host.allowTools(tools, "subagent", "scheduled");
    host.guide(OpenRouterTools.GUIDE);
  }
}
