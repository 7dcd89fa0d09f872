package dev.toolhost.bus;

import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolExecutor;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.TraceContext;
import java.util.Objects;
import java.util.Optional;
import tools.jackson.databind.JsonNode;

/**
 * The remote executor runs a tool on a worker of its group over the bus: registry to bus.
 *
 * <p>It publishes an {@link InvokeRequest} to {@code toolhost.invoke.{group}} (confirmed, expiring
 * at the call's deadline) and waits for the reply until the deadline; the broker's confirm is
 * awaited alongside the reply, not before it, and a refused request fails the call as soon as the
 * broker says so. A tool no worker hosts answers {@code unavailable} at once; no reply by the
 * deadline answers {@code timeout}, and a reply that comes later is dropped; a lost broker
 * connection answers {@code unavailable} as soon as it is noticed. It never throws.
 */
public final class RemoteToolExecutor implements ToolExecutor {

  private final MessageBus bus;
  private final String group;

  /** An executor for tools of the given worker group. */
  public RemoteToolExecutor(MessageBus bus, String group) {
    this.bus = Objects.requireNonNull(bus, "bus");
    this.group = Objects.requireNonNull(group, "group");
  }

  /** The source of tools run by workers of a group: {@code remote:{group}}. */
  public static String source(String group) {
    return "remote:" + group;
  }

  @Override
  public ToolResult execute(ToolCall call, JsonNode arguments) throws InterruptedException {
    // The arguments the dispatch path parsed and validated go out as they are, not re-read. The
    // caller's trace goes in headers, only when there is one: an untraced call carries none.
    Message request =
        Message.of(new InvokeRequest(call).toJson(arguments)).withHeaders(TraceContext.current());
    Replies replies;
    try {
      replies = bus.request(ToolWorker.queue(group), request, call.deadline());
    } catch (NoRouteException e) {
      return noWorker(call);
    } catch (BusException e) {
      return ToolResult.failure(
          ErrorCode.UNAVAILABLE,
          "Tool '"
              + call.toolName()
              + "' is unavailable: the message bus is not reachable. You may retry later.",
          e.getMessage());
    }
    try (replies) {
      Optional<Message> reply = replies.next(call.deadline());
      if (reply.isEmpty()) {
        return ToolResult.failure(
            ErrorCode.TIMEOUT,
            "Tool '" + call.toolName() + "' did not answer before its deadline. You may retry.");
      }
      try {
        return InvokeReply.parse(reply.get().body()).result();
      } catch (IllegalArgumentException e) {
        return ToolResult.failure(
            ErrorCode.EXECUTION_FAILED,
            "Tool '" + call.toolName() + "' sent a reply that could not be read.",
            e.getMessage());
      }
    } catch (NoRouteException e) {
      // The broker returned the request: the queue went away after its consumers were counted.
      return noWorker(call);
    } catch (BusException e) {
      return ToolResult.failure(
          ErrorCode.UNAVAILABLE,
          "The connection to tool '"
              + call.toolName()
              + "' was lost while it ran; it may or may not have finished. You may retry.",
          e.getMessage());
    }
  }

  private ToolResult noWorker(ToolCall call) {
    return ToolResult.failure(
        ErrorCode.UNAVAILABLE,
        "Tool '"
            + call.toolName()
            + "' is unavailable: no worker of group '"
            + group
            + "' is running. You may retry later.");
  }
}
