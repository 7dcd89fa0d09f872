package dev.toolhost.search;

import dev.toolhost.core.spi.HostContext;
import dev.toolhost.core.spi.HostExtension;
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
public final class ServiceSearchExtension implements HostExtension {

  /** The extension's name. */
  public static final String NAME = "search";

  private RegistryFeed feed;

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public int order() {
    return 200;
  }

  /** None: the extension reads no section ({@code builtins.search} turns its tool off). */
  @Override
  public JsonNode configSchema() {
    return MissingNode.getInstance();
  }

  @Override
  public void start(HostContext host) {
    ServiceIndex index = new ServiceIndex();
    host.provide(ServiceIndex.class, index);
    if (host.builtin(NAME)) {
      host.registry().registerAll(index.tools());
      host.guide(ServiceIndex.GUIDE);
    }
    feed = RegistryFeed.attach(host.registry(), index);
  }

  @Override
  public void close() {
    feed.close();
  }
}
