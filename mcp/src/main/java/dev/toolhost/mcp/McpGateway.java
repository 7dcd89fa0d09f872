package dev.toolhost.mcp;

import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolProgress;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import dev.toolhost.core.ToolSpec;
import dev.toolhost.core.TraceContext;
import dev.toolhost.core.spi.Principal;
import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.server.McpAsyncServer;
import io.modelcontextprotocol.server.McpAsyncServerExchange;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpServerFeatures;
import io.modelcontextprotocol.server.transport.DefaultServerTransportSecurityValidator;
import io.modelcontextprotocol.server.transport.HttpServletStreamableServerTransportProvider;
import io.modelcontextprotocol.server.transport.ServerHttpHeaderValidator;
import io.modelcontextprotocol.server.transport.StdioServerTransportProvider;
import io.modelcontextprotocol.spec.McpSchema;
import io.opentelemetry.context.Scope;
import jakarta.servlet.http.HttpServlet;
import java.io.InputStream;
import java.io.OutputStream;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import tools.jackson.databind.json.JsonMapper;

/**
 * The MCP gateway serves one tool set of a host as an MCP server: its tools are listed with their
 * schemas and annotations, and every call goes through the host's one {@link ToolDispatcher}, so
 * validation, deadlines and metrics apply.
 *
 * <p>Tool failures and argument validation failures are {@code isError} results with the error code
 * in {@code _meta["toolhost/error"]}, never protocol errors. When the registry changes, the served
 * list follows and clients are sent {@code notifications/tools/list_changed}. Calls run on virtual
 * threads, many at once. Over HTTP it checks the {@code Host} and {@code Origin} headers against
 * the allowed lists (DNS-rebinding protection); authentication is the embedder's (the server checks
 * the bearer token before the servlet). Over HTTP and over stdio a client's {@code
 * notifications/cancelled} cancels the call it names ({@link GatewayCalls}): the tool's thread is
 * interrupted and the call answers {@code cancelled}. Over HTTP its event streams resume ({@link
 * GatewayStreams}): each event has an id, and a client whose connection dropped mid-call sends a
 * GET with {@code Last-Event-ID} and gets the events it missed and the call's answer. {@link
 * #close()} stops serving.
 */
public final class McpGateway implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(McpGateway.class);
  private static final JsonMapper MAPPER = JsonMapper.shared();
  private static final String VERSION = "0.1.0";
  // The key of a request's principal in the SDK's transport context.
  private static final String PRINCIPAL = "toolhost/principal";

  private final ToolRegistry registry;
  private final ToolSet tools;
  private final ToolDispatcher dispatcher;
  private final ExecutorService threads;
  private final Scheduler scheduler;
  private final ToolRegistry.Listener listener;
  private final Map<String, ToolSpec> served = new HashMap<>();
  private final Optional<HttpServlet> servlet;
  private final GatewayCalls calls;
  private final Optional<GatewayStreams> streams;
  private McpAsyncServer server;

  private McpGateway(
      ToolRegistry registry,
      ToolSet tools,
      ToolDispatcher dispatcher,
      Optional<HttpServlet> servlet,
      GatewayCalls calls,
      Optional<GatewayStreams> streams) {
    this.streams = streams;
    this.registry = Objects.requireNonNull(registry, "registry");
    this.tools = Objects.requireNonNull(tools, "tools");
    this.dispatcher = Objects.requireNonNull(dispatcher, "dispatcher");
    this.servlet = servlet;
    this.calls = calls;
    this.threads =
        Executors.newThreadPerTaskExecutor(
            Thread.ofVirtual().name("toolhost-mcp-gateway-", 0).factory());
    this.scheduler = Schedulers.fromExecutorService(threads, "toolhost-mcp-gateway");
    this.listener =
        new ToolRegistry.Listener() {
          @Override
          public void registered(ToolSpec spec) {
            refresh();
          }

          @Override
          public void unregistered(ToolSpec spec) {
            refresh();
          }

          @Override
          public void replaced(ToolSpec before, ToolSpec after) {
            refresh();
          }
        };
  }

  /**
   * Serves the tool set over stdio: MCP messages on the given streams (the process's standard input
   * and output for {@code toolhost mcp}). Nothing else may write to that output.
   */
  public static McpGateway stdio(
      ToolRegistry registry,
      ToolSet tools,
      ToolDispatcher dispatcher,
      InputStream in,
      OutputStream out) {
    GatewayCalls calls = new GatewayCalls();
    McpGateway gateway =
        new McpGateway(registry, tools, dispatcher, Optional.empty(), calls, Optional.empty());
    gateway.serve(
        McpServer.async(
            new SerialServerTransportProvider(
                new StdioServerTransportProvider(McpConnection.JSON, calls.stdin(in), out))));
    return gateway;
  }

  /**
   * Serves the tool set over Streamable HTTP at the given endpoint path (such as {@code
   * /mcp/main}), with the default {@link Sessions} limits; mount {@link #servlet()} at exactly that
   * path.
   *
   * @param allowedHosts {@code Host} header values accepted, such as {@code 127.0.0.1:*}
   * @param allowedOrigins {@code Origin} header values accepted when a request has one
   */
  public static McpGateway http(
      ToolRegistry registry,
      ToolSet tools,
      ToolDispatcher dispatcher,
      String endpoint,
      List<String> allowedHosts,
      List<String> allowedOrigins) {
    return http(
        registry, tools, dispatcher, endpoint, allowedHosts, allowedOrigins, Sessions.defaults());
  }

  /**
   * Serves the tool set over Streamable HTTP at the given endpoint path (such as {@code
   * /mcp/main}), holding sessions within the given limits; mount {@link #servlet()} at exactly that
   * path.
   *
   * @param allowedHosts {@code Host} header values accepted, such as {@code 127.0.0.1:*}
   * @param allowedOrigins {@code Origin} header values accepted when a request has one
   * @param sessions how long an idle session is kept and how many are held at most
   */
  public static McpGateway http(
      ToolRegistry registry,
      ToolSet tools,
      ToolDispatcher dispatcher,
      String endpoint,
      List<String> allowedHosts,
      List<String> allowedOrigins,
      Sessions sessions) {
    return http(
        registry,
        tools,
        dispatcher,
        endpoint,
        allowedHosts,
        allowedOrigins,
        sessions,
        GatewayStreams.Window.defaults());
  }

  /**
   * Serves the tool set over Streamable HTTP at the given endpoint path, holding sessions within
   * the given limits, with no {@code Host} or {@code Origin} check of its own: for an embedder
   * whose server already checks every request's host and origin in front of the servlet (the
   * Toolhost host's request guard does, on every route), so that there is one such check, not two
   * that may disagree.
   */
  public static McpGateway http(
      ToolRegistry registry,
      ToolSet tools,
      ToolDispatcher dispatcher,
      String endpoint,
      Sessions sessions) {
    return http(
        registry,
        tools,
        dispatcher,
        endpoint,
        ServerHttpHeaderValidator.NOOP,
        sessions,
        GatewayStreams.Window.defaults());
  }

  /**
   * Serves the tool set over Streamable HTTP as {@link #http(ToolRegistry, ToolSet, ToolDispatcher,
   * String, List, List, Sessions)} does, holding the given window of each event stream for its
   * client to resume from.
   */
  static McpGateway http(
      ToolRegistry registry,
      ToolSet tools,
      ToolDispatcher dispatcher,
      String endpoint,
      List<String> allowedHosts,
      List<String> allowedOrigins,
      Sessions sessions,
      GatewayStreams.Window window) {
    return http(
        registry,
        tools,
        dispatcher,
        endpoint,
        DefaultServerTransportSecurityValidator.builder()
            .allowedHosts(allowedHosts)
            .allowedOrigins(allowedOrigins)
            .build(),
        sessions,
        window);
  }

  private static McpGateway http(
      ToolRegistry registry,
      ToolSet tools,
      ToolDispatcher dispatcher,
      String endpoint,
      ServerHttpHeaderValidator headers,
      Sessions sessions,
      GatewayStreams.Window window) {
    HttpServletStreamableServerTransportProvider transport =
        HttpServletStreamableServerTransportProvider.builder()
            .jsonMapper(McpConnection.JSON)
            .mcpEndpoint(endpoint)
            .keepAliveInterval(Duration.ofSeconds(30))
            .httpHeaderValidator(headers)
            // Who sent each request, as the host's front found from its credential, and the id of
            // a tool call, as the calls' front read it.
            .contextExtractor(
                request -> {
                  Map<String, Object> context = new HashMap<>();
                  if (request.getAttribute(Principal.ATTRIBUTE) instanceof Principal principal) {
                    context.put(PRINCIPAL, principal);
                  }
                  if (request.getAttribute(GatewayCalls.REQUEST_ID) instanceof String id) {
                    context.put(GatewayCalls.REQUEST_ID, id);
                  }
                  return context.isEmpty()
                      ? McpTransportContext.EMPTY
                      : McpTransportContext.create(context);
                })
            // No sweeper: GatewaySessions closes idle sessions. The SDK's sweeper runs on a
            // non-daemon scheduler that closing the transport never disposes, so a closed host's
            // JVM could not exit; null is the SDK's own way to have none.
            .sessionSweepInterval(null)
            .build();
    GatewayCalls calls = new GatewayCalls();
    GatewayStreams streams = new GatewayStreams(window);
    McpGateway gateway =
        new McpGateway(
            registry,
            tools,
            dispatcher,
            Optional.of(new GatewaySessions(calls.front(transport, streams), sessions)),
            calls,
            Optional.of(streams));
    gateway.serve(McpServer.async(transport));
    return gateway;
  }

  /**
   * Sessions are the limits on the MCP sessions an HTTP gateway holds: a session without a request
   * for {@code idleTimeout} is closed (at the next request the gateway gets), and past {@code
   * maxSessions} opening a new session closes the least recently used one. A closed session's
   * client gets 404 and, as the MCP spec has it, starts a new session.
   *
   * @param idleTimeout how long a session may go without a request, above zero
   * @param maxSessions how many sessions are held at most, above zero
   */
  public record Sessions(Duration idleTimeout, int maxSessions) {

    /** How long a session may be idle by default: 30 minutes. */
    public static final Duration DEFAULT_IDLE_TIMEOUT = Duration.ofMinutes(30);

    /** How many sessions are held by default: 10,000. */
    public static final int DEFAULT_MAX_SESSIONS = 10_000;

    public Sessions {
      Objects.requireNonNull(idleTimeout, "idleTimeout");
      if (idleTimeout.isNegative() || idleTimeout.isZero()) {
        throw new IllegalArgumentException("The idle timeout of MCP sessions must be positive.");
      }
      if (maxSessions <= 0) {
        throw new IllegalArgumentException("The bound on MCP sessions must be positive.");
      }
    }

    /** 30 minutes idle, 10,000 sessions. */
    public static Sessions defaults() {
      return new Sessions(DEFAULT_IDLE_TIMEOUT, DEFAULT_MAX_SESSIONS);
    }
  }

  /** The event streams an HTTP gateway holds for its clients to resume; empty over stdio. */
  Optional<GatewayStreams> streams() {
    return streams;
  }

  /** The servlet that answers the HTTP endpoint; empty for a stdio gateway. */
  public Optional<HttpServlet> servlet() {
    return servlet;
  }

  private void serve(McpServer.AsyncSpecification<?> specification) {
    List<McpServerFeatures.AsyncToolSpecification> initial;
    synchronized (served) {
      initial = tools.specs().stream().map(this::specification).toList();
      tools.specs().forEach(spec -> served.put(spec.name(), spec));
    }
    this.server =
        specification
            .serverInfo(McpSchema.Implementation.builder("toolhost", VERSION).build())
            .capabilities(McpSchema.ServerCapabilities.builder().tools(true).build())
            // The dispatcher validates, so that a violation is an isError result with its message.
            .validateToolInputs(false)
            .tools(initial)
            .build();
    registry.addListener(listener);
  }

  private McpServerFeatures.AsyncToolSpecification specification(ToolSpec spec) {
    return McpServerFeatures.AsyncToolSpecification.builder()
        .tool(McpResults.toMcpTool(spec))
        .callHandler(this::call)
        .build();
  }

  private Mono<McpSchema.CallToolResult> call(
      McpAsyncServerExchange exchange, McpSchema.CallToolRequest request) {
    return Mono.fromCallable(
            () -> {
              String arguments =
                  MAPPER.writeValueAsString(
                      request.arguments() == null ? Map.of() : request.arguments());
              // MCP requests carry no deadline: the tool's own timeout bounds the call.
              ToolCall call =
                  ToolCall.of(request.name(), arguments)
                      .withTimeout(tools.defaultTimeout(request.name()));
              // A principal with a user makes every call as that user, and its session is that
              // user's (user/session, as on the invoke route).
              Optional<String> user =
                  exchange.transportContext().get(PRINCIPAL) instanceof Principal principal
                      ? principal.callUser(Optional.empty())
                      : Optional.empty();
              call = user.map(call::withUser).orElse(call);
              if (exchange.sessionId() != null) {
                String session = exchange.sessionId();
                call = call.withSessionId(user.map(owner -> owner + "/" + session).orElse(session));
              }
              if (exchange.transportContext().get(PRINCIPAL) instanceof Principal principal) {
                call = call.withPrincipal(principal.name());
              }
              // A client's trace, sent in _meta (SEP-414), is the parent of the tool's span.
              Map<String, Object> meta = request.meta() == null ? Map.of() : request.meta();
              Object token = request.progressToken();
              // A client's notifications/cancelled that names this call interrupts this thread. The
              // front put the call's id in the transport context over HTTP; over stdio, where the
              // one client is the one session, in the call's _meta.
              Object id =
                  servlet.isPresent()
                      ? exchange.transportContext().get(GatewayCalls.REQUEST_ID)
                      : meta.get(GatewayCalls.REQUEST_ID);
              String session =
                  servlet.isPresent() ? exchange.sessionId() : GatewayCalls.STDIO_SESSION;
              if (token == null) {
                try (Scope ignored = TraceContext.continueFrom(meta);
                    GatewayCalls.Call running = calls.running(session, id)) {
                  return McpResults.toCallToolResult(dispatcher.dispatch(tools, call));
                }
              }
              ProgressRelay relay = new ProgressRelay(exchange, token);
              ToolResult result;
              try (Scope traced = TraceContext.continueFrom(meta);
                  Scope ignored = ToolProgress.listen(relay);
                  GatewayCalls.Call running = calls.running(session, id)) {
                result = dispatcher.dispatch(tools, call);
              }
              // Every notification goes out before the result that ends the request.
              relay.flush();
              return McpResults.toCallToolResult(result);
            })
        .subscribeOn(scheduler);
  }

  /**
   * A progress relay sends a call's progress to the MCP client that asked for it with a progress
   * token, in order, without blocking the reporting thread (the bridge reports on its client's
   * event loop).
   */
  private static final class ProgressRelay implements ToolProgress.Listener {
    private static final Duration FLUSH_WAIT = Duration.ofSeconds(5);

    private final McpAsyncServerExchange exchange;
    private final Object token;
    private CompletableFuture<Void> sent = CompletableFuture.completedFuture(null);

    ProgressRelay(McpAsyncServerExchange exchange, Object token) {
      this.exchange = exchange;
      this.token = token;
    }

    @Override
    public synchronized void progress(
        double progress, Optional<Double> total, Optional<String> message) {
      McpSchema.ProgressNotification notification =
          McpSchema.ProgressNotification.builder(token, progress)
              .total(total.orElse(null))
              .message(message.orElse(null))
              .build();
      sent =
          sent.handle((ignored, failure) -> null)
              .thenCompose(ignored -> exchange.progressNotification(notification).toFuture());
    }

    /** Waits, a few seconds at most, for the notifications sent so far to go out. */
    void flush() {
      CompletableFuture<Void> last;
      synchronized (this) {
        last = sent;
      }
      try {
        last.get(FLUSH_WAIT.toMillis(), TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (ExecutionException | TimeoutException e) {
        LOG.debug("MCP gateway: a progress notification did not go out: {}", e.getMessage());
      }
    }
  }

  /** Makes the served list match the tool set; the SDK notifies clients of each change. */
  private void refresh() {
    McpAsyncServer current = server;
    if (current == null) {
      return;
    }
    synchronized (served) {
      Map<String, ToolSpec> now = new HashMap<>();
      tools.specs().forEach(spec -> now.put(spec.name(), spec));
      for (String name : List.copyOf(served.keySet())) {
        if (!now.containsKey(name)) {
          served.remove(name);
          block(current.removeTool(name), "removing tool " + name);
        }
      }
      for (ToolSpec spec : now.values()) {
        // A changed tool is added over the old one: the SDK replaces it in place and tells
        // clients once, where removing it first would tell them twice.
        if (!spec.equals(served.get(spec.name()))) {
          served.put(spec.name(), spec);
          block(current.addTool(specification(spec)), "adding tool " + spec.name());
        }
      }
    }
  }

  private static void block(Mono<Void> change, String what) {
    try {
      change.block(Duration.ofSeconds(10));
    } catch (RuntimeException e) {
      LOG.warn("MCP gateway: {} failed: {}", what, e.getMessage());
    }
  }

  /** Stops serving and stops following the registry. */
  @Override
  public void close() {
    registry.removeListener(listener);
    McpAsyncServer current = server;
    if (current != null) {
      try {
        current.closeGracefully().block(Duration.ofSeconds(5));
      } catch (RuntimeException e) {
        current.close();
      }
    }
    streams.ifPresent(GatewayStreams::close);
    scheduler.dispose();
    threads.shutdownNow();
  }
}
