package dev.toolhost.bus;

import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolExecutor;
import dev.toolhost.core.ToolResult;
import java.util.Objects;
import java.util.Optional;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * The tool service executor calls a tool service for one tool: it sends the envelope {@code {user,
 * <config values>, arguments}} to the service's queue and reads replies {@code {response, error:
 * {type, message}, end_of_message}} until one ends the message ({@code end_of_stream} is accepted
 * too). The responses of several replies are joined in order; a response that is not a string
 * becomes its JSON text. An error reply answers {@code execution_failed} with the service's type
 * and message. No service consuming answers {@code unavailable} at once; no end by the deadline
 * answers {@code timeout}. It never throws.
 */
public final class ToolServiceExecutor implements ToolExecutor {

  private static final JsonMapper JSON = JsonMapper.shared();

  private final MessageBus bus;
  private final ToolServiceDescriptor service;
  private final ToolDescriptor tool;

  /** An executor of the tool on the service. */
  public ToolServiceExecutor(MessageBus bus, ToolServiceDescriptor service, ToolDescriptor tool) {
    this.bus = Objects.requireNonNull(bus, "bus");
    this.service = Objects.requireNonNull(service, "service");
    this.tool = Objects.requireNonNull(tool, "tool");
  }

  /** The source of tools of a tool service: {@code service:{id}}. */
  public static String source(String serviceId) {
    return "service:" + serviceId;
  }

  @Override
  public ToolResult execute(ToolCall call, JsonNode arguments) throws InterruptedException {
    ObjectNode envelope = JSON.createObjectNode();
    envelope.put("user", call.user().orElse(""));
    tool.config().forEach(envelope::set);
    envelope.set("arguments", arguments);
    Replies replies;
    try {
      replies =
          bus.request(
              service.requestQueue(),
              // Tool services follow TrustGraph's convention: correlation id and expiry as headers.
              Message.of(envelope.toString()).withPropertyHeaders(),
              call.deadline());
    } catch (MessageTooLargeException e) {
      return RemoteToolExecutor.requestTooLarge(tool.name(), e);
    } catch (NoRouteException e) {
      return ToolResult.failure(
          ErrorCode.UNAVAILABLE,
          "Tool '"
              + tool.name()
              + "' is unavailable: tool service '"
              + service.id()
              + "' is not running. You may retry later.");
    } catch (BusException e) {
      return ToolResult.failure(
          ErrorCode.UNAVAILABLE,
          "Tool '"
              + tool.name()
              + "' is unavailable: the message bus is not reachable. You may retry later.",
          e.getMessage());
    }
    StringBuilder text = new StringBuilder();
    try (replies) {
      while (true) {
        Optional<Message> reply = replies.next(call.deadline());
        if (reply.isEmpty()) {
          return ToolResult.failure(
              ErrorCode.TIMEOUT,
              "Tool '" + tool.name() + "' did not answer before its deadline. You may retry.");
        }
        JsonNode body;
        try {
          body = JSON.readTree(reply.get().body());
        } catch (JacksonException e) {
          return ToolResult.failure(
              ErrorCode.EXECUTION_FAILED,
              "Tool service '" + service.id() + "' sent a reply that is not JSON.",
              e.getOriginalMessage());
        }
        JsonNode error = body.path("error");
        if (error.isObject()) {
          // The type is the service's own (a Java service sends its exception's class name): the
          // operator's to read, never the model's.
          String type = error.path("type").asString("error");
          String message = error.path("message").asString("").strip();
          return ToolResult.failure(
              ErrorCode.EXECUTION_FAILED,
              message.isEmpty()
                  ? "Tool '" + tool.name() + "' failed."
                  : "Tool '" + tool.name() + "' failed: " + message,
              "tool service '" + service.id() + "' answered an error of type '" + type + "'");
        }
        JsonNode response = body.path("response");
        if (response.isString()) {
          text.append(response.asString());
        } else if (!response.isMissingNode() && !response.isNull()) {
          text.append(response.toString());
        }
        if (body.path("end_of_message").asBoolean(false)
            || body.path("end_of_stream").asBoolean(false)) {
          return ToolResult.success(text.toString());
        }
      }
    } catch (MessageTooLargeException e) {
      return RemoteToolExecutor.replyTooLarge(tool.name(), e);
    } catch (BusException e) {
      return ToolResult.failure(
          ErrorCode.UNAVAILABLE,
          "The connection to tool '" + tool.name() + "' was lost while it ran. You may retry.",
          e.getMessage());
    }
  }
}
