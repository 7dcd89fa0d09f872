package dev.toolhost.search;

import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolSpec;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A registry feed keeps the service index's agents, MCP servers, tool services and remote worker
 * groups in step with the tools of a registry, by tool source: {@code agent:{name}}, {@code
 * mcp:{server}}, {@code service:{id}} and {@code remote:{group}}.
 *
 * <p>A registered tool becomes a capability (its name and description) of the entry its source
 * names, creating the entry when none exists. Its summary is derived from its tools' descriptions
 * ({@link ServiceSummaries}) and follows them as tools come and go; a summary or tags that a feeder
 * put there (an MCP bridge's written summary, a model's) are kept. An agent's entry is summarised
 * by its one tool's description, the agent's own. An unregistered tool leaves its entry; an entry
 * left with no tools is removed, since nothing can be routed to it. Tools of any other source are
 * ignored, and so are the MCP bridge's own management tools ({@link #MCP_MANAGEMENT_SOURCE}): they
 * reach every server, so they are no server to route work to.
 *
 * <p>On {@link #attach} it takes in the tools already registered, then follows changes until {@link
 * #close}. Thread-safe: a registration racing the attach is taken in once.
 */
public final class RegistryFeed implements ToolRegistry.Listener, AutoCloseable {

  /** The source of the MCP bridge's management tools, which names no MCP server. */
  public static final String MCP_MANAGEMENT_SOURCE = "mcp:management";

  private final ToolRegistry registry;
  private final ServiceIndex services;

  private RegistryFeed(ToolRegistry registry, ServiceIndex services) {
    this.registry = Objects.requireNonNull(registry, "registry");
    this.services = Objects.requireNonNull(services, "services");
  }

  /** Starts feeding the index from the registry: its current tools, then every change. */
  public static RegistryFeed attach(ToolRegistry registry, ServiceIndex services) {
    RegistryFeed feed = new RegistryFeed(registry, services);
    registry.addListener(feed);
    for (ExecutableTool tool : registry.tools()) {
      feed.replay(tool);
    }
    return feed;
  }

  /** The kind and id of the entry a tool source names, if it names one. */
  static Optional<Owner> owner(String source) {
    int colon = source.indexOf(':');
    if (source.equals(MCP_MANAGEMENT_SOURCE) || colon <= 0 || colon == source.length() - 1) {
      return Optional.empty();
    }
    String id = source.substring(colon + 1);
    return switch (source.substring(0, colon)) {
      case "agent" -> Optional.of(new Owner(ServiceKind.AGENT, id));
      case "mcp" -> Optional.of(new Owner(ServiceKind.MCP_SERVER, id));
      case "service" -> Optional.of(new Owner(ServiceKind.TOOL_SERVICE, id));
      case "remote" -> Optional.of(new Owner(ServiceKind.WORKER_GROUP, id));
      default -> Optional.empty();
    };
  }

  @Override
  public void registered(ToolSpec spec) {
    owner(spec.source()).ifPresent(owner -> add(owner, spec));
  }

  @Override
  public void unregistered(ToolSpec spec) {
    owner(spec.source())
        .ifPresent(
            owner ->
                services.update(
                    owner.kind(),
                    owner.id(),
                    current ->
                        current
                            .map(
                                service ->
                                    resummarised(service, service.withoutCapability(spec.name())))
                            .filter(service -> !service.capabilities().isEmpty())));
  }

  /**
   * Updates the replaced tool's capability in place, so that an entry whose only tool changed keeps
   * its summary (a feeder's, say) instead of going and coming back. An agent's entry, which its one
   * tool describes, is rebuilt from the new tool.
   */
  @Override
  public void replaced(ToolSpec before, ToolSpec after) {
    Optional<Owner> owner = owner(after.source());
    if (owner.isEmpty()
        || !owner.equals(owner(before.source()))
        || owner.get().kind() == ServiceKind.AGENT) {
      ToolRegistry.Listener.super.replaced(before, after);
      return;
    }
    add(owner.get(), after);
  }

  /** Stops following the registry; the entries stay in the index. */
  @Override
  public void close() {
    registry.removeListener(this);
  }

  private void replay(ExecutableTool tool) {
    ToolSpec spec = tool.spec();
    owner(spec.source())
        .ifPresent(
            owner ->
                services.update(
                    owner.kind(),
                    owner.id(),
                    current -> {
                      // Checked under the index's write lock, which the unregistered event also
                      // takes: a tool removed before this point is not brought back.
                      if (registry.find(spec.name()).filter(t -> t == tool).isEmpty()) {
                        return current;
                      }
                      return Optional.of(withTool(current, owner, spec));
                    }));
  }

  private void add(Owner owner, ToolSpec spec) {
    services.update(
        owner.kind(), owner.id(), current -> Optional.of(withTool(current, owner, spec)));
  }

  private static KnownService withTool(Optional<KnownService> current, Owner owner, ToolSpec spec) {
    KnownService service =
        current.orElseGet(
            () ->
                new KnownService(
                    owner.id(),
                    owner.kind(),
                    // An agent's tool describes the agent itself.
                    owner.kind() == ServiceKind.AGENT
                        ? spec.description()
                        : ServiceSummaries.label(owner.kind(), owner.id()),
                    List.of(),
                    List.of()));
    return resummarised(
        service,
        service.withCapability(new KnownService.Capability(spec.name(), spec.description())));
  }

  // The changed entry with its summary derived again, when the one before was derived too.
  private static KnownService resummarised(KnownService before, KnownService after) {
    if (after.kind() == ServiceKind.AGENT || !ServiceSummaries.isDerived(before)) {
      return after;
    }
    return after.withSummary(
        ServiceSummaries.derive(after.kind(), after.id(), after.capabilities()));
  }

  /** The entry a tool source names. */
  record Owner(ServiceKind kind, String id) {}
}
