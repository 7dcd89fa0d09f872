package dev.toolhost.search;

import dev.toolhost.core.spi.HostCommand;
import dev.toolhost.core.spi.HostContext;
import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.core.spi.SectionReading;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.MissingNode;

/**
 * The service search extension is a host's index of the services it can route work to: it follows
 * the registry's MCP servers, tool services, remote worker groups and agents ({@link
 * RegistryFeed}), shares the index with the extensions after it as a {@link ServiceIndex} service
 * (agents take their context hints from it; the HTTP API answers {@code GET /v1/services/search}
 * from it), and, unless {@code builtins.search} is off, registers {@code search_known_services}
 * (source {@code builtin:search}) and its guide. It reads no config section of its own.
 */
public final class ServiceSearchExtension implements HostExtension<Void> {

  /** The extension's name. */
  public static final String NAME = "search";

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public Set<Class<?>> provides() {
    return Set.of(ServiceIndex.class);
  }

  /** None: the extension reads no section ({@code builtins.search} turns its tool off). */
  @Override
  public JsonNode configSchema() {
    return MissingNode.getInstance();
  }

  /** {@code toolhost search QUERY}: the index's answer, in-process from the config. */
  @Override
  public List<HostCommand> commands() {
    return List.of(SearchCommand::new);
  }

  /** Never called: there is no section to read. */
  @Override
  public Void read(JsonNode section, SectionReading reading) {
    return null;
  }

  @Override
  public void start(HostContext host, Optional<Void> none) {
    ServiceIndex index = new ServiceIndex();
    host.provide(ServiceIndex.class, index);
    if (host.builtins().search()) {
      host.registry().registerAll(index.tools());
      host.guide(ServiceIndex.GUIDE);
    }
    host.own(RegistryFeed.attach(host.registry(), index));
  }
}
