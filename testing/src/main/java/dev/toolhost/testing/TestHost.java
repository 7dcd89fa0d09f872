package dev.toolhost.testing;

import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.core.spi.HostExtensions;
import dev.toolhost.core.spi.Route;
import dev.toolhost.host.ConfigReader;
import dev.toolhost.host.HostConfig;
import dev.toolhost.host.HostRuntime;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * A test host is a started {@link HostRuntime} made from config text, for a test: the YAML goes in
 * as a file would hold it, is read by the same reader as {@code --config} (its problems placed at
 * line and column in {@code toolhost.yaml}), and a host with the given extensions (else the class
 * path's) and the given environment (else an empty one, never this process's) comes out started.
 *
 * <p>{@link #call} dispatches a call by tool name with JSON arguments under a profile through the
 * host's one dispatcher, as an agent would. Closing closes the host, and may be repeated. Not
 * thread-safe to build; the running host is as thread-safe as {@link HostRuntime}.
 */
public final class TestHost implements AutoCloseable {

  /** What the config text is called in the messages of its problems. */
  public static final String FILE_NAME = "toolhost.yaml";

  private final HostRuntime runtime;

  private TestHost(HostRuntime runtime) {
    this.runtime = runtime;
  }

  /** A builder of a test host; with no config text the host has the embedded defaults. */
  public static Builder builder() {
    return new Builder();
  }

  /** A started host of the given config text and extensions, with an empty environment. */
  public static TestHost start(String yaml, List<? extends HostExtension<?>> extensions) {
    return builder().config(yaml).extensions(extensions).start();
  }

  /**
   * Reads config text with the given extensions' sections, as {@code toolhost config check} does:
   * each extension's section checked against its schema and read by it, nothing started.
   *
   * @throws dev.toolhost.core.spi.ConfigException naming {@value #FILE_NAME}, line and column
   */
  public static HostConfig config(
      String yaml, List<? extends HostExtension<?>> extensions, Path directory) {
    return new ConfigReader(List.copyOf(extensions)).parse(yaml, FILE_NAME, directory);
  }

  /** The running host. */
  public HostRuntime runtime() {
    return runtime;
  }

  /** Dispatches a call of the named tool with JSON arguments under the {@code main} profile. */
  public ToolResult call(String tool, String arguments) {
    return call("main", tool, arguments);
  }

  /** Dispatches a call of the named tool with JSON arguments under the named profile. */
  public ToolResult call(String profile, String tool, String arguments) {
    return call(profile, ToolCall.of(tool, arguments));
  }

  /**
   * Dispatches the call under the named profile: for a call made for a user, in a session, by an
   * agent.
   */
  public ToolResult call(String profile, ToolCall call) {
    return runtime.dispatcher().dispatch(runtime.toolSet(profile), call);
  }

  /**
   * The answer of the extension route at that method and path to a request with that body, as the
   * HTTP front would pass it on once its guard let the request through.
   *
   * @throws IllegalArgumentException when no extension route serves that method and path
   */
  public Route.Answer request(String method, String path, String body) throws Exception {
    return request(method, path, Map.of(), body);
  }

  /**
   * The answer of the extension route at that method and path to a request with that query and
   * body, as the HTTP front would pass it on once its guard let the request through.
   *
   * @throws IllegalArgumentException when no extension route serves that method and path
   */
  public Route.Answer request(
      String method, String path, Map<String, List<String>> query, String body) throws Exception {
    Route route =
        runtime
            .route(method, path)
            .orElseThrow(
                () ->
                    new IllegalArgumentException(
                        "No extension route serves "
                            + method
                            + " "
                            + path
                            + "; the routes: "
                            + runtime.routeNames()));
    return route
        .handler()
        .answer(new Route.Request(method, path, query, body.getBytes(StandardCharsets.UTF_8)));
  }

  /** The names of the tools the named profile offers, sorted. */
  public List<String> toolNames(String profile) {
    return runtime.toolSet(profile).names().stream().sorted().toList();
  }

  /** Closes the host; a second close does nothing. */
  @Override
  public void close() {
    runtime.close();
  }

  /** A builder of a {@link TestHost}. */
  public static final class Builder {
    private String yaml = "";
    private Path directory = Path.of("");
    private Map<String, String> environment = Map.of();
    private Optional<List<HostExtension<?>>> extensions = Optional.empty();
    private final Map<Class<?>, Object> services = new LinkedHashMap<>();
    private Predicate<String> reserved = path -> false;

    private Builder() {}

    /** The config file's text. */
    public Builder config(String yaml) {
      this.yaml = Objects.requireNonNull(yaml, "yaml");
      return this;
    }

    /** The directory relative paths in the config are resolved against; the working one else. */
    public Builder directory(Path directory) {
      this.directory = Objects.requireNonNull(directory, "directory");
      return this;
    }

    /** The environment the host reads its secrets from; empty by default. */
    public Builder environment(Map<String, String> environment) {
      this.environment = Map.copyOf(environment);
      return this;
    }

    /** Exactly these extensions, in place of the class path's. */
    public Builder extensions(List<? extends HostExtension<?>> extensions) {
      this.extensions = Optional.of(new ArrayList<>(extensions));
      return this;
    }

    /** A service the host shares as if an extension provided it (a message bus, say). */
    public <T> Builder service(Class<T> type, T service) {
      services.put(type, Objects.requireNonNull(service, "service"));
      return this;
    }

    /** The paths a front would serve itself, where no extension may add a route. */
    public Builder reserved(Predicate<String> reserved) {
      this.reserved = Objects.requireNonNull(reserved, "reserved");
      return this;
    }

    /**
     * Reads the config and starts the host.
     *
     * @throws dev.toolhost.core.spi.ConfigException when the config is wrong
     * @throws dev.toolhost.core.spi.HostExtensionException when an extension fails to start
     */
    public TestHost start() {
      List<HostExtension<?>> chosen = extensions.orElseGet(HostExtensions::discovered);
      HostRuntime.Builder builder =
          HostRuntime.builder(TestHost.config(yaml, chosen, directory))
              .environment(environment)
              .reserved(reserved)
              .extensions(chosen);
      services.forEach((type, service) -> share(builder, type, service));
      return new TestHost(builder.build());
    }

    @SuppressWarnings("unchecked") // Each service was put with its own type.
    private static <T> void share(HostRuntime.Builder builder, Class<T> type, Object service) {
      builder.service(type, (T) service);
    }
  }
}
