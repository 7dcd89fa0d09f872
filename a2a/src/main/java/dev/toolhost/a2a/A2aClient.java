package dev.toolhost.a2a;

import dev.toolhost.web.OutboundException;
import dev.toolhost.web.OutboundHttp;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.InterruptedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;

/**
 * An A2A client speaks JSON-RPC to remote agents in the version their card offers, through the
 * host's {@link OutboundHttp}: it fetches cards, sends messages (waiting or not), streams them,
 * gets tasks and cancels them.
 *
 * <p>Credentials go only to the origin of the agent's configured URL, never to another host a card
 * names. A JSON-RPC error comes back as an {@link A2aException} with the agent's code; a transport
 * failure as an {@link OutboundException}. Thread-safe.
 */
public final class A2aClient {

  private final OutboundHttp http;
  private final AtomicLong ids = new AtomicLong();

  /** A client that sends everything through the given outbound client. */
  public A2aClient(OutboundHttp http) {
    this.http = Objects.requireNonNull(http, "http");
  }

  /** Where a client sends an agent's calls, and what it adds to them. */
  public record Target(URI endpoint, A2aVersion version, Map<String, String> headers) {
    public Target {
      Objects.requireNonNull(endpoint, "endpoint");
      Objects.requireNonNull(version, "version");
      headers = Map.copyOf(headers);
    }
  }

  /**
   * Fetches and reads an agent's card.
   *
   * @throws OutboundException when it cannot be fetched
   * @throws A2aException when it is not a card this client can use
   */
  public AgentCard card(URI cardUrl, Map<String, String> headers) throws InterruptedException {
    Map<String, String> sent = new LinkedHashMap<>(headers);
    sent.put("Accept", "application/json");
    OutboundHttp.Response response = http.get(cardUrl, sent);
    if (!response.ok()) {
      throw new A2aException(
          A2aError.INTERNAL_ERROR,
          "the agent card at " + cardUrl + " answered HTTP " + response.status());
    }
    JsonNode card;
    try {
      card = A2aWire.JSON.readTree(response.text());
    } catch (JacksonException e) {
      throw new A2aException(A2aError.PARSE_ERROR, "the agent card at " + cardUrl + " is not JSON");
    }
    return AgentCard.read(card, cardUrl);
  }

  /** Sends a message; with {@code blocking}, the agent answers when the task ends or waits. */
  public A2aEvent send(Target target, A2aMessage message, boolean blocking)
      throws InterruptedException {
    return send(target, message, blocking, Optional.empty());
  }

  /** Sends a message asking for a skill (named in the request's metadata). */
  public A2aEvent send(Target target, A2aMessage message, boolean blocking, Optional<String> skill)
      throws InterruptedException {
    JsonNode result =
        call(
            target,
            A2aVersion.Operation.SEND,
            A2aWire.sendParams(message, blocking, target.version(), skill));
    return A2aWire.readEvent(result, Optional.empty());
  }

  /** The task as it stands now. */
  public A2aTask get(Target target, String taskId) throws InterruptedException {
    JsonNode result = call(target, A2aVersion.Operation.GET, A2aWire.idParams(taskId));
    return A2aWire.readTask(result.has("task") && !result.has("id") ? result.get("task") : result);
  }

  /** Cancels the task; the answer is the task as the agent left it. */
  public A2aTask cancel(Target target, String taskId) throws InterruptedException {
    JsonNode result = call(target, A2aVersion.Operation.CANCEL, A2aWire.idParams(taskId));
    return A2aWire.readTask(result.has("task") && !result.has("id") ? result.get("task") : result);
  }

  /**
   * Streams a message: each event goes to the listener as it arrives, until one ends the stream,
   * the listener answers false, or the deadline passes.
   *
   * @return the last event heard, empty when the stream ended before any
   */
  public Optional<A2aEvent> stream(
      Target target, A2aMessage message, Instant deadline, Predicate<A2aEvent> listener)
      throws InterruptedException {
    return stream(target, message, Optional.empty(), deadline, listener);
  }

  /**
   * Streams a message asking for a skill, as {@link #stream(Target, A2aMessage, Instant,
   * Predicate)}.
   */
  public Optional<A2aEvent> stream(
      Target target,
      A2aMessage message,
      Optional<String> skill,
      Instant deadline,
      Predicate<A2aEvent> listener)
      throws InterruptedException {
    byte[] body =
        A2aWire.JSON.writeValueAsBytes(
            A2aWire.request(
                ids.incrementAndGet(),
                target.version().method(A2aVersion.Operation.STREAM),
                A2aWire.sendParams(message, true, target.version(), skill)));
    Map<String, String> headers = headers(target);
    headers.put("Accept", "text/event-stream");
    Duration left = Duration.between(Instant.now(), deadline);
    if (left.isNegative() || left.isZero()) {
      return Optional.empty();
    }
    Optional<A2aEvent> last = Optional.empty();
    Optional<A2aTask> task = Optional.empty();
    try (OutboundHttp.Streamed stream =
        http.postStreaming(target.endpoint(), headers, "application/json", body, left)) {
      if (stream.status() / 100 != 2) {
        throw new A2aException(
            A2aError.INTERNAL_ERROR,
            "the agent at " + target.endpoint() + " answered HTTP " + stream.status());
      }
      String type = stream.headers().get("Content-Type");
      long cap = http.policy().maxBodyBytes();
      if (type == null
          || !type.toLowerCase(java.util.Locale.ROOT).startsWith("text/event-stream")) {
        // A server may answer a stream request with one JSON-RPC answer (an error, most often).
        // Read no more than the cap: the body is the remote agent's to make as long as it likes.
        byte[] whole = stream.body().readNBytes((int) Math.min(cap + 1, Integer.MAX_VALUE - 8));
        if (whole.length > cap) {
          throw tooLarge("the answer from " + target.endpoint(), cap);
        }
        JsonNode answer = A2aWire.JSON.readTree(whole);
        A2aEvent only = A2aWire.readEvent(result(answer, target), Optional.empty());
        listener.test(only);
        return Optional.of(only);
      }
      BufferedReader reader =
          new BufferedReader(new InputStreamReader(stream.body(), StandardCharsets.UTF_8));
      StringBuilder data = new StringBuilder();
      String line;
      // Lines are read up to the cap, so that one line with no end (a data line or a comment) is
      // refused as it grows rather than held whole in memory.
      while ((line = boundedLine(reader, cap - data.length(), cap, target)) != null) {
        if (line.startsWith("data:")) {
          data.append(line.substring(5).strip());
          continue;
        }
        if (!line.isEmpty() || data.isEmpty()) {
          continue;
        }
        JsonNode answer = A2aWire.JSON.readTree(data.toString());
        data.setLength(0);
        A2aEvent event = A2aWire.readEvent(result(answer, target), task);
        last = Optional.of(event);
        task = taskOf(event);
        if (!listener.test(event) || event.last()) {
          return last;
        }
      }
      return last;
    } catch (InterruptedIOException e) {
      if (Thread.currentThread().isInterrupted()) {
        throw new InterruptedException("interrupted while streaming from " + target.endpoint());
      }
      return last;
    } catch (IOException | JacksonException e) {
      if (Instant.now().isAfter(deadline)) {
        return last;
      }
      throw new OutboundException(
          OutboundException.Reason.UNREACHABLE,
          "the stream from " + target.endpoint() + " broke: " + e.getMessage(),
          e);
    } catch (OutboundException e) {
      if (e.reason() == OutboundException.Reason.TIMEOUT && last.isPresent()) {
        return last;
      }
      throw e;
    }
  }

  /**
   * The next line of an event stream without its end (LF, CR or CRLF), null at the end of the
   * stream; refused as too large once it is longer than {@code room} characters.
   */
  private static String boundedLine(BufferedReader reader, long room, long cap, Target target)
      throws IOException {
    StringBuilder line = new StringBuilder();
    int c;
    while ((c = reader.read()) != -1) {
      if (c == '\n') {
        return line.toString();
      }
      if (c == '\r') {
        reader.mark(1);
        if (reader.read() != '\n') {
          reader.reset();
        }
        return line.toString();
      }
      if (line.length() >= room) {
        throw tooLarge("an event from " + target.endpoint(), cap);
      }
      line.append((char) c);
    }
    return line.isEmpty() ? null : line.toString();
  }

  private static OutboundException tooLarge(String what, long cap) {
    return new OutboundException(
        OutboundException.Reason.TOO_LARGE,
        what + " is larger than the cap of " + cap + " bytes (the outbound policy's body cap)");
  }

  static Optional<A2aTask> taskOf(A2aEvent event) {
    return switch (event) {
      case A2aEvent.TaskSnapshot snapshot -> Optional.of(snapshot.task());
      case A2aEvent.StatusUpdate update -> Optional.of(update.task());
      case A2aEvent.ArtifactUpdate update -> Optional.of(update.task());
      case A2aEvent.Reply reply -> Optional.empty();
    };
  }

  private JsonNode call(Target target, A2aVersion.Operation operation, JsonNode params)
      throws InterruptedException {
    byte[] body =
        A2aWire.JSON.writeValueAsBytes(
            A2aWire.request(ids.incrementAndGet(), target.version().method(operation), params));
    Map<String, String> headers = headers(target);
    headers.put("Accept", "application/json");
    OutboundHttp.Response response =
        http.post(target.endpoint(), headers, "application/json", body);
    JsonNode answer;
    try {
      answer = A2aWire.JSON.readTree(response.text());
    } catch (JacksonException e) {
      throw new A2aException(
          A2aError.PARSE_ERROR,
          "the agent at "
              + target.endpoint()
              + " answered HTTP "
              + response.status()
              + " with a body that is not JSON");
    }
    return result(answer, target);
  }

  private static JsonNode result(JsonNode answer, Target target) {
    if (answer.path("error").isObject()) {
      JsonNode error = answer.get("error");
      throw new A2aException(
          error.path("code").asInt(A2aError.INTERNAL_ERROR.code()),
          error.path("message").asString("the agent answered an error without a message"));
    }
    if (!answer.has("result")) {
      throw new A2aException(
          A2aError.INVALID_REQUEST,
          "the agent at " + target.endpoint() + " answered neither a result nor an error");
    }
    return answer.get("result");
  }

  private static Map<String, String> headers(Target target) {
    Map<String, String> headers = new LinkedHashMap<>(target.headers());
    if (target.version() == A2aVersion.V1_0) {
      headers.put(A2aVersion.HEADER, A2aVersion.V1_0.wireName());
    }
    return headers;
  }
}
