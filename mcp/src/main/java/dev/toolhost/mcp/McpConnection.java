package dev.toolhost.mcp;

import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ToolProgress;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.TraceContext;
import dev.toolhost.core.spi.ChildProcesses;
import io.modelcontextprotocol.client.McpAsyncClient;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.transport.HttpClientSseClientTransport;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.jackson3.JacksonMcpJsonMapper;
import io.modelcontextprotocol.spec.McpClientTransport;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpTransportException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

/**
 * A connection is the bridge's link to one MCP server: it connects, lists every page of the
 * server's tools, calls them, notices when the server is lost and reconnects with backoff.
 *
 * <p>Thread-safe; calls run concurrently over one session. A call answers, never throws, except
 * when its thread is interrupted. A call waits until its own deadline, never cut at the server's
 * call timeout. A call to an idempotent or read-only tool that fails because the session was lost
 * is retried once after reconnecting, within the call's own time; any other answers {@code
 * unavailable}, saying the tool may have run. While the server is down, calls answer {@code
 * unavailable}. A call abandoned before its answer (its thread interrupted by a caller's cancel or
 * the dispatcher's deadline step, or its deadline passed) is cancelled at the server too: the
 * connection sends {@code notifications/cancelled} with the call's request id, over any transport,
 * and the call's progress reaches its caller until that notification is out. Blocking: the SDK's
 * Reactor types stay in here.
 */
final class McpConnection implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(McpConnection.class);
  static final McpJsonMapper JSON = new JacksonMcpJsonMapper(JsonMapper.shared());
  private static final String VERSION = "0.1.0";
  private static final Duration FIRST_BACKOFF = Duration.ofMillis(250);
  private static final Duration MAX_BACKOFF = Duration.ofSeconds(30);
  // The SDK's own request timeout is only a backstop: every wait here ends at the caller's
  // deadline first, and a caller's deadline may be longer than the server's call timeout.
  private static final Duration SDK_REQUEST_TIMEOUT = Duration.ofHours(24);
  // What the SDK's HTTP transports say of a message over their size limit (16 MiB).
  private static final String SDK_TOO_LARGE = "exceeds the maximum allowed size";

  /** What a connection tells its owner. */
  interface Listener {
    /** The server's whole tool list, after connecting and after every change it announced. */
    void toolsListed(McpConnection connection, List<McpSchema.Tool> tools);

    /** A progress notification for one of this connection's calls. */
    default void progress(McpConnection connection, McpSchema.ProgressNotification progress) {}
  }

  /** Where a connection is. */
  enum State {
    CONNECTING,
    CONNECTED,
    BROKEN,
    CLOSED
  }

  private final McpServerConfig config;
  private final Duration connectTimeout;
  private final Map<String, String> hostEnvironment;
  private final int maxMessageChars;
  private final ChildProcesses children;
  private final Listener listener;
  // The callers that listen to the progress of their calls, by the progress token sent with each.
  private final Map<String, ToolProgress.Listener> progressByToken = new ConcurrentHashMap<>();
  private final Object lock = new Object();

  // Guarded by lock.
  private State state = State.CONNECTING;
  private McpAsyncClient client;
  // The client's transport: what cancels a call in flight.
  private SerialClientTransport wire;
  private long generation;
  // Completes with why the session was lost.
  private CompletableFuture<Throwable> lost = new CompletableFuture<>();
  private CompletableFuture<Void> connected = new CompletableFuture<>();
  private String lastError = "";
  private Thread reconnector;

  McpConnection(
      McpServerConfig config,
      Duration connectTimeout,
      Map<String, String> hostEnvironment,
      int maxMessageChars,
      ChildProcesses children,
      Listener listener) {
    this.children = Objects.requireNonNull(children, "children");
    this.config = Objects.requireNonNull(config, "config");
    this.connectTimeout = Objects.requireNonNull(connectTimeout, "connectTimeout");
    this.hostEnvironment = Map.copyOf(hostEnvironment);
    this.maxMessageChars = maxMessageChars;
    this.listener = Objects.requireNonNull(listener, "listener");
  }

  McpServerConfig config() {
    return config;
  }

  State state() {
    synchronized (lock) {
      return state;
    }
  }

  /** Why the last attempt to connect or call failed, for operators; empty when none did. */
  String lastError() {
    synchronized (lock) {
      return lastError;
    }
  }

  /**
   * Starts connecting in the background and returns a future that completes when the first attempt
   * ends, connected or not; a failed first attempt goes on with backoff.
   */
  CompletableFuture<Void> start() {
    CompletableFuture<Void> firstAttempt = new CompletableFuture<>();
    Thread.ofVirtual()
        .name("toolhost-mcp-connect-" + config.name())
        .start(
            () -> {
              try {
                connectOnce();
              } catch (Exception e) {
                failed(e);
                broken(generationNow(), e);
              } finally {
                firstAttempt.complete(null);
              }
            });
    return firstAttempt;
  }

  private long generationNow() {
    synchronized (lock) {
      return generation;
    }
  }

  private void failed(Exception e) {
    String message = describe(e);
    synchronized (lock) {
      lastError = message;
    }
    LOG.warn("MCP server '{}' ({}): {}", config.name(), config.transport().describe(), message);
  }

  private void connectOnce() throws Exception {
    McpClientTransport transport = transport();
    SerialClientTransport serial = new SerialClientTransport(transport);
    McpAsyncClient candidate =
        McpClient.async(serial)
            .clientInfo(McpSchema.Implementation.builder("toolhost", VERSION).build())
            .requestTimeout(SDK_REQUEST_TIMEOUT)
            .initializationTimeout(connectTimeout)
            .toolsChangeConsumer(ignored -> Mono.fromRunnable(this::relistInBackground))
            .progressConsumer(progress -> Mono.fromRunnable(() -> progressed(progress)))
            .build();
    long myGeneration;
    List<McpSchema.Tool> tools;
    try {
      candidate.initialize().block(connectTimeout);
      tools = listTools(candidate);
      synchronized (lock) {
        if (state == State.CLOSED) {
          candidate.close();
          return;
        }
        generation++;
        myGeneration = generation;
        client = candidate;
        wire = serial;
        state = State.CONNECTED;
        lost = new CompletableFuture<>();
        lastError = "";
        connected.complete(null);
      }
      listener.toolsListed(this, tools);
    } catch (RuntimeException e) {
      candidate.close();
      throw e;
    }
    LOG.info("MCP server '{}' connected, listing {} tools", config.name(), tools.size());
    // A server's instructions are for the model, often paragraphs long: not an operator's news.
    // The SDK logs them at INFO as well; the host's logging configuration lowers that logger.
    String instructions = candidate.getServerInstructions();
    if (instructions != null && !instructions.isBlank()) {
      LOG.debug("MCP server '{}' instructions: {}", config.name(), instructions);
    }
    if (transport instanceof StdioTransport stdio) {
      // The child exited, was killed, or sent a message over the limit: reconnect.
      stdio.onLoss(cause -> broken(myGeneration, cause));
    }
  }

  // The legacy HTTP+SSE transport is deprecated in the SDK, and still what some servers speak.
  @SuppressWarnings("deprecation")
  private McpClientTransport transport() {
    return switch (config.transport()) {
      case McpServerConfig.Stdio stdio -> {
        // The SDK waits out the whole initialization timeout for a command that cannot start.
        if (!executable(stdio.command())) {
          throw new IllegalStateException(
              "cannot run '" + stdio.command() + "': no such executable file (or not on PATH)");
        }
        yield new StdioTransport(
            config.name(), stdio, hostEnvironment, JSON, maxMessageChars, children);
      }
      case McpServerConfig.StreamableHttp http -> {
        URI url = http.url();
        yield HttpClientStreamableHttpTransport.builder(base(url))
            // Resumes an answer's event stream that the server closes early (SEP-1699).
            .clientBuilder(
                ResumingHttpClient.over(
                    HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)))
            .endpoint(endpoint(url))
            .requestBuilder(request(http.headers()))
            .jsonMapper(JSON)
            .connectTimeout(connectTimeout)
            .build();
      }
      case McpServerConfig.Sse sse -> {
        URI url = sse.url();
        yield HttpClientSseClientTransport.builder(base(url))
            .sseEndpoint(endpoint(url))
            .requestBuilder(request(sse.headers()))
            .jsonMapper(JSON)
            .connectTimeout(connectTimeout)
            .build();
      }
    };
  }

  private boolean executable(String command) {
    String path = hostEnvironment.get("PATH");
    return path == null || ChildProcesses.resolve(command, path).isPresent();
  }

  /** A request builder that sends the server's headers with every request. */
  private static HttpRequest.Builder request(Map<String, String> headers) {
    HttpRequest.Builder request = HttpRequest.newBuilder();
    headers.forEach(request::header);
    return request;
  }

  private static String base(URI url) {
    return url.getScheme() + "://" + url.getRawAuthority();
  }

  private static String endpoint(URI url) {
    String path = url.getRawPath() == null || url.getRawPath().isEmpty() ? "/" : url.getRawPath();
    return url.getRawQuery() == null ? path : path + "?" + url.getRawQuery();
  }

  /** Every page of the server's tools. */
  private List<McpSchema.Tool> listTools(McpAsyncClient from) {
    if (from.getServerCapabilities() == null || from.getServerCapabilities().tools() == null) {
      return List.of();
    }
    List<McpSchema.Tool> tools = new ArrayList<>();
    String cursor = null;
    int pages = 0;
    do {
      McpSchema.ListToolsResult page = from.listTools(cursor).block(connectTimeout);
      if (page == null) {
        break;
      }
      if (page.tools() != null) {
        tools.addAll(page.tools());
      }
      cursor = page.nextCursor();
      // A server that repeats its cursor forever must not hang the host.
    } while (cursor != null && !cursor.isEmpty() && ++pages < 1000);
    return List.copyOf(tools);
  }

  private void relistInBackground() {
    Thread.ofVirtual().name("toolhost-mcp-relist-" + config.name()).start(this::relist);
  }

  /** Lists the tools again and tells the listener; a failure is logged and changes nothing. */
  void relist() {
    McpAsyncClient current;
    synchronized (lock) {
      if (state != State.CONNECTED) {
        return;
      }
      current = client;
    }
    try {
      listener.toolsListed(this, listTools(current));
    } catch (RuntimeException e) {
      LOG.warn("MCP server '{}': listing its tools again failed: {}", config.name(), describe(e));
    }
  }

  private void broken(long ofGeneration, Throwable cause) {
    McpAsyncClient old;
    synchronized (lock) {
      if (state == State.CLOSED
          || ofGeneration != generation
          || (state == State.BROKEN && reconnector != null)) {
        return;
      }
      if (state == State.CONNECTED) {
        lastError = "connection lost: " + describe(cause);
        LOG.warn("MCP server '{}': {}; reconnecting", config.name(), lastError);
      }
      state = State.BROKEN;
      old = client;
      client = null;
      wire = null;
      lost.complete(cause);
      connected = new CompletableFuture<>();
      reconnector =
          Thread.ofVirtual().name("toolhost-mcp-reconnect-" + config.name()).start(this::reconnect);
    }
    if (old != null) {
      old.close();
    }
  }

  private void reconnect() {
    Duration backoff = FIRST_BACKOFF;
    while (true) {
      synchronized (lock) {
        if (state != State.BROKEN) {
          reconnector = null;
          return;
        }
      }
      try {
        Thread.sleep(backoff);
      } catch (InterruptedException e) {
        return;
      }
      try {
        connectOnce();
        synchronized (lock) {
          reconnector = null;
        }
        return;
      } catch (Exception e) {
        failed(e);
        backoff = backoff.multipliedBy(2);
        if (backoff.compareTo(MAX_BACKOFF) > 0) {
          backoff = MAX_BACKOFF;
        }
      }
    }
  }

  /**
   * Calls a tool of this server by its own name, waiting at most until the call's deadline: the
   * caller's deadline wins over the server's call timeout, which is only the default for callers
   * that name none (the bridged tool's own timeout).
   *
   * <p>A call lost with the session is retried once, after reconnecting and within the call's own
   * time, only when {@code retryable} (the tool is annotated idempotent or read-only): any other
   * tool may have run, so the call answers {@code unavailable} and says so. An answer over the size
   * limit fails its own call with {@code execution_failed}, never retried (the same request would
   * bring the same answer); over stdio the connection and the other calls go on, and where the
   * transport must be dropped for it the other calls in flight answer as calls that lost their
   * server: {@code unavailable}, saying they may have run.
   *
   * @throws InterruptedException when the calling thread is interrupted; the call is abandoned
   */
  ToolResult call(
      String tool,
      Map<String, Object> arguments,
      Instant deadline,
      String shownName,
      boolean retryable)
      throws InterruptedException {
    Attempt first = attempt(tool, arguments, deadline, shownName);
    if (!(first instanceof Attempt.Lost lost)) {
      return ((Attempt.Done) first).result();
    }
    if (!retryable) {
      return lostMidCall(shownName, lost.reason());
    }
    // Retried once, after reconnecting, within the call's own time.
    CompletableFuture<Void> back;
    synchronized (lock) {
      back = connected;
    }
    Duration wait = min(Duration.between(Instant.now(), deadline), connectTimeout.multipliedBy(2));
    try {
      if (!wait.isNegative()) {
        back.get(wait.toNanos(), TimeUnit.NANOSECONDS);
      }
    } catch (TimeoutException | ExecutionException e) {
      return unavailable(shownName, lost.reason());
    }
    Attempt second = attempt(tool, arguments, deadline, shownName);
    return second instanceof Attempt.Done done
        ? done.result()
        : unavailable(shownName, ((Attempt.Lost) second).reason());
  }

  private sealed interface Attempt {
    record Done(ToolResult result) implements Attempt {}

    record Lost(String reason) implements Attempt {}
  }

  private Attempt attempt(
      String tool, Map<String, Object> arguments, Instant deadline, String shownName)
      throws InterruptedException {
    McpAsyncClient current;
    SerialClientTransport currentWire;
    CompletableFuture<Throwable> lostSignal;
    long myGeneration;
    synchronized (lock) {
      if (state != State.CONNECTED) {
        return new Attempt.Done(unavailable(shownName, lastError));
      }
      current = client;
      currentWire = wire;
      lostSignal = lost;
      myGeneration = generation;
    }
    Duration wait = Duration.between(Instant.now(), deadline);
    if (wait.isNegative() || wait.isZero()) {
      return new Attempt.Done(timeout(shownName, Duration.ZERO));
    }
    String token = UUID.randomUUID().toString();
    // The caller's trace goes with the request (SEP-414), so that the server's spans join it.
    Map<String, Object> meta = new HashMap<>(TraceContext.current());
    meta.put("progressToken", token);
    McpSchema.CallToolRequest request =
        McpSchema.CallToolRequest.builder(tool).arguments(arguments).meta(meta).build();
    // The caller's listener, carried to this thread by the dispatch path, hears this call's
    // progress notifications until it ends.
    ToolProgress.current().ifPresent(caller -> progressByToken.put(token, caller));
    Sent sent = new Sent(currentWire, token);
    try {
      return answer(current, request, sent, lostSignal, myGeneration, wait, shownName);
    } finally {
      if (!sent.stopping) {
        sent.forget();
      }
    }
  }

  /**
   * A sent call: the transport it went out on and its progress token, by which the transport knows
   * its JSON-RPC id. Only the calling thread uses it.
   */
  private final class Sent {
    private final SerialClientTransport wire;
    private final String token;
    // Whether a cancellation is on its way, which forgets the call once sent.
    private boolean stopping;

    Sent(SerialClientTransport wire, String token) {
      this.wire = wire;
      this.token = token;
    }

    /**
     * Tells the server to stop the call ({@code notifications/cancelled}, with its request's id),
     * without waiting; the call's progress still reaches its caller until the notification is out.
     */
    void stop(String reason) {
      Optional<Object> id = wire.requestId(token);
      if (id.isEmpty()) {
        return;
      }
      stopping = true;
      wire.cancel(id.get(), reason)
          .doFinally(ignored -> forget())
          .subscribe(
              null,
              failure ->
                  LOG.debug(
                      "MCP server '{}': the cancellation of request {} did not go out: {}",
                      config.name(),
                      id.get(),
                      describe(failure)));
    }

    void forget() {
      progressByToken.remove(token);
      wire.forget(token);
    }
  }

  /** Sends the request and waits for its answer, the connection's loss, or the wait's end. */
  private Attempt answer(
      McpAsyncClient current,
      McpSchema.CallToolRequest request,
      Sent sent,
      CompletableFuture<Throwable> lostSignal,
      long myGeneration,
      Duration wait,
      String shownName)
      throws InterruptedException {
    CompletableFuture<McpSchema.CallToolResult> answer = current.callTool(request).toFuture();
    try {
      CompletableFuture.anyOf(answer, lostSignal).get(wait.toNanos(), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      answer.cancel(true);
      sent.stop("The call's deadline passed.");
      return new Attempt.Done(timeout(shownName, wait));
    } catch (InterruptedException e) {
      answer.cancel(true);
      sent.stop("The caller cancelled the call.");
      throw e;
    } catch (ExecutionException e) {
      // The answer failed; looked at below.
    }
    Throwable failure = null;
    if (answer.isDone()) {
      try {
        return new Attempt.Done(McpResults.toToolResult(answer.get(), shownName));
      } catch (ExecutionException | CancellationException e) {
        failure = e instanceof ExecutionException ? e.getCause() : e;
      }
      if (failure instanceof McpError error
          && error.getJsonRpcError() != null
          && error.getJsonRpcError().code() == StdioTransport.ANSWER_TOO_LARGE) {
        // The transport dropped this call's answer for its size; the connection goes on.
        return new Attempt.Done(tooLarge(shownName, error.getMessage()));
      }
      if (failure instanceof McpError error) {
        return new Attempt.Done(McpResults.protocolError(error, shownName, config.name()));
      }
      if (isTimeout(failure)) {
        return new Attempt.Done(timeout(shownName, wait));
      }
    } else {
      answer.cancel(true);
    }
    // The session is gone: the loss says why, or the failed answer does (the transport).
    Throwable cause = lostSignal.getNow(null);
    if (cause == null) {
      cause = failure;
      broken(myGeneration, cause);
    }
    // Only the call whose own answer was too large says so; the others in flight when the
    // connection had to be dropped for it may have run, and answer as any call that lost its
    // server does.
    if (failure != null && tooLarge(failure)) {
      return new Attempt.Done(tooLarge(shownName, describe(failure)));
    }
    return new Attempt.Lost(
        answer.isDone() ? describe(cause) : "connection lost during the call: " + describe(cause));
  }

  /**
   * A progress notification: to the bridge's listener, and to the caller of its call if it listens.
   */
  private void progressed(McpSchema.ProgressNotification progress) {
    listener.progress(this, progress);
    ToolProgress.Listener caller = progressByToken.get(String.valueOf(progress.progressToken()));
    if (caller != null && progress.progress() != null) {
      caller.progress(
          progress.progress(),
          Optional.ofNullable(progress.total()),
          Optional.ofNullable(progress.message()));
    }
  }

  private static boolean isTimeout(Throwable thrown) {
    for (Throwable t = thrown; t != null; t = t.getCause()) {
      if (t instanceof TimeoutException) {
        return true;
      }
    }
    return false;
  }

  private ToolResult unavailable(String shownName, String reason) {
    return ToolResult.failure(
        ErrorCode.UNAVAILABLE,
        "Tool '"
            + shownName
            + "' is unavailable: its MCP server '"
            + config.name()
            + "' is not connected and the host is reconnecting. Retry in a little while, or use"
            + " another tool.",
        reason);
  }

  private ToolResult lostMidCall(String shownName, String reason) {
    return ToolResult.failure(
        ErrorCode.UNAVAILABLE,
        "Tool '"
            + shownName
            + "' lost its MCP server '"
            + config.name()
            + "' during the call, so the tool may have run (or partly run). It is not marked"
            + " idempotent, so the host did not call it again. Check whether it took effect before"
            + " calling it again; the host is reconnecting.",
        reason);
  }

  /**
   * Whether a failure is a message over the size limit: ours over stdio, or the SDK's over HTTP.
   * MCP Java SDK 2.1.0 reports the latter as a plain {@code McpTransportException}, so it is known
   * by its message ({@code HttpServerAnswerTest} pins it against the SDK in use).
   */
  private static boolean tooLarge(Throwable thrown) {
    for (Throwable t = thrown; t != null; t = t.getCause()) {
      if (t instanceof StdioTransport.MessageTooLarge
          || (t instanceof McpTransportException
              && t.getMessage() != null
              && t.getMessage().contains(SDK_TOO_LARGE))) {
        return true;
      }
      if (t.getCause() == t) {
        break;
      }
    }
    return false;
  }

  private ToolResult tooLarge(String shownName, String why) {
    return ToolResult.failure(
        ErrorCode.EXECUTION_FAILED,
        "Tool '"
            + shownName
            + "' (MCP server '"
            + config.name()
            + "') answered with a message larger than the host accepts, so the answer was"
            + " dropped. Ask for less at once (a smaller range, a filter, a page), or use"
            + " another tool.",
        "MCP server '" + config.name() + "': " + why);
  }

  private ToolResult timeout(String shownName, Duration waited) {
    return ToolResult.failure(
        ErrorCode.TIMEOUT,
        "Tool '"
            + shownName
            + "' (MCP server '"
            + config.name()
            + "') did not answer within "
            + seconds(waited)
            + " and the call was abandoned; the server may still be working on it. You may retry"
            + " (perhaps asking for less work at once), or tell the user the server is slow.",
        "MCP server '" + config.name() + "' call timeout is " + seconds(config.timeout()));
  }

  private static String seconds(Duration duration) {
    // To a tenth: a wait up to the deadline ends a few milliseconds short of a round number.
    long tenths = Math.round(duration.toMillis() / 100.0);
    return tenths % 10 == 0
        ? (tenths / 10) + " s"
        : String.format(java.util.Locale.ROOT, "%.1f s", tenths / 10.0);
  }

  private static Duration min(Duration a, Duration b) {
    return a.compareTo(b) <= 0 ? a : b;
  }

  static String describe(Throwable thrown) {
    Throwable root = thrown;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    String message =
        root.getMessage() == null ? root.getClass().getSimpleName() : root.getMessage();
    return root == thrown ? message : describeTop(thrown) + " (" + message + ")";
  }

  private static String describeTop(Throwable thrown) {
    return thrown.getMessage() == null ? thrown.getClass().getSimpleName() : thrown.getMessage();
  }

  /** Disconnects for good; calls in flight answer {@code unavailable}. */
  @Override
  public void close() {
    McpAsyncClient old;
    Thread retrying;
    synchronized (lock) {
      if (state == State.CLOSED) {
        return;
      }
      state = State.CLOSED;
      old = client;
      client = null;
      wire = null;
      lastError = "the server was unregistered or the host is stopping";
      lost.complete(new IllegalStateException(lastError));
      retrying = reconnector;
      reconnector = null;
    }
    if (retrying != null) {
      retrying.interrupt();
    }
    if (old != null) {
      try {
        old.closeGracefully().block(Duration.ofSeconds(5));
      } catch (RuntimeException e) {
        old.close();
      }
    }
  }
}
