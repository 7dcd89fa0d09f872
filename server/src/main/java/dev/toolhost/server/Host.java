package dev.toolhost.server;

import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolGuides;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolSet;
import dev.toolhost.core.spi.Authenticator;
import dev.toolhost.core.spi.ConfigException;
import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.core.spi.Route;
import dev.toolhost.core.spi.RunningHost;
import dev.toolhost.host.HostConfig;
import dev.toolhost.host.HostRuntime;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.sdk.trace.SpanProcessor;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A host is one running Toolhost served over HTTP: a {@link HostRuntime} (the extensions, the
 * registry, the profiles, the one dispatcher, the telemetry) and, once {@link #start() started},
 * its front: Jetty with the request guard in front of the HTTP API, {@code /metrics}, the
 * extensions' routes and the MCP gateway.
 *
 * <p>Secure by default: it binds 127.0.0.1 unless told otherwise and refuses to bind any address
 * that is not loopback without a bearer token. The token is never logged or shown. Thread-safe;
 * {@link #close()} stops the listener, then the runtime, and may be called more than once.
 */
public final class Host implements RunningHost {

  private static final Logger LOG = LoggerFactory.getLogger(Host.class);

  /** How long a client may take to send a request's line and headers, by default. */
  public static final Duration DEFAULT_HEADER_TIMEOUT = Duration.ofSeconds(10);

  /** The name of the thread pool that accepts HTTP connections; request handlers are virtual. */
  static final String THREAD_POOL_NAME = "toolhost-http";

  private final HostRuntime runtime;
  private final Optional<String> token;
  private final Duration headerTimeout;
  private final ApiJson json = new ApiJson();

  private Server server;
  private ServerConnector connector;
  private ExecutorService requestThreads;
  private boolean closed;

  /**
   * A host built from the given config with the extensions on the class path, reading the token
   * from this process's environment where the config says so.
   *
   * @throws ConfigException when the config's profiles cannot be composed, or an extension's
   *     section is wrong or names something it cannot reach (a Redis working memory, say)
   */
  public Host(HostConfig config) {
    this(builder(config));
  }

  private Host(Builder builder) {
    this.token = builder.config.http().bearerToken(builder.environment);
    this.headerTimeout = builder.headerTimeout;
    this.runtime = builder.runtime.build();
  }

  /** A builder of a host from the given config. */
  public static Builder builder(HostConfig config) {
    return new Builder(config);
  }

  /** The runtime this host serves. */
  public HostRuntime runtime() {
    return runtime;
  }

  /** The config this host was built from. */
  public HostConfig config() {
    return runtime.config();
  }

  /** The extensions this host runs, in their start order. */
  public List<HostExtension<?>> extensions() {
    return runtime.extensions();
  }

  @Override
  public ToolRegistry registry() {
    return runtime.registry();
  }

  /** The guides served by the built-in guide tools, when they are enabled; add your own here. */
  public Optional<ToolGuides> guides() {
    return runtime.guides();
  }

  /** The built-in and user profiles. */
  public ToolProfiles profiles() {
    return runtime.profiles();
  }

  @Override
  public ToolSet toolSet(String profileName) {
    return runtime.toolSet(profileName);
  }

  @Override
  public ToolDispatcher dispatcher() {
    return runtime.dispatcher();
  }

  /** The OpenTelemetry the dispatcher traces and measures with. */
  public OpenTelemetry openTelemetry() {
    return runtime.openTelemetry();
  }

  @Override
  public <T> Optional<T> service(Class<T> type) {
    return runtime.service(type);
  }

  /** The extension route of that method and path, if an extension added one. */
  Optional<Route> route(String method, String path) {
    return runtime.route(method, path);
  }

  /** The extension routes, as {@code METHOD path}, sorted: for a 404 that lists the routes. */
  List<String> routeNames() {
    return runtime.routeNames();
  }

  /** The methods of the extension routes at that path, for a 405's {@code Allow}. */
  List<String> routeMethods(String path) {
    return runtime.routeMethods(path);
  }

  /** Whether callers must send a bearer token. */
  public boolean requiresToken() {
    return token.isPresent();
  }

  /**
   * Starts serving the HTTP API on the configured host and port.
   *
   * @return the address it listens on, such as {@code http://127.0.0.1:8080/}
   * @throws ConfigException when the address is not loopback and no token is set, or the host name
   *     does not resolve
   * @throws UncheckedIOException when the address cannot be bound (a port in use, say)
   * @throws IllegalStateException when the host was already started or is closed
   */
  public synchronized URI start() {
    if (closed) {
      throw new IllegalStateException("The host is closed.");
    }
    if (server != null) {
      throw new IllegalStateException("The host is already started, on " + uri() + ".");
    }
    String host = config().http().host();
    if (token.isEmpty() && runtime.service(Authenticator.class).isEmpty() && !isLoopback(host)) {
      throw new ConfigException(
          "Refusing to listen on "
              + host
              + " without a bearer token: an address other than loopback needs one. Set"
              + " http.token_env (the environment variable "
              + config().http().tokenEnv()
              + " by default) or http.token, or principals in the auth: section, or listen on"
              + " 127.0.0.1.");
    }
    QueuedThreadPool threads = new QueuedThreadPool();
    threads.setName(THREAD_POOL_NAME);
    ExecutorService virtualThreads =
        Executors.newThreadPerTaskExecutor(
            Thread.ofVirtual().name(THREAD_POOL_NAME + "-request-", 0).factory());
    threads.setVirtualThreadsExecutor(virtualThreads);
    Server jetty = new Server(threads);
    // Jetty's own rejections (a malformed request line, headers too large) answer in JSON too.
    jetty.setErrorHandler(new JsonErrorHandler());
    HttpConfiguration http = new HttpConfiguration();
    http.setSendServerVersion(false);
    http.setSendXPoweredBy(false);
    ServerConnector listener = new ServerConnector(jetty, new HttpConnectionFactory(http));
    listener.setHost(host);
    listener.setPort(config().http().port());
    // A client that trickles a request's headers is cut off, not waited on (slowloris).
    listener.addEventListener(new HeaderTimeout(headerTimeout, listener.getScheduler()));
    jetty.addConnector(listener);
    MountHandler mounts = new MountHandler(runtime.mounts());
    // Telemetry outermost, so that every request is traced and measured, refused ones included;
    // then the one guard every route is behind.
    jetty.setHandler(
        new HttpTelemetry(
            runtime.openTelemetry(),
            runtime.mounts(),
            new RequestGuard(
                config().http(),
                token,
                runtime.service(Authenticator.class),
                new Handler.Sequence(mounts, new ApiHandler(this, json)))));
    try {
      jetty.start();
    } catch (Exception e) {
      stopQuietly(jetty);
      virtualThreads.shutdownNow();
      Throwable cause = e.getCause() != null ? e.getCause() : e;
      boolean inUse =
          cause instanceof java.net.BindException
              || String.valueOf(cause.getMessage()).contains("in use");
      throw new UncheckedIOException(
          "Cannot listen on "
              + host
              + ":"
              + config().http().port()
              + ": "
              + cause.getMessage()
              + (inUse
                  ? " (another process holds the port: stop it, choose another with --port N or"
                      + " http.port, or let the system pick a free one with --port 0)"
                  : ""),
          e instanceof IOException io ? io : new IOException(e));
    }
    this.server = jetty;
    this.connector = listener;
    this.requestThreads = virtualThreads;
    LOG.info(
        "Toolhost listening on {} ({})",
        uri(),
        token.isPresent() || runtime.service(Authenticator.class).isPresent()
            ? "bearer token required"
            : "no token");
    return uri();
  }

  /**
   * The port the HTTP API listens on; the port picked when the config says 0.
   *
   * @throws IllegalStateException when the host is not started
   */
  public synchronized int port() {
    if (connector == null) {
      throw new IllegalStateException("The host is not started.");
    }
    return connector.getLocalPort();
  }

  /**
   * The address the HTTP API listens on, such as {@code http://127.0.0.1:8080/}.
   *
   * @throws IllegalStateException when the host is not started
   */
  public synchronized URI uri() {
    String host = config().http().host();
    String authority = host.contains(":") ? "[" + host + "]" : host;
    return URI.create("http://" + authority + ":" + port() + "/");
  }

  /** The host's metrics in Prometheus text format (version 0.0.4). */
  String metricsText() {
    return runtime.metricsText();
  }

  /** Stops the HTTP API, if started, and the telemetry. */
  @Override
  public void close() {
    Server jetty;
    ExecutorService virtualThreads;
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      jetty = server;
      virtualThreads = requestThreads;
    }
    if (jetty != null) {
      stopQuietly(jetty);
      // Interrupts handlers still waiting on a tool: their calls answer "cancelled".
      virtualThreads.shutdownNow();
      LOG.info("Toolhost stopped");
    }
    runtime.close();
  }

  private static void stopQuietly(Server jetty) {
    try {
      jetty.stop();
    } catch (Exception e) {
      LOG.warn("Stopping the HTTP listener failed", e);
    }
  }

  private static boolean isLoopback(String host) {
    InetAddress[] addresses;
    try {
      addresses = InetAddress.getAllByName(host);
    } catch (UnknownHostException e) {
      throw new ConfigException(
          "Cannot listen on '" + host + "': the host name does not resolve (http.host).");
    }
    for (InetAddress address : addresses) {
      if (!address.isLoopbackAddress()) {
        return false;
      }
    }
    return true;
  }

  /** A builder of a {@link Host}: its runtime's, and the front's header timeout. */
  public static final class Builder {
    private final HostConfig config;
    private final HostRuntime.Builder runtime;
    private Map<String, String> environment = System.getenv();
    private Duration headerTimeout = DEFAULT_HEADER_TIMEOUT;

    private Builder(HostConfig config) {
      this.config = config;
      this.runtime = HostRuntime.builder(config).reserved(ApiHandler::reserved);
    }

    /**
     * The environment the token variable and the {@code OTEL_*} variables are read from; this
     * process's by default.
     */
    public Builder environment(Map<String, String> environment) {
      this.environment = Map.copyOf(environment);
      runtime.environment(environment);
      return this;
    }

    /**
     * How long a client may take to send one request's line and headers before its connection is
     * closed; {@link #DEFAULT_HEADER_TIMEOUT} by default.
     */
    public Builder headerTimeout(Duration headerTimeout) {
      if (headerTimeout.isNegative() || headerTimeout.isZero()) {
        throw new IllegalArgumentException("The header timeout must be positive: " + headerTimeout);
      }
      this.headerTimeout = headerTimeout;
      return this;
    }

    /** See {@link HostRuntime.Builder#extension(HostExtension)}. */
    public Builder extension(HostExtension<?> extension) {
      runtime.extension(extension);
      return this;
    }

    /** See {@link HostRuntime.Builder#extension(HostExtension, Object)}. */
    public <C> Builder extension(HostExtension<C> extension, C section) {
      runtime.extension(extension, section);
      return this;
    }

    /** See {@link HostRuntime.Builder#extensions(List)}. */
    public Builder extensions(List<? extends HostExtension<?>> extensions) {
      runtime.extensions(extensions);
      return this;
    }

    /** See {@link HostRuntime.Builder#service(Class, Object)}. */
    public <T> Builder service(Class<T> type, T service) {
      runtime.service(type, service);
      return this;
    }

    /** See {@link HostRuntime.Builder#secret(String, String)}. */
    public Builder secret(String name, String value) {
      runtime.secret(name, value);
      return this;
    }

    /** See {@link HostRuntime.Builder#spanProcessor(SpanProcessor)}. */
    public Builder spanProcessor(SpanProcessor spanProcessor) {
      runtime.spanProcessor(spanProcessor);
      return this;
    }

    /**
     * Builds the host, not yet started.
     *
     * @throws ConfigException when the config's profiles cannot be composed, or an extension's
     *     section is wrong or names something it cannot reach (a Redis working memory, say)
     * @throws dev.toolhost.core.spi.HostExtensionException when an extension fails to start
     */
    public Host build() {
      return new Host(this);
    }
  }
}
