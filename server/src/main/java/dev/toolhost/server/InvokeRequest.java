package dev.toolhost.server;

import dev.toolhost.core.ToolCall;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * An invoke request is the body of {@code POST /v1/tools/{name}/invoke}: the arguments and the
 * call's session, id, user, model and timeout, every field optional.
 *
 * <p>{@link #parse} refuses a body that is not a JSON object, has a field it does not know, or a
 * field of the wrong type, with an {@link IllegalArgumentException} whose message says what was
 * expected; the handler answers it with a 400. Arguments that are JSON but break the tool's schema
 * are not its business: the dispatcher answers those as a tool result.
 *
 * @param arguments the arguments object as JSON text; {@code {}} when absent
 * @param sessionId the conversation the call belongs to; the call's session is this id within its
 *     user's ({@code alice/s-1}), so that two users who send one id share nothing
 * @param toolCallId the caller's id for the call; a random one when absent
 * @param user the user the call acts for
 * @param timeout how long the caller waits; the tool's own timeout when absent
 * @param model the model the result is for, whose threshold decides whether a large result is
 *     chunked into working memory
 */
record InvokeRequest(
    String arguments,
    Optional<String> sessionId,
    Optional<String> toolCallId,
    Optional<String> user,
    Optional<Duration> timeout,
    Optional<String> model) {

  private static final List<String> FIELDS =
      List.of("arguments", "model", "session_id", "tool_call_id", "timeout_ms", "user");

  /**
   * Parses a request body; an empty body is an empty request.
   *
   * @throws IllegalArgumentException saying what is wrong with the body
   */
  static InvokeRequest parse(JsonMapper mapper, byte[] body) {
    if (new String(body, StandardCharsets.UTF_8).isBlank()) {
      return new InvokeRequest(
          "{}",
          Optional.empty(),
          Optional.empty(),
          Optional.empty(),
          Optional.empty(),
          Optional.empty());
    }
    JsonNode document;
    try {
      document = mapper.readTree(body);
    } catch (JacksonException e) {
      throw new IllegalArgumentException(
          "The request body is not valid JSON ("
              + e.getOriginalMessage().lines().findFirst().orElse("")
              + "). Send a JSON object such as {\"arguments\": {...}}.");
    }
    if (!document.isObject()) {
      throw new IllegalArgumentException(
          "The request body must be a JSON object such as {\"arguments\": {...}}, not "
              + kind(document)
              + ".");
    }
    List<String> unknown = new ArrayList<>();
    for (Map.Entry<String, JsonNode> field : document.properties()) {
      if (!FIELDS.contains(field.getKey())) {
        unknown.add(field.getKey());
      }
    }
    if (!unknown.isEmpty()) {
      throw new IllegalArgumentException(
          "Unknown field"
              + (unknown.size() > 1 ? "s " : " ")
              + String.join(", ", unknown.stream().map(name -> "'" + name + "'").toList())
              + " in the request body (expected: "
              + String.join(", ", FIELDS)
              + ").");
    }
    return new InvokeRequest(
        arguments(document.get("arguments")),
        text(document, "session_id"),
        text(document, "tool_call_id"),
        text(document, "user"),
        timeout(document.get("timeout_ms")),
        text(document, "model"));
  }

  /** This request made as the given user (the principal's), whatever it named. */
  InvokeRequest asUser(Optional<String> callUser) {
    return new InvokeRequest(arguments, sessionId, toolCallId, callUser, timeout, model);
  }

  /**
   * The call this request makes to the named tool, with the request's timeout or, when it names
   * none, the given default (the tool's own).
   */
  ToolCall toCall(String toolName, Duration defaultTimeout) {
    ToolCall call = ToolCall.of(toolName, arguments);
    call = toolCallId.map(call::withCallId).orElse(call);
    // A session is its user's: two users who send one session_id share nothing.
    call =
        sessionId
            .map(session -> user.map(owner -> owner + "/" + session).orElse(session))
            .map(call::withSessionId)
            .orElse(call);
    call = user.map(call::withUser).orElse(call);
    call = model.map(call::withModel).orElse(call);
    return call.withTimeout(timeout.orElse(defaultTimeout));
  }

  private static String arguments(JsonNode arguments) {
    if (arguments == null || arguments.isNull()) {
      return "{}";
    }
    if (arguments.isObject()) {
      return arguments.toString();
    }
    if (arguments.isString()) {
      // JSON text, as models write it; the dispatcher parses and validates it.
      return arguments.asString();
    }
    throw new IllegalArgumentException(
        "'arguments' must be a JSON object or a string of JSON text, not " + kind(arguments) + ".");
  }

  private static Optional<String> text(JsonNode document, String field) {
    JsonNode value = document.get(field);
    if (value == null || value.isNull()) {
      return Optional.empty();
    }
    if (!value.isString()) {
      throw new IllegalArgumentException(
          "'" + field + "' must be a string, not " + kind(value) + ".");
    }
    return Optional.of(value.asString());
  }

  private static Optional<Duration> timeout(JsonNode value) {
    if (value == null || value.isNull()) {
      return Optional.empty();
    }
    if (!value.isIntegralNumber() || !value.canConvertToLong() || value.asLong() <= 0) {
      throw new IllegalArgumentException(
          "'timeout_ms' must be a positive whole number of milliseconds, not "
              + (value.isNumber() ? value.toString() : kind(value))
              + ".");
    }
    return Optional.of(Duration.ofMillis(value.asLong()));
  }

  private static String kind(JsonNode node) {
    return switch (node.getNodeType()) {
      case ARRAY -> "an array";
      case OBJECT -> "an object";
      case STRING -> "a string";
      case NUMBER -> "a number";
      case BOOLEAN -> "a boolean";
      case NULL -> "null";
      default -> node.getNodeType().name().toLowerCase(Locale.ROOT);
    };
  }
}
