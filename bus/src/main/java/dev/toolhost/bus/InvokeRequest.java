package dev.toolhost.bus;

import dev.toolhost.core.ToolCall;
import java.time.Instant;
import java.time.format.DateTimeParseException;
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
    JsonNode body;
    try {
      body = JSON.readTree(text);
    } catch (JacksonException e) {
      throw new IllegalArgumentException("not valid JSON (" + e.getOriginalMessage() + ")");
    }
    if (body == null || !body.isObject()) {
      throw new IllegalArgumentException("not a JSON object");
    }
    String id = text(body, "tool_call_id").orElseThrow(() -> missing("tool_call_id"));
    String name = text(body, "tool_name").orElseThrow(() -> missing("tool_name"));
    String deadlineText = text(body, "deadline").orElseThrow(() -> missing("deadline"));
    Instant deadline;
    try {
      deadline = Instant.parse(deadlineText);
    } catch (DateTimeParseException e) {
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
            text(body, "session_id"),
            text(body, "user"),
            Optional.empty(),
            deadline));
  }

  private static IllegalArgumentException missing(String field) {
    return new IllegalArgumentException("not a tool invoke request: no string '" + field + "'");
  }

  static Optional<String> text(JsonNode body, String field) {
    JsonNode value = body.get(field);
    return value != null && value.isString() ? Optional.of(value.asString()) : Optional.empty();
  }
}
