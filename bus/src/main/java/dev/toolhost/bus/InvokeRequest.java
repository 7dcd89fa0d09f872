package dev.toolhost.bus;

import dev.toolhost.core.ToolCall;
import java.time.DateTimeException;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.Objects;
import java.util.Optional;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * An invoke request is a tool call as it travels on the bus to a worker: {@code {tool_call_id,
 * tool_name, arguments, session_id, user, deadline}} (see {@code docs/wire-protocol.md}).
 *
 * @param call the call
 */
public record InvokeRequest(ToolCall call) {

  private static final JsonMapper JSON = JsonMapper.shared();

  public InvokeRequest {
    Objects.requireNonNull(call, "call");
  }

  /** The request as JSON text. */
  public String toJson() {
    JsonNode arguments;
    try {
      arguments =
          call.arguments().isBlank() ? JSON.createObjectNode() : JSON.readTree(call.arguments());
    } catch (JacksonException e) {
      // The worker's dispatch path answers invalid_arguments for text that is not JSON.
      arguments = JSON.getNodeFactory().stringNode(call.arguments());
    }
    return toJson(arguments);
  }

  /**
   * The request as JSON text, with arguments already parsed (the call's arguments text is not read
   * again).
   */
  public String toJson(JsonNode arguments) {
    ObjectNode body = JSON.createObjectNode();
    body.put("tool_call_id", call.callId());
    body.put("tool_name", call.toolName());
    body.set("arguments", arguments);
    call.sessionId().ifPresent(id -> body.put("session_id", id));
    call.user().ifPresent(user -> body.put("user", user));
    body.put("deadline", call.deadline().toString());
    return body.toString();
  }

  /**
   * Reads a request.
   *
   * @throws IllegalArgumentException saying why the text is not a request
   */
  public static InvokeRequest parse(String text) {
    JsonNode body = WireJson.readObject(text);
    String id = WireJson.text(body, "tool_call_id").orElseThrow(() -> missing("tool_call_id"));
    String name = WireJson.text(body, "tool_name").orElseThrow(() -> missing("tool_name"));
    String deadlineText = WireJson.text(body, "deadline").orElseThrow(() -> missing("deadline"));
    Instant deadline;
    try {
      deadline = instant(deadlineText);
    } catch (DateTimeException e) {
      throw new IllegalArgumentException(
          "'deadline' is not an ISO-8601 instant such as 2026-01-01T00:00:00Z");
    }
    JsonNode arguments = body.get("arguments");
    String argumentsText =
        arguments == null || arguments.isNull()
            ? "{}"
            : arguments.isString() ? arguments.asString() : arguments.toString();
    return new InvokeRequest(
        new ToolCall(
            id,
            name,
            argumentsText,
            WireJson.text(body, "session_id"),
            WireJson.text(body, "user"),
            Optional.empty(),
            deadline));
  }

  /**
   * Reads an ISO-8601 instant. The shape every Toolhost caller sends, {@code
   * 2026-01-01T00:00:00.123Z} (the fraction optional, of 1 to 9 digits), is read by hand; anything
   * else goes to {@link Instant#parse}. Written by hand because {@code Instant.parse} costs about
   * 7% of a worker's CPU under load, more than any other single step of reading a request.
   */
  static Instant instant(String text) {
    int length = text.length();
    if (length < 20
        || text.charAt(length - 1) != 'Z'
        || text.charAt(4) != '-'
        || text.charAt(7) != '-'
        || text.charAt(10) != 'T'
        || text.charAt(13) != ':'
        || text.charAt(16) != ':') {
      return Instant.parse(text);
    }
    int year = digits(text, 0, 4);
    int month = digits(text, 5, 2);
    int day = digits(text, 8, 2);
    int hour = digits(text, 11, 2);
    int minute = digits(text, 14, 2);
    int second = digits(text, 17, 2);
    int nanos = 0;
    if (length > 20) {
      int fraction = length - 21;
      if (text.charAt(19) != '.' || fraction < 1 || fraction > 9) {
        return Instant.parse(text);
      }
      nanos = digits(text, 20, fraction);
      for (int i = fraction; i < 9; i++) {
        nanos *= 10;
      }
    }
    // Instant.parse reads 24:00 as the next day and :60 as a leap second; it has those.
    if ((year | month | day | hour | minute | second | nanos) < 0 || hour > 23 || second > 59) {
      return Instant.parse(text);
    }
    // LocalDateTime checks the ranges (month 13, February 30) as Instant.parse does.
    return LocalDateTime.of(year, month, day, hour, minute, second, nanos)
        .toInstant(ZoneOffset.UTC);
  }

  /** The decimal number in {@code count} characters from {@code from}; -1 when one is no digit. */
  private static int digits(String text, int from, int count) {
    int value = 0;
    for (int i = from; i < from + count; i++) {
      char c = text.charAt(i);
      if (c < '0' || c > '9') {
        return -1;
      }
      value = value * 10 + (c - '0');
    }
    return value;
  }

  private static IllegalArgumentException missing(String field) {
    return new IllegalArgumentException("not a tool invoke request: no string '" + field + "'");
  }
}
