package dev.toolhost.bus;

import java.time.DateTimeException;
import java.time.Instant;
import java.util.Objects;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * A call cancel is the message that tells the workers of a group to stop one call: {@code {type:
 * "cancel", call_key, tool_call_id, deadline}}, published on the group's topic {@code
 * toolhost.cancel.{group}} (see {@code docs/wire-protocol.md}). Every worker of the group hears it;
 * the one running the call stops it and answers {@code cancelled}, the others remember the key
 * until the deadline, so that a request taken from the queue after its cancel is answered {@code
 * cancelled} without running.
 *
 * @param callKey the call's key, as in its request
 * @param toolCallId the caller's label for the call, for logs only
 * @param deadline the call's deadline: nobody needs to remember the cancel after it
 */
public record CallCancel(String callKey, String toolCallId, Instant deadline) {

  private static final JsonMapper JSON = JsonMapper.shared();

  public CallCancel {
    Objects.requireNonNull(callKey, "callKey");
    Objects.requireNonNull(toolCallId, "toolCallId");
    Objects.requireNonNull(deadline, "deadline");
  }

  /** The topic on which a group's workers hear cancels: {@code toolhost.cancel.{group}}. */
  public static String topic(String group) {
    return "toolhost.cancel." + group;
  }

  /** The cancel as a message, expiring at the call's deadline. */
  public Message message() {
    ObjectNode body = JSON.createObjectNode();
    body.put("type", "cancel");
    body.put("call_key", callKey);
    body.put("tool_call_id", toolCallId);
    body.put("deadline", InvokeRequest.isoInstant(deadline));
    return Message.of(body.toString()).withExpiration(deadline);
  }

  /**
   * Reads a cancel.
   *
   * @throws IllegalArgumentException saying why the text is not one
   */
  public static CallCancel parse(String text) {
    JsonNode body;
    try {
      body = JSON.readTree(text);
    } catch (JacksonException e) {
      throw WireJson.notJson(e);
    }
    if (body == null || !body.isObject()) {
      throw WireJson.notAnObject();
    }
    if (!body.path("type").asString("").equals("cancel")) {
      throw new IllegalArgumentException("not a cancel: its 'type' is not 'cancel'");
    }
    String key = body.path("call_key").asString("");
    if (key.isEmpty() || key.length() > 128) {
      throw new IllegalArgumentException(
          "'call_key' is missing, empty or longer than 128 characters");
    }
    Instant deadline;
    try {
      deadline = InvokeRequest.instant(body.path("deadline").asString(""));
    } catch (DateTimeException e) {
      throw new IllegalArgumentException(
          "'deadline' is missing or not an ISO-8601 instant such as 2026-01-01T00:00:00Z");
    }
    return new CallCancel(key, body.path("tool_call_id").asString(""), deadline);
  }
}
