package dev.toolhost.bus;

import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolExecutor;
import dev.toolhost.core.ToolResult;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
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
 *
 * <p>When the waiting thread is interrupted (the caller cancelled), it publishes a {@linkplain
 * #cancel cancel} of the request on the service's {@linkplain #cancelTopic cancel topic} and
 * answers {@code cancelled}; a service that stops a request for a cancel answers an error of type
 * {@value #CANCELLED_TYPE}, which answers {@code cancelled} too. {@link #execute} declares {@link
 * InterruptedException} but never throws it: an interruption is answered.
 */
public final class ToolServiceExecutor implements ToolExecutor {

  private static final JsonMapper JSON = JsonMapper.shared();

  private final MessageBus bus;
  private final ToolServiceDescriptor service;
  private final ToolDescriptor tool;

  /** The error type with which a service answers a request it stopped for a cancel. */
  public static final String CANCELLED_TYPE = "cancelled";

  private static final Logger LOG = LoggerFactory.getLogger(ToolServiceExecutor.class);

  /** An executor of the tool on the service. */
  public ToolServiceExecutor(MessageBus bus, ToolServiceDescriptor service, ToolDescriptor tool) {
    this.bus = Objects.requireNonNull(bus, "bus");
    this.service = Objects.requireNonNull(service, "service");
    this.tool = Objects.requireNonNull(tool, "tool");
  }

  /**
   * The topic on which the instances of a tool service hear cancels of its requests: {@code
   * toolhost.service_cancel.{queue}}, for the service's request queue.
   */
  public static String cancelTopic(String requestQueue) {
    return "toolhost.service_cancel." + requestQueue;
  }

  /**
   * A cancel of a tool-service request: {@code {"cancel": true}} with the request's correlation id
   * (as the property and as header {@code id}), expiring at the request's deadline.
   */
  public static Message cancel(String correlationId, Instant deadline) {
    return Message.of("{\"cancel\":true}")
        .withCorrelationId(correlationId)
        .withExpiration(deadline)
        .withPropertyHeaders();
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
        if (error.isObject() && error.path("type").asString("").equals(CANCELLED_TYPE)) {
          return ToolResult.failure(
              ErrorCode.CANCELLED,
              "The call to tool '"
                  + tool.name()
                  + "' was cancelled by tool service '"
                  + service.id()
                  + "'; some or all of its work may have been done.",
              error.path("message").asString(""));
        }
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
    } catch (InterruptedException e) {
      cancel(replies.correlationId(), call);
      Thread.currentThread().interrupt();
      return ToolResult.failure(
          ErrorCode.CANCELLED,
          "The call to tool '"
              + tool.name()
              + "' was cancelled while tool service '"
              + service.id()
              + "' ran it; the service was told to stop, and some or all of its work may have been"
              + " done.");
    } catch (MessageTooLargeException e) {
      return RemoteToolExecutor.replyTooLarge(tool.name(), e);
    } catch (BusException e) {
      return ToolResult.failure(
          ErrorCode.UNAVAILABLE,
          "The connection to tool '" + tool.name() + "' was lost while it ran. You may retry.",
          e.getMessage());
    }
  }

  // Publishes with the thread's interruption cleared (a broker's publish waits for its confirm),
  // and puts it back after.
  private void cancel(String correlationId, ToolCall call) {
    boolean interrupted = Thread.interrupted();
    try {
      bus.publish(cancelTopic(service.requestQueue()), cancel(correlationId, call.deadline()));
    } catch (BusException e) {
      LOG.warn(
          "Could not tell tool service '{}' to stop call {} of tool '{}'; it runs until its"
              + " deadline: {}",
          service.id(),
          call.callId(),
          tool.name(),
          e.getMessage());
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
