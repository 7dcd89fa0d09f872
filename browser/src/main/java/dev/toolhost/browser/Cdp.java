package dev.toolhost.browser;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * A CDP connection is one WebSocket to a browser's DevTools endpoint, speaking the Chrome DevTools
 * Protocol: commands with an id answered by a reply with that id, and events, both possibly for a
 * target's session ({@code sessionId}, flattened sessions).
 *
 * <p>The protocol is spoken over the JDK's own {@link WebSocket} client rather than through
 * Selenium's {@code selenium-devtools-v156} (or Playwright): the commands used here (Target, Page,
 * Fetch, Accessibility, DOM, Input, Runtime) are the protocol's stable core, so any Chromium the
 * operator installs works without a build tied to one browser version, and nothing is downloaded or
 * unpacked at start.
 *
 * <p>Event listeners run on the socket's receiving thread, in the order the browser sent the
 * messages, before any later reply completes: a listener must only record state and hand blocking
 * work to another thread. Command payloads are never logged (a typed secret travels in one).
 * Thread-safe.
 */
final class Cdp implements AutoCloseable {

  private static final JsonMapper JSON = JsonMapper.shared();

  /** An event: its method, its target session (none for the browser's own), and its params. */
  record Event(String method, Optional<String> session, JsonNode params) {}

  /** A command the browser answered with an error, or could not be sent or answered. */
  static final class CdpException extends Exception {
    private static final long serialVersionUID = 1L;

    CdpException(String message) {
      super(message);
    }
  }

  private final ExecutorService threads;
  private final HttpClient client;
  private final WebSocket socket;
  private final AtomicLong ids = new AtomicLong();
  private final Map<Long, CompletableFuture<JsonNode>> pending = new ConcurrentHashMap<>();
  private final List<Consumer<Event>> listeners = new CopyOnWriteArrayList<>();
  private final CompletableFuture<Void> closed = new CompletableFuture<>();

  private Cdp(URI endpoint, Duration timeout) throws CdpException, InterruptedException {
    this.threads = Executors.newVirtualThreadPerTaskExecutor();
    this.client = HttpClient.newBuilder().executor(threads).connectTimeout(timeout).build();
    try {
      this.socket =
          client
              .newWebSocketBuilder()
              .connectTimeout(timeout)
              .buildAsync(endpoint, new Receiver())
              .get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException | TimeoutException e) {
      client.close();
      threads.close();
      throw new CdpException("could not connect to the browser's DevTools endpoint: " + e);
    }
  }

  /** Connects to a DevTools WebSocket endpoint. */
  static Cdp connect(URI endpoint, Duration timeout) throws CdpException, InterruptedException {
    return new Cdp(endpoint, timeout);
  }

  /** Calls the listener with every event, on the receiving thread. */
  void listen(Consumer<Event> listener) {
    listeners.add(Objects.requireNonNull(listener, "listener"));
  }

  /** Whether the connection is gone. */
  boolean isClosed() {
    return closed.isDone();
  }

  /**
   * Sends a command and waits for its result.
   *
   * @param method the protocol method, such as {@code Page.navigate}
   * @param params its parameters
   * @param session the target session, or empty for the browser
   * @param timeout how long to wait for the answer
   * @return the command's {@code result}
   * @throws CdpException when the browser answers with an error or the connection is gone
   * @throws TimeoutException when no answer came in time
   */
  JsonNode send(String method, ObjectNode params, Optional<String> session, Duration timeout)
      throws CdpException, InterruptedException, TimeoutException {
    long id = ids.incrementAndGet();
    ObjectNode message = JSON.createObjectNode().put("id", id).put("method", method);
    message.set("params", params);
    session.ifPresent(s -> message.put("sessionId", s));
    CompletableFuture<JsonNode> answer = new CompletableFuture<>();
    pending.put(id, answer);
    try {
      if (closed.isDone()) {
        throw new CdpException("the browser's DevTools connection is closed");
      }
      synchronized (socket) {
        // One text message at a time: the socket allows one outstanding send.
        socket
            .sendText(JSON.writeValueAsString(message), true)
            .get(timeout.toMillis(), TimeUnit.MILLISECONDS);
      }
      JsonNode reply = answer.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
      JsonNode error = reply.path("error");
      if (!error.isMissingNode()) {
        throw new CdpException(method + ": " + error.path("message").asString("error"));
      }
      return reply.path("result");
    } catch (ExecutionException e) {
      throw new CdpException(method + ": " + e.getCause().getMessage());
    } finally {
      pending.remove(id);
    }
  }

  /** Sends a command to a session with no parameters. */
  JsonNode send(String method, Optional<String> session, Duration timeout)
      throws CdpException, InterruptedException, TimeoutException {
    return send(method, JSON.createObjectNode(), session, timeout);
  }

  /** A new params object. */
  static ObjectNode params() {
    return JSON.createObjectNode();
  }

  @Override
  public void close() {
    try {
      socket.abort();
    } finally {
      fail("the browser's DevTools connection is closed");
      client.close();
      threads.close();
    }
  }

  private void fail(String why) {
    closed.complete(null);
    for (CompletableFuture<JsonNode> answer : pending.values()) {
      answer.completeExceptionally(new CdpException(why));
    }
  }

  private final class Receiver implements WebSocket.Listener {
    private final StringBuilder partial = new StringBuilder();

    @Override
    public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
      partial.append(data);
      if (last) {
        String text = partial.toString();
        partial.setLength(0);
        receive(text);
      }
      webSocket.request(1);
      return null;
    }

    @Override
    public CompletionStage<?> onClose(WebSocket webSocket, int statusCode, String reason) {
      fail("the browser closed its DevTools connection");
      return null;
    }

    @Override
    public void onError(WebSocket webSocket, Throwable error) {
      fail("the browser's DevTools connection failed: " + error);
    }
  }

  private void receive(String text) {
    JsonNode message;
    try {
      message = JSON.readTree(text);
    } catch (RuntimeException e) {
      return;
    }
    if (message.has("id")) {
      CompletableFuture<JsonNode> answer = pending.get(message.path("id").asLong());
      if (answer != null) {
        answer.complete(message);
      }
      return;
    }
    String method = message.path("method").asString("");
    Optional<String> session =
        message.has("sessionId")
            ? Optional.of(message.path("sessionId").asString())
            : Optional.empty();
    Event event = new Event(method, session, message.path("params"));
    for (Consumer<Event> listener : listeners) {
      try {
        listener.accept(event);
      } catch (RuntimeException e) {
        // A listener's bug must not stop the connection; the browser keeps its state regardless.
        org.slf4j.LoggerFactory.getLogger(Cdp.class).warn("A CDP listener failed on {}", method, e);
      }
    }
  }
}
