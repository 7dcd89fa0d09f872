package dev.toolhost.host;

import dev.toolhost.core.CallRecorder;
import dev.toolhost.core.DispatchStage;
import dev.toolhost.core.Redactor;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolGuide;
import dev.toolhost.core.ToolGuides;
import dev.toolhost.core.ToolInterceptor;
import dev.toolhost.core.ToolProfile;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolSet;
import dev.toolhost.core.spi.Builtins;
import dev.toolhost.core.spi.ChildProcesses;
import dev.toolhost.core.spi.ConfigException;
import dev.toolhost.core.spi.ConfigProblems;
import dev.toolhost.core.spi.HostContext;
import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.core.spi.HostExtensions;
import dev.toolhost.core.spi.Mount;
import dev.toolhost.core.spi.ReadyHost;
import dev.toolhost.core.spi.Route;
import dev.toolhost.core.spi.RunningHost;
import dev.toolhost.core.spi.SectionReading;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.exporter.prometheus.PrometheusMetricReader;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.trace.SpanProcessor;
import io.prometheus.metrics.config.EscapingScheme;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;
import tools.jackson.databind.JsonNode;

/**
 * A host runtime is one running Toolhost without its HTTP front: a tool registry with the
 * configured built-ins, the named tool profiles, an OpenTelemetry SDK whose metrics Prometheus can
 * scrape, the host extensions that bring its capabilities, and the one dispatcher every call goes
 * through. The server's {@code Host} serves it over HTTP and as an MCP server; a command, a test or
 * an embedder uses it as it is.
 *
 * <p>Every capability is a host extension ({@link HostExtension}) in the module that owns it, found
 * on the class path by default. The runtime orders them by the contracts they provide and need,
 * starts each with its config, adding their tools, guides, interceptors, routes and profile rules;
 * composes the profiles and builds the dispatcher; tells them it is ready; and closes them in
 * reverse, also when one fails to start. What they share is found with {@link #service}.
 *
 * <p>Embedders and tests register their own tools on {@link #registry()} at any time. Tool sets are
 * built once per profile and shared: {@link #toolSet(String)} returns the same set each time.
 * Thread-safe; {@link #close()} stops the extensions and the telemetry and may be called more than
 * once.
 */
public final class HostRuntime implements RunningHost {

  private final HostConfig config;
  private final Optional<String> token;
  // The paths the front serves itself: no extension may add a route there.
  private final Predicate<String> reserved;
  private final ToolRegistry registry = new ToolRegistry();
  private final Optional<ToolGuides> guides;
  private final ToolProfiles profiles;
  private final Map<String, ToolSet> toolSets = new LinkedHashMap<>();
  private final PrometheusMetricReader metricReader;
  private final OpenTelemetrySdk openTelemetry;
  private final ToolDispatcher dispatcher;
  private final HostExtensions extensions;
  // What extensions share with those started after them, and with the host's users, by type.
  private final Map<Class<?>, Object> services = new ConcurrentHashMap<>();
  // The extensions' HTTP routes, by "METHOD path".
  private final Map<String, Route> routes = new ConcurrentHashMap<>();
  // The extensions' mounted servlets, in mounting order.
  private final List<Mount> mounts = new java.util.concurrent.CopyOnWriteArrayList<>();
  // Secrets the builder was given, by name, for the extensions that redact by value.
  private final Map<String, String> secretValues;
  // Secrets the extensions hold (the principals' tokens), by name, added as they start.
  private final Map<String, String> addedSecrets =
      java.util.Collections.synchronizedMap(new LinkedHashMap<>());
  // The tools the extensions grant the restricted built-in profiles, by profile name.
  private final Map<String, Set<String>> allowed = new LinkedHashMap<>();
  // The tools the extensions take from built-in profiles, by profile name.
  private final Map<String, Set<String>> denied = new LinkedHashMap<>();

  private boolean closed;

  private HostRuntime(Builder builder) {
    this.config = builder.config;
    this.token = config.http().bearerToken(builder.environment);
    this.reserved = builder.reserved;
    this.secretValues = Map.copyOf(builder.secrets);
    // Before any resource is made, so that a bad config leaks nothing.
    config.toolProfiles();
    if (config.builtins().guides()) {
      ToolGuides toolGuides = new ToolGuides();
      registry.registerAll(toolGuides.tools());
      // Reading a guide is for every role.
      ToolProfiles.RESTRICTED.forEach(
          profile ->
              allowed
                  .computeIfAbsent(profile.name(), name -> new LinkedHashSet<>())
                  .addAll(toolGuides.tools().stream().map(tool -> tool.spec().name()).toList()));
      this.guides = Optional.of(toolGuides);
    } else {
      this.guides = Optional.empty();
    }
    this.metricReader = PrometheusMetricReader.create();
    // An OTEL_* variable the SDK refuses throws here, with nothing open yet.
    this.openTelemetry =
        HostTelemetry.create(
            config.telemetry(),
            builder.environment,
            metricReader,
            builder.spanProcessors,
            () -> service(Redactor.class).orElse(Redactor.NONE));
    ToolDispatcher.Builder dispatch =
        ToolDispatcher.builder()
            .openTelemetry(openTelemetry)
            .recordContent(config.telemetry().recordContent());
    services.putAll(builder.services);
    services.put(OpenTelemetry.class, openTelemetry);
    // What a host killed before it could end its children left (browsers, stdio MCP servers).
    ChildProcesses.endOrphans();
    // Extensions start in their order; one that fails closes those before it, in reverse.
    try {
      this.extensions =
          HostExtensions.of(
              HostExtensions.ordered(builder.extensions(), Set.copyOf(services.keySet())),
              builder.configs);
    } catch (IllegalArgumentException e) {
      openTelemetry.close();
      throw new ConfigException(e.getMessage());
    }
    Set<Class<?>> provided = new HashSet<>();
    extensions.all().forEach(extension -> provided.addAll(extension.provides()));
    try {
      extensions.start(
          new HostExtensions.Host() {
            @Override
            public HostContext context(HostExtension<?> extension, HostExtensions.Owned owned) {
              return new ExtensionContext(
                  extension, owned, provided, dispatch, builder.environment);
            }

            @Override
            public Optional<JsonNode> section(String name) {
              return config.sections().containsKey(name)
                  ? Optional.of(config.section(name))
                  : Optional.empty();
            }
          });
      // The built-in profiles with the extensions' rules, then the user's composed onto them.
      this.profiles = config.toolProfiles(ToolProfiles.withRules(allowed, denied));
    } catch (RuntimeException | Error e) {
      extensions.close();
      openTelemetry.close();
      throw e;
    }
    services.put(ToolProfiles.class, profiles);
    for (ToolProfile profile : profiles.all()) {
      toolSets.put(profile.name(), ToolSet.of(registry, profile));
    }
    this.dispatcher = dispatch.build();
    try {
      extensions.ready(new Ready());
    } catch (RuntimeException | Error e) {
      // The extensions closed themselves; the telemetry goes with them.
      openTelemetry.close();
      throw e;
    }
  }

  /** The extensions this host runs, in their start order. */
  public List<HostExtension<?>> extensions() {
    return extensions.all();
  }

  /**
   * The extension route of that method and path, if an extension added one: an exact route, else a
   * template that matches the path.
   */
  public Optional<Route> route(String method, String path) {
    Route exact = routes.get(method + " " + path);
    if (exact != null) {
      return Optional.of(exact);
    }
    return routes.values().stream()
        .filter(route -> route.templated() && route.method().equals(method) && route.matches(path))
        .findFirst();
  }

  /** The extension routes, as {@code METHOD path}, sorted: for a 404 that lists the routes. */
  public List<String> routeNames() {
    return routes.keySet().stream().sorted().toList();
  }

  /** The methods of the extension routes at that path, for a 405's {@code Allow}. */
  public List<String> routeMethods(String path) {
    return routes.values().stream()
        .filter(route -> route.matches(path))
        .map(Route::method)
        .distinct()
        .sorted()
        .toList();
  }

  /** The servlets extensions mounted, for an HTTP front to serve, in mounting order. */
  public List<Mount> mounts() {
    return List.copyOf(mounts);
  }

  /**
   * The service of that type the host shares: the {@code WorkingMemory}, {@code ServiceIndex},
   * {@code McpBridge} or {@code Agents} of the extensions that provide them, the {@link
   * ToolProfiles}, the {@link OpenTelemetry}, or one given to the builder.
   */
  public <T> Optional<T> service(Class<T> type) {
    return Optional.ofNullable(services.get(type)).map(type::cast);
  }

  /** What a starting extension sees of this host. */
  private final class ExtensionContext implements HostContext {
    private final HostExtension<?> extension;
    private final HostExtensions.Owned owned;
    // The contracts some extension of this host provides: those need declaring to be looked up.
    private final Set<Class<?>> provided;
    private final ToolDispatcher.Builder dispatch;
    private final Map<String, String> environment;

    ExtensionContext(
        HostExtension<?> extension,
        HostExtensions.Owned owned,
        Set<Class<?>> provided,
        ToolDispatcher.Builder dispatch,
        Map<String, String> environment) {
      this.extension = extension;
      this.owned = owned;
      this.provided = provided;
      this.dispatch = dispatch;
      this.environment = environment;
    }

    @Override
    public ToolRegistry registry() {
      return registry;
    }

    @Override
    public void guide(ToolGuide guide) {
      guides.ifPresent(all -> all.add(guide));
    }

    @Override
    public Optional<ToolGuides> guides() {
      return guides;
    }

    @Override
    public void interceptor(DispatchStage stage, ToolInterceptor interceptor) {
      dispatch.interceptor(stage, interceptor);
    }

    @Override
    public void route(Route route) {
      String key = route.method() + " " + route.path();
      if (reserved.test(route.path())
          || mounts.stream().anyMatch(mount -> mount.covers(route.path()))
          || routes.putIfAbsent(key, route) != null) {
        throw new IllegalArgumentException(
            "Host extension '"
                + extension.name()
                + "' adds the route "
                + key
                + ", which the host already serves.");
      }
    }

    @Override
    public synchronized void mount(Mount mount) {
      String path = mount.path();
      boolean taken =
          reserved.test(path)
              || mounts.stream().anyMatch(other -> other.covers(path) || mount.covers(other.path()))
              || routes.values().stream().anyMatch(route -> mount.covers(route.path()));
      if (taken) {
        throw new IllegalArgumentException(
            "Host extension '"
                + extension.name()
                + "' mounts a servlet at "
                + path
                + ", where the host already serves a path.");
      }
      mounts.add(mount);
    }

    @Override
    public Builtins builtins() {
      return config.builtins();
    }

    @Override
    public void allowTools(String profile, String... tools) {
      if (ToolProfiles.RESTRICTED.stream().noneMatch(builtIn -> builtIn.name().equals(profile))) {
        throw new IllegalArgumentException(
            "Host extension '"
                + extension.name()
                + "' grants tools to '"
                + profile
                + "', which is not a restricted built-in profile (subagent, scheduled,"
                + " a2a_synthesis).");
      }
      allowed.computeIfAbsent(profile, name -> new LinkedHashSet<>()).addAll(List.of(tools));
    }

    @Override
    public void denyTools(String profile, String... tools) {
      if (ToolProfiles.BUILT_IN.stream().noneMatch(builtIn -> builtIn.name().equals(profile))) {
        throw new IllegalArgumentException(
            "Host extension '"
                + extension.name()
                + "' denies tools to '"
                + profile
                + "', which is not a built-in profile.");
      }
      denied.computeIfAbsent(profile, name -> new LinkedHashSet<>()).addAll(List.of(tools));
    }

    @Override
    public SectionReading reading() {
      List<String> names = new ArrayList<>();
      ToolProfiles.BUILT_IN.forEach(profile -> names.add(profile.name()));
      config.profiles().stream()
          .map(HostConfig.Profile::name)
          .filter(name -> !names.contains(name))
          .sorted()
          .forEach(names::add);
      return new SectionReading(ConfigProblems.unplaced(), config.directory(), names);
    }

    @Override
    public Map<String, String> environment() {
      return environment;
    }

    @Override
    public Map<String, String> secrets() {
      Map<String, String> secrets = new LinkedHashMap<>(secretValues);
      token.ifPresent(value -> secrets.put("http.token", value));
      secrets.putAll(addedSecrets);
      return secrets;
    }

    @Override
    public void secret(String name, String value) {
      addedSecrets.put(
          Objects.requireNonNull(name, "name"), Objects.requireNonNull(value, "value"));
    }

    @Override
    public void recorder(CallRecorder recorder) {
      dispatch.recorder(recorder);
    }

    @Override
    public <T> void provide(Class<T> type, T service) {
      if (!extension.provides().contains(type)) {
        throw new IllegalArgumentException(
            "Host extension '"
                + extension.name()
                + "' shares "
                + type.getSimpleName()
                + " but does not declare it among what it provides().");
      }
      share(type, service, "Host extension '" + extension.name() + "'");
    }

    @Override
    public <T> Optional<T> service(Class<T> type) {
      if (provided.contains(type)
          && !extension.requires().contains(type)
          && !extension.uses().contains(type)
          && !extension.provides().contains(type)) {
        throw new IllegalArgumentException(
            "Host extension '"
                + extension.name()
                + "' looks up "
                + type.getSimpleName()
                + " but declares it neither in requires() nor in uses(), so nothing orders it"
                + " after the extension that provides it.");
      }
      return HostRuntime.this.service(type);
    }

    @Override
    public <T extends AutoCloseable> T own(T resource) {
      return owned.add(resource);
    }
  }

  /** The host as extensions see it once it is ready. */
  private final class Ready implements ReadyHost {
    @Override
    public ToolRegistry registry() {
      return registry;
    }

    @Override
    public ToolDispatcher dispatcher() {
      return dispatcher;
    }

    @Override
    public ToolSet toolSet(String profile) {
      return HostRuntime.this.toolSet(profile);
    }

    @Override
    public List<String> profiles() {
      return HostRuntime.this.profiles.names();
    }

    @Override
    public <T> void provide(Class<T> type, T service) {
      share(type, service, "An extension told the host is ready");
    }

    @Override
    public <T> Optional<T> service(Class<T> type) {
      return HostRuntime.this.service(type);
    }
  }

  private <T> void share(Class<T> type, T service, String by) {
    if (services.putIfAbsent(type, Objects.requireNonNull(service, "service")) != null) {
      throw new IllegalArgumentException(
          by + " shares a " + type.getName() + ", which another already shares.");
    }
  }

  /** A builder of a host runtime from the given config. */
  public static Builder builder(HostConfig config) {
    return new Builder(config);
  }

  /** The config this host was built from. */
  public HostConfig config() {
    return config;
  }

  /** The registry of every tool this host can run; register your own tools here. */
  public ToolRegistry registry() {
    return registry;
  }

  /** The guides served by the built-in guide tools, when they are enabled; add your own here. */
  public Optional<ToolGuides> guides() {
    return guides;
  }

  /** The built-in and user profiles. */
  public ToolProfiles profiles() {
    return profiles;
  }

  /**
   * Returns the host's shared tool set for the named profile.
   *
   * @throws IllegalArgumentException naming the unknown profile and the known ones
   */
  public ToolSet toolSet(String profileName) {
    ToolSet set = toolSets.get(profileName);
    if (set == null) {
      throw new IllegalArgumentException(
          "Unknown tool profile '"
              + profileName
              + "'. Known profiles: "
              + String.join(", ", profiles.names())
              + ".");
    }
    return set;
  }

  /** The dispatcher every call on this host goes through. */
  public ToolDispatcher dispatcher() {
    return dispatcher;
  }

  /** The OpenTelemetry the dispatcher traces and measures with. */
  public OpenTelemetry openTelemetry() {
    return openTelemetry;
  }

  /** The host's metrics in Prometheus text format (version 0.0.4). */
  public String metricsText() {
    ByteArrayOutputStream text = new ByteArrayOutputStream();
    try {
      PrometheusTextFormatWriter.create()
          .write(text, metricReader.collect(), EscapingScheme.UNDERSCORE_ESCAPING);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return text.toString(StandardCharsets.UTF_8);
  }

  /** Stops the extensions, in reverse of their start, and the telemetry. */
  @Override
  public void close() {
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
    }
    extensions.close();
    openTelemetry.close();
  }

  /** A builder of a {@link HostRuntime}. */
  public static final class Builder {
    private final HostConfig config;
    private Map<String, String> environment = System.getenv();
    private final List<SpanProcessor> spanProcessors = new ArrayList<>();
    private Predicate<String> reserved = path -> false;
    // By name, in the order given: the class path's first, then those added.
    private final Map<String, HostExtension<?>> extensions = new LinkedHashMap<>();
    // The configs made in code, by extension name: each typed by its extension when added.
    private final Map<String, Object> configs = new LinkedHashMap<>();
    private final Map<Class<?>, Object> services = new LinkedHashMap<>();
    private final Map<String, String> secrets = new LinkedHashMap<>();

    private Builder(HostConfig config) {
      this.config = Objects.requireNonNull(config, "config");
      HostExtensions.discovered().forEach(this::extension);
    }

    /**
     * The environment the token variable and the {@code OTEL_*} variables are read from; this
     * process's by default. The OpenTelemetry SDK also reads this process's own {@code OTEL_*}
     * variables; those of the given environment win over them.
     */
    public Builder environment(Map<String, String> environment) {
      this.environment = Map.copyOf(environment);
      return this;
    }

    /** The paths the host's front serves itself, where no extension may add a route. */
    public Builder reserved(Predicate<String> reserved) {
      this.reserved = Objects.requireNonNull(reserved, "reserved");
      return this;
    }

    /**
     * Adds a host extension, in place of one of the same name (one found on the class path, say, to
     * give it a resolver or a clock); it reads its section of the config. Extensions start after
     * those whose contracts they require or use, otherwise in the order added, and close in
     * reverse.
     */
    public Builder extension(HostExtension<?> extension) {
      Objects.requireNonNull(extension, "extension");
      extensions.remove(extension.name());
      configs.remove(extension.name());
      extensions.put(extension.name(), extension);
      return this;
    }

    /**
     * Adds a host extension with its config made in code, in place of one of the same name and of
     * its section in the config: the one way to configure an extension without a file.
     */
    public <C> Builder extension(HostExtension<C> extension, C config) {
      extension(extension);
      configs.put(extension.name(), Objects.requireNonNull(config, "config"));
      return this;
    }

    /**
     * Sets the host's extensions to exactly the given ones, in place of those found on the class
     * path; an empty list gives a host with no capability but its built-in guides.
     */
    public Builder extensions(List<? extends HostExtension<?>> extensions) {
      this.extensions.clear();
      this.configs.clear();
      extensions.forEach(this::extension);
      return this;
    }

    /**
     * Shares a service with the extensions, as if an extension had provided it before the first
     * starts: a {@code MessageBus} for the tool services extension, say. The host does not close
     * it; whoever made it closes it after the host.
     */
    public <T> Builder service(Class<T> type, T service) {
      services.put(
          Objects.requireNonNull(type, "type"), Objects.requireNonNull(service, "service"));
      return this;
    }

    /**
     * A secret the host holds besides its token (a bus password, say), given to the extensions that
     * redact secrets by value ({@link HostContext#secrets()}).
     */
    public Builder secret(String name, String value) {
      secrets.put(Objects.requireNonNull(name, "name"), Objects.requireNonNull(value, "value"));
      return this;
    }

    /** The extensions, in the order given. */
    public List<HostExtension<?>> extensions() {
      return List.copyOf(extensions.values());
    }

    /** Adds a processor for the host's spans, to export them; none by default. */
    public Builder spanProcessor(SpanProcessor spanProcessor) {
      spanProcessors.add(Objects.requireNonNull(spanProcessor, "spanProcessor"));
      return this;
    }

    /**
     * Builds the host, not yet started.
     *
     * @throws ConfigException when the config's profiles cannot be composed, or an extension's
     *     section is wrong or names something it cannot reach (a Redis working memory, say)
     * @throws dev.toolhost.core.spi.HostExtensionException when an extension fails to start
     */
    public HostRuntime build() {
      return new HostRuntime(this);
    }
  }
}
