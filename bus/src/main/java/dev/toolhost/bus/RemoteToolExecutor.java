package dev.toolhost.bus;

import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolExecutor;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.TraceContext;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.JsonNode;

/**
 * The remote executor runs a tool on a worker of its group over the bus: registry to bus.
 *
 * <p>It publishes an {@link InvokeRequest} to {@code toolhost.invoke.{group}} (confirmed, expiring
 * at the call's deadline) and waits for the reply until the deadline; the broker's confirm is
 * awaited alongside the reply, not before it, and a refused request fails the call as soon as the
 * broker says so. A tool no worker hosts answers {@code unavailable} without its request being sent
 * (once the waits for reconnecting workers below are over); no reply by the deadline answers {@code
 * timeout}, and a reply that comes later is dropped.
 *
 * <p>Each call gets a {@linkplain CallKey call key} of its own, minted here, and that is the
 * request's idempotency key (the caller's call id is only a label: two callers' {@code call_0} are
 * two calls, and so are two calls of one caller): workers answer a request for a call that ran from
 * its stored result, and one for a call still running with that run's result. So when the
 * connection to the broker is lost while a reply is awaited, the executor sends the same request
 * (same call key) again once the bus is back, as often as it takes until the deadline, instead of
 * answering that the call may or may not have run. A bus that is not reachable when the call starts
 * is waited for at most {@link #RECONNECT_WAIT} (the call never left, so {@code unavailable} is the
 * truth), and once it is back, the group's workers are waited for as long again (the broker that
 * dropped this host's connection dropped theirs too, and they may consume again a little later). So
 * is a worker of the group that reconnects on its own, when the executor is told that the group's
 * workers are alive (their heartbeats, in {@link RemoteTools}): nobody consuming then means a
 * worker reconnecting, and only after that wait does the call answer that none runs. A connection
 * lost after the request went out is waited for until the deadline, and only then answers {@code
 * unavailable}. A bus closed by its owner is not waited for: {@code unavailable} at once. A request
 * over the bus's maximum message size is not sent: {@code invalid_arguments}. It never throws.
 *
 * <p>A call whose waiting thread is interrupted after its request went out is cancelled on the
 * workers too: the executor publishes a {@link CallCancel} on {@code toolhost.cancel.{group}} and
 * answers {@code cancelled}.
 *
 * <p>The executor of a tool of an MCP server that the group's workers bridge names the server in
 * the request's {@value #MCP_SERVER_HEADER} header, and a worker that does not host that tool for
 * that server answers {@code tool_not_found}.
 */
public final class RemoteToolExecutor implements ToolExecutor {

  /** How long a call that was never sent waits for an unreachable bus to come back. */
  public static final Duration RECONNECT_WAIT = Duration.ofSeconds(5);

  private static final Logger LOG = LoggerFactory.getLogger(RemoteToolExecutor.class);
  private static final Duration FIRST_PAUSE = Duration.ofMillis(50);
  private static final Duration LAST_PAUSE = Duration.ofSeconds(1);

  /** The request header that names the MCP server whose tool a request calls. */
  public static final String MCP_SERVER_HEADER = "toolhost_mcp_server";

  private final MessageBus bus;
  private final String group;
  private final Optional<String> mcpServer;
  private final BooleanSupplier workersKnown;

  /** An executor for tools of the given worker group. */
  public RemoteToolExecutor(MessageBus bus, String group) {
    this(bus, group, Optional.empty());
  }

  /**
   * An executor for tools of the given worker group; for the tools of an MCP server the group's
   * workers bridge, with that server's name.
   */
  public RemoteToolExecutor(MessageBus bus, String group, Optional<String> mcpServer) {
    this(bus, group, mcpServer, () -> false);
  }

  /**
   * An executor for tools of the given worker group, as above, that knows whether the group has
   * workers that announced themselves and whose heartbeats have not lapsed: while it has, a call
   * that finds nobody consuming the group's queue waits up to {@link #RECONNECT_WAIT} for a worker
   * that is reconnecting, instead of answering at once that none runs.
   */
  public RemoteToolExecutor(
      MessageBus bus, String group, Optional<String> mcpServer, BooleanSupplier workersKnown) {
    this.bus = Objects.requireNonNull(bus, "bus");
    this.group = Objects.requireNonNull(group, "group");
    this.mcpServer = Objects.requireNonNull(mcpServer, "mcpServer");
    this.workersKnown = Objects.requireNonNull(workersKnown, "workersKnown");
  }

  /** The source of tools run by workers of a group: {@code remote:{group}}. */
  public static String source(String group) {
    return "remote:" + group;
  }

  /**
   * Tells the group's workers to stop the call. The thread's interruption is cleared while it
   * publishes (a broker's publish waits for its confirm, which an interrupted thread cannot), and
   * put back after; a cancel that cannot be sent is logged, and the call runs to its deadline.
   */
  private void cancel(InvokeRequest invoke) {
    boolean interrupted = Thread.interrupted();
    try {
      bus.publish(
          CallCancel.topic(group),
          new CallCancel(invoke.callKey(), invoke.call().callId(), invoke.call().deadline())
              .message());
    } catch (BusException e) {
      LOG.warn(
          "Could not tell the workers of group '{}' to stop call {} of tool '{}'; it runs until its"
              + " deadline: {}",
          group,
          invoke.call().callId(),
          invoke.call().toolName(),
          e.getMessage());
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /**
   * Runs the call on a worker. When the waiting thread is interrupted (the dispatcher's cancel: a
   * caller's cancel, an HTTP client gone, an agent's Ctrl-C) after the request may have reached a
   * worker, it publishes a {@link CallCancel} for the call's key to the group's workers before it
   * answers {@code cancelled}, saying that the tool may have done some of its work; the thread's
   * interruption is kept. It declares {@link InterruptedException} for its callers' sake but never
   * throws it: an interruption is answered.
   */
  @Override
  public ToolResult execute(ToolCall call, JsonNode arguments) throws InterruptedException {
    InvokeRequest invoke = new InvokeRequest(call);
    // The arguments the dispatch path parsed and validated go out as they are, not re-read. The
    // caller's trace goes in headers, only when there is one: an untraced call carries none. The
    // request, and so its call key, is made once: every copy sent again is the same call.
    Map<String, String> headers = TraceContext.current();
    if (mcpServer.isPresent()) {
      headers = new HashMap<>(headers);
      headers.put(MCP_SERVER_HEADER, mcpServer.get());
    }
    Message request = Message.of(invoke.toJson(arguments)).withHeaders(headers);
    Instant start = Instant.now();
    // Whether a request may have reached a worker: then the call may be running, and only its
    // deadline ends the waiting.
    boolean sent = false;
    BusException lost = null;
    // A call not sent yet that finds nobody consuming waits for workers to consume again, up to
    // RECONNECT_WAIT: from when it last found the bus not connected (a broker that dropped this
    // host's connection dropped the workers' too, and they may consume again a little after this
    // host is back), or from when it first found nobody while the group's workers are known to live
    // (a worker reconnecting on its own).
    Instant unreachable = null;
    Instant unconsumed = null;
    Duration pause = FIRST_PAUSE;
    // Whether a request went to the bus: a cancel must reach the workers then.
    boolean published = false;
    try {
      while (true) {
        Replies replies;
        try {
          replies = bus.request(ToolWorker.queue(group), request, call.deadline());
          published = true;
        } catch (MessageTooLargeException e) {
          return requestTooLarge(call.toolName(), e);
        } catch (BusClosedException e) {
          return closed(call, sent, e);
        } catch (NoRouteException e) {
          if (!sent) {
            Instant now = Instant.now();
            boolean known = workersKnown.getAsBoolean();
            if (known && unconsumed == null) {
              unconsumed = now;
            }
            boolean hostReconnected =
                unreachable != null && now.isBefore(unreachable.plus(RECONNECT_WAIT));
            boolean workerReconnecting = known && now.isBefore(unconsumed.plus(RECONNECT_WAIT));
            if (!hostReconnected && !workerReconnecting) {
              return noWorker(call);
            }
          }
          // The workers lost their connections, and have not consumed again yet.
          lost = e;
          replies = null;
        } catch (BusException e) {
          if (!sent && !Instant.now().isBefore(start.plus(RECONNECT_WAIT))) {
            return unreachable(call, e);
          }
          if (!sent) {
            unreachable = Instant.now();
          }
          lost = e;
          replies = null;
        }
        if (replies != null) {
          try (Replies waiting = replies) {
            Optional<Message> reply = waiting.next(call.deadline());
            if (reply.isEmpty()) {
              return ToolResult.failure(
                  ErrorCode.TIMEOUT,
                  "Tool '"
                      + call.toolName()
                      + "' did not answer before its deadline. You may retry.");
            }
            return read(call, reply.get());
          } catch (MessageTooLargeException e) {
            return replyTooLarge(call.toolName(), e);
          } catch (BusClosedException e) {
            return closed(call, true, e);
          } catch (NoRouteException e) {
            if (!sent) {
              // The broker returned the request: the queue went away after its consumers were
              // counted.
              return noWorker(call);
            }
            lost = e;
          } catch (BusException e) {
            sent = true;
            lost = e;
            LOG.debug(
                "Lost the reply of call {} of tool '{}'; sending it again: {}",
                call.callId(),
                call.toolName(),
                e.getMessage());
          }
        }
        Instant now = Instant.now();
        if (!now.plus(pause).isBefore(call.deadline())) {
          if (!sent) {
            // Never sent: it did not run, and the answer says why.
            return lost instanceof NoRouteException ? noWorker(call) : unreachable(call, lost);
          }
          Thread.sleep(Math.max(0, now.until(call.deadline(), ChronoUnit.MILLIS)));
          return ToolResult.failure(
              ErrorCode.UNAVAILABLE,
              "The connection to tool '"
                  + call.toolName()
                  + "' was lost while it ran and did not come back before the call's deadline; it"
                  + " may or may not have finished. You may retry.",
              lost.getMessage());
        }
        Thread.sleep(pause);
        pause =
            pause.multipliedBy(2).compareTo(LAST_PAUSE) < 0 ? pause.multipliedBy(2) : LAST_PAUSE;
      }
    } catch (InterruptedException e) {
      if (!published) {
        Thread.currentThread().interrupt();
        return ToolResult.failure(
            ErrorCode.CANCELLED,
            "The call to tool '"
                + call.toolName()
                + "' was cancelled before it was sent; it did not run.");
      }
      cancel(invoke);
      Thread.currentThread().interrupt();
      return ToolResult.failure(
          ErrorCode.CANCELLED,
          "The call to tool '"
              + call.toolName()
              + "' was cancelled while it ran on a worker; the worker was told to stop it, and some"
              + " or all of its work may have been done.");
    }
  }

  // The bus was closed (the host is stopping): it will not come back, so nothing is sent again.
  private static ToolResult closed(ToolCall call, boolean sent, BusClosedException e) {
    return ToolResult.failure(
        ErrorCode.UNAVAILABLE,
        sent
            ? "The connection to tool '"
                + call.toolName()
                + "' was closed while it ran; it may or may not have finished. You may retry."
            : "Tool '" + call.toolName() + "' is unavailable: the message bus is closed.",
        e.getMessage());
  }

  private static ToolResult read(ToolCall call, Message reply) {
    try {
      return InvokeReply.parse(reply.body()).result();
    } catch (IllegalArgumentException e) {
      return ToolResult.failure(
          ErrorCode.EXECUTION_FAILED,
          "Tool '" + call.toolName() + "' sent a reply that could not be read.",
          e.getMessage());
    }
  }

  /** A request the bus refused for its size, as {@code invalid_arguments}: nothing was sent. */
  static ToolResult requestTooLarge(String toolName, MessageTooLargeException e) {
    return ToolResult.failure(
        ErrorCode.INVALID_ARGUMENTS,
        "Tool '"
            + toolName
            + "' was not called: its request is "
            + e.size()
            + " bytes, over the message bus's limit of "
            + e.limit()
            + " bytes. Send smaller arguments.",
        e.getMessage());
  }

  /** A reply the bus dropped for its size, as {@code execution_failed}: the tool ran. */
  static ToolResult replyTooLarge(String toolName, MessageTooLargeException e) {
    return ToolResult.failure(
        ErrorCode.EXECUTION_FAILED,
        "Tool '"
            + toolName
            + "' answered with "
            + e.size()
            + " bytes, over the message bus's limit of "
            + e.limit()
            + " bytes.",
        e.getMessage());
  }

  private static ToolResult unreachable(ToolCall call, BusException e) {
    return ToolResult.failure(
        ErrorCode.UNAVAILABLE,
        "Tool '"
            + call.toolName()
            + "' is unavailable: the message bus is not reachable. You may retry later.",
        e.getMessage());
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
