package dev.toolhost.search;

import dev.toolhost.core.ApiError;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolSet;
import dev.toolhost.core.spi.HostCommand;
import dev.toolhost.core.spi.HostContext;
import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.core.spi.ReadyHost;
import dev.toolhost.core.spi.Route;
import dev.toolhost.core.spi.SectionReading;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.MissingNode;

/**
 * The service search extension is a host's index of the services it can route work to: it follows
 * the registry's MCP servers, tool services, remote worker groups and agents ({@link
 * RegistryFeed}), shares the index with the extensions after it as a {@link ServiceIndex} service
 * (agents take their context hints from it), answers {@code GET /v1/services/search} with it, and,
 * unless {@code builtins.search} is off, registers {@code search_known_services} (source {@code
 * builtin:search}) and its guide. It reads no config section of its own.
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

  /** The route of the same search over HTTP. */
  public static final String PATH = "/v1/services/search";

  // The host once ready: the route answers as a caller of a profile, so it needs the tool sets.
  private final AtomicReference<ReadyHost> ready = new AtomicReference<>();

  @Override
  public void start(HostContext host, Optional<Void> none) {
    ServiceIndex index = new ServiceIndex();
    host.provide(ServiceIndex.class, index);
    if (host.builtins().search()) {
      host.registry().registerAll(index.tools());
      // Finding a service is a helper's and a task's work; synthesis reads only what it was given.
      host.allowTools(index.tools(), "subagent", "scheduled");
      host.guide(ServiceIndex.GUIDE);
    }
    host.own(RegistryFeed.attach(host.registry(), index));
    host.route(new Route("GET", PATH, request -> search(index, request)));
  }

  @Override
  public void ready(ReadyHost host) {
    ready.set(host);
  }

  /**
   * {@code GET /v1/services/search?q=...&profile=...}: what {@code search_known_services} answers a
   * caller of the profile ({@code main} by default), so nothing the profile hides.
   */
  private Route.Answer search(ServiceIndex index, Route.Request request) {
    ReadyHost host = ready.get();
    if (host == null) {
      return Route.Answer.error(ApiError.UNAVAILABLE, "The host is still starting.");
    }
    String query = request.parameter("q").orElse("");
    if (query.isBlank()) {
      return Route.Answer.error(
          ApiError.INVALID_REQUEST,
          "The query parameter 'q' is required: keywords that describe the task, such as "
              + PATH
              + "?q=reschedule+meeting.");
    }
    List<String> profiles =
        host.service(ToolProfiles.class).map(ToolProfiles::names).orElse(List.of("main"));
    String profile = request.parameter("profile").orElse("main");
    if (profile.isBlank()) {
      return Route.Answer.error(
          ApiError.INVALID_REQUEST,
          "The query parameter 'profile' is empty: name a profile ("
              + String.join(", ", profiles)
              + "), or leave the parameter out for 'main'.");
    }
    ToolSet set;
    try {
      set = host.toolSet(profile);
    } catch (IllegalArgumentException e) {
      return Route.Answer.error(ApiError.PROFILE_NOT_FOUND, e.getMessage());
    }
    return Route.Answer.json(index.searchResults(query, name -> !set.hides(name)).toString());
  }
}
