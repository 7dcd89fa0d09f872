package dev.toolhost.bus;

import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import dev.toolhost.core.TraceContext;
import io.opentelemetry.context.Scope;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The invoke handler takes tool invoke requests off the bus, runs them through the dispatch path,
 * and replies: bus to registry.
 *
 * <p>Every request runs through {@link ToolDispatcher#dispatch}, so failures are classified exactly
 * as the core does (unknown tool {@code tool_not_found}, bad arguments {@code invalid_arguments}, a
 * thrown exception {@code execution_failed}, the deadline {@code timeout}). The reply goes to the
 * request's reply-to with its correlation id, and the request is acknowledged only once the bus has
 * taken the reply ({@link MessageBus#replyThenAck}). A request whose deadline has passed is not
 * executed (it answers {@code timeout}). A request delivered again whose first execution finished
 * is answered from the {@link ResultStore}; one whose first execution still runs waits for it. The
 * store knows a call by the group and the request's {@linkplain InvokeRequest#callKey call key},
 * the host's own id for it; the caller's {@code tool_call_id} is only the label the reply carries.
 * A message that is not valid JSON, or not a request, is dead-lettered with a log line saying why;
 * it never throws. A request over the bus's maximum message size is dead-lettered by the bus; the
 * handler answers its caller {@code invalid_arguments}, naming the size and the limit. A result too
 * large to send back is stored and answered as {@code execution_failed}, naming its size.
 *
 * <p>A {@linkplain #cancel cancel} of a call that runs here interrupts its thread, and the call is
 * answered {@code cancelled}, saying its work may have been done; that reply is its stored result.
 * A request whose cancel came first is claimed and answered {@code cancelled} without running.
 *
 * <p>A call's claim in the store is a lease, renewed every third of it while the call runs (one
 * thread renews every claim this handler holds). A request delivered again after the worker that
 * claimed it died waits at most one lease for the claim to lapse, then runs; while the holder lives
 * and renews, the request waits for its result instead.
 *
 * <p>A request runs on a virtual thread of its own, so that a slow tool never holds up the
 * deliveries behind it; except a request for an {@linkplain
 * dev.toolhost.core.ExecutableTool#inline() inline} tool (or for no tool at all) with an in-process
 * result store: nothing on its way blocks, so it runs on the delivery's own thread and saves the
 * thread hop. Waiting for another execution of the same call always moves to a thread of its own.
 */
public final class InvokeHandler implements MessageBus.DeliveryHandler, AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(InvokeHandler.class);
  private static final ThreadFactory THREADS =
      Thread.ofVirtual().name("toolhost-invoke-", 0).factory();
  // A request waiting for another execution of its call asks the store again after a pause that
  // doubles from the first to the last: a quick answer for a duplicate of a short call, few round
  // trips for one that waits out a lease.
  private static final Duration FIRST_WAIT = Duration.ofMillis(20);
  private static final Duration LAST_WAIT = Duration.ofMillis(250);
  // A request past its deadline is never run nor answered from the store, so a result is kept
  // until then, plus a margin: in a store that workers share, for their clocks; in this process's
  // own store, read by one clock, only for a request checked just before its deadline that claims
  // just after.
  private static final Duration AFTER_DEADLINE = Duration.ofSeconds(30);
  private static final Duration AFTER_DEADLINE_IN_PROCESS = Duration.ofSeconds(1);

  private final MessageBus bus;
  private final String queue;
  private final String group;
  private final ToolSet tools;
  private final ToolDispatcher dispatcher;
  private final ResultStore results;
  private final Duration keep;
  private final Duration lease;
  // The claims of calls running now, renewed by one thread started with the first of them.
  private final Map<String, ResultStore.Granted> held = new ConcurrentHashMap<>();
  // The calls running here that a cancel may stop, and the cancelled calls still remembered.
  private final Cancellations cancellations = new Cancellations();
  private volatile Thread renewing;
  private boolean closed;

  /**
   * A handler for the requests of one worker group.
   *
   * @param keep how long finished results are remembered at most; a result is kept no longer than 1
   *     s past its call's deadline (30 s in a store workers share), after which no request for it
   *     is run or answered
   * @param lease how long a claim holds unless renewed: the longest a request of a worker that died
   *     waits before another worker takes it over; renewed every third of it
   */
  public InvokeHandler(
      MessageBus bus,
      String group,
      ToolSet tools,
      ToolDispatcher dispatcher,
      ResultStore results,
      Duration keep,
      Duration lease) {
    this.bus = Objects.requireNonNull(bus, "bus");
    this.group = Objects.requireNonNull(group, "group");
    this.queue = ToolWorker.queue(group);
    this.tools = Objects.requireNonNull(tools, "tools");
    this.dispatcher = Objects.requireNonNull(dispatcher, "dispatcher");
    this.results = Objects.requireNonNull(results, "results");
    this.keep = Objects.requireNonNull(keep, "keep");
    this.lease = Objects.requireNonNull(lease, "lease");
    if (lease.toMillis() < 30) {
      throw new IllegalArgumentException("A lease must be 30 ms or longer, not " + lease + ".");
    }
  }

  @Override
  public void handle(Delivery delivery) {
    InvokeRequest request;
    try {
      request = InvokeRequest.parse(delivery.message().body());
    } catch (IllegalArgumentException e) {
      LOG.warn(
          "Dead-lettered a message on queue '{}': {} (body starts: {})",
          queue,
          e.getMessage(),
          abbreviate(delivery.message().body()));
      delivery.deadLetter(e.getMessage());
      return;
    }
    ToolCall call = request.call();
    // The store knows a call by the host's key for it, never by the caller's tool_call_id alone:
    // two callers' call_0 are two calls.
    String key = group + ":" + request.callKey();
    if (!results.remote() && runsInline(call)) {
      run(delivery, call, key, true);
    } else {
      THREADS.newThread(() -> run(delivery, call, key, false)).start();
    }
  }

  /**
   * Takes a {@link CallCancel} from the group's cancel topic: the call it names, when it runs here,
   * has its thread interrupted (the dispatch path interrupts the tool's own thread in turn) and is
   * answered {@code cancelled}; a call that does not run here is remembered until its deadline, so
   * that its request, if it comes later, is answered {@code cancelled} without running. A call that
   * finished already keeps its result. A message that is not a cancel is logged and dropped; it
   * never throws.
   */
  public void cancel(Delivery delivery) {
    delivery.ack();
    CallCancel cancel;
    try {
      cancel = CallCancel.parse(delivery.message().body());
    } catch (IllegalArgumentException e) {
      LOG.warn(
          "Dropped a message on '{}' that is not a cancel: {} (body starts: {})",
          CallCancel.topic(group),
          e.getMessage(),
          abbreviate(delivery.message().body()));
      return;
    }
    if (cancellations.cancel(group + ":" + cancel.callKey(), cancel.deadline())) {
      LOG.info(
          "Stopping call {} ({}): its caller cancelled it", cancel.toolCallId(), cancel.callKey());
    }
  }

  /** Whether the tool of that name is a tool of the named MCP server, ignoring case. */
  private boolean bridges(String server, String toolName) {
    return tools
        .find(toolName)
        .map(
            entry ->
                entry.tool().spec().source().equalsIgnoreCase(McpServerState.source(server))
                    // A management call (registering the server, say) names the server too.
                    || entry.tool().spec().source().equals(McpServerState.MANAGEMENT_SOURCE))
        .orElse(false);
  }

  private boolean runsInline(ToolCall call) {
    return tools.find(call.toolName()).map(entry -> entry.tool().inline()).orElse(true);
  }

  private void run(Delivery delivery, ToolCall call, String key, boolean onDeliveryThread) {
    try {
      if (!call.deadline().isAfter(Instant.now())) {
        LOG.info(
            "Skipped call {} of tool '{}': its deadline passed before it arrived",
            call.callId(),
            call.toolName());
        reply(
            delivery,
            call,
            ToolResult.failure(
                ErrorCode.TIMEOUT,
                "Tool '"
                    + call.toolName()
                    + "' was not run: the call's deadline passed before a worker got it. You may retry."));
        return;
      }
      String server = delivery.message().headers().get(RemoteToolExecutor.MCP_SERVER_HEADER);
      if (server != null && tools.find(call.toolName()).isEmpty()) {
        // Another worker of the group announced it: this one has not connected the server yet
        // (starting, reconnecting, a registration not applied yet), so a retry may find it.
        reply(
            delivery,
            call,
            ToolResult.failure(
                ErrorCode.UNAVAILABLE,
                "Tool '"
                    + call.toolName()
                    + "' of MCP server '"
                    + server
                    + "' is not connected on the worker that took the call. You may retry."));
        return;
      }
      if (server != null && !bridges(server, call.toolName())) {
        reply(
            delivery,
            call,
            ToolResult.failure(
                ErrorCode.TOOL_NOT_FOUND,
                "Tool '"
                    + call.toolName()
                    + "' of this worker is not a tool of MCP server '"
                    + server
                    + "'."));
        return;
      }
      Duration wait = FIRST_WAIT;
      while (true) {
        switch (results.claim(key, lease)) {
          case ResultStore.Finished finished -> {
            LOG.info(
                "Answered call {} of tool '{}' from its first execution",
                call.callId(),
                call.toolName());
            sendAndAck(delivery, finished.reply());
            return;
          }
          case ResultStore.Running running -> {
            if (onDeliveryThread) {
              // Waiting must not hold up the deliveries behind this one.
              THREADS.newThread(() -> run(delivery, call, key, false)).start();
              return;
            }
            if (!call.deadline().isAfter(Instant.now())) {
              delivery.ack();
              return;
            }
            Thread.sleep(wait);
            wait = wait.multipliedBy(2).compareTo(LAST_WAIT) < 0 ? wait.multipliedBy(2) : LAST_WAIT;
          }
          case ResultStore.Granted granted -> {
            hold(key, granted);
            ToolResult result;
            // A cancel interrupts a call's own thread, never the delivery's: an inline call, which
            // runs there, returns at once anyway.
            boolean stoppable = !onDeliveryThread;
            if (stoppable ? !cancellations.start(key) : cancellations.cancelled(key)) {
              LOG.info(
                  "Did not run call {} of tool '{}': its caller cancelled it before it arrived",
                  call.callId(),
                  call.toolName());
              result = cancelledBeforeRun(call);
            } else {
              boolean stopped = false;
              // The caller's trace, in the request's headers, is the parent of the tool's span.
              try (Scope ignored = TraceContext.continueFrom(delivery.message().headers())) {
                result = dispatcher.dispatch(tools, call);
              } catch (RuntimeException e) {
                held.remove(key);
                results.release(key, granted);
                throw e;
              } finally {
                if (stoppable) {
                  stopped = cancellations.end(key);
                }
              }
              if (stopped
                  && result instanceof ToolResult.Failure failure
                  && failure.error().code() == ErrorCode.CANCELLED) {
                result = cancelledWhileRunning(call);
              }
            }
            String reply = sendable(call, result);
            try {
              results.finish(key, reply, keepFor(call));
            } finally {
              held.remove(key);
            }
            sendAndAck(delivery, reply);
            return;
          }
        }
      }
    } catch (InterruptedException e) {
      // The worker is stopping: the request stays unacknowledged and goes to another worker.
      Thread.currentThread().interrupt();
    } catch (BusException e) {
      // Not acknowledged: the broker delivers it again, and it is answered from the store.
      LOG.warn(
          "Could not reply to call {} of tool '{}': {}",
          call.callId(),
          call.toolName(),
          e.getMessage());
    } catch (RuntimeException e) {
      LOG.error(
          "The invoke handler failed on call {} of tool '{}'", call.callId(), call.toolName(), e);
    }
  }

  private static ToolResult cancelledBeforeRun(ToolCall call) {
    return ToolResult.failure(
        ErrorCode.CANCELLED,
        "The call to tool '"
            + call.toolName()
            + "' was cancelled before it ran; nothing of it was done.");
  }

  private static ToolResult cancelledWhileRunning(ToolCall call) {
    return ToolResult.failure(
        ErrorCode.CANCELLED,
        "The call to tool '"
            + call.toolName()
            + "' was cancelled while it ran; some or all of its work may have been done.");
  }

  // The reply to a result, or, when it is over the bus's maximum size (the caller could never get
  // it, and a broker might close the channel on it), a failure saying so.
  private String sendable(ToolCall call, ToolResult result) {
    String reply = new InvokeReply(call.callId(), call.toolName(), result).toJson();
    Message message = Message.of(reply);
    if (!message.largerThan(bus.maxMessageSize())) {
      return reply;
    }
    String why =
        "Tool '"
            + call.toolName()
            + "' returned a result of "
            + message.size()
            + " bytes, over the message bus's limit of "
            + bus.maxMessageSize()
            + " bytes.";
    LOG.warn("Call {}: {}", call.callId(), why);
    return new InvokeReply(
            call.callId(),
            call.toolName(),
            ToolResult.failure(ErrorCode.EXECUTION_FAILED, why + " Ask for less."))
        .toJson();
  }

  /**
   * Answers the caller of a request the bus dead-lettered for its size, if it named a reply-to:
   * {@code invalid_arguments}, naming the size and the limit. The request's body is gone, so the
   * reply's call id and tool name are empty; the caller matches it by correlation id.
   */
  @Override
  public void tooLarge(Message withoutBody, long size) {
    if (withoutBody.replyTo().isEmpty()) {
      return;
    }
    String reply =
        new InvokeReply(
                "",
                "",
                ToolResult.failure(
                    ErrorCode.INVALID_ARGUMENTS,
                    "The tool was not called: its request was "
                        + size
                        + " bytes, over the worker's limit of "
                        + bus.maxMessageSize()
                        + " bytes. Send smaller arguments."))
            .toJson();
    // Off the delivery thread: the reply waits for the broker's confirm.
    THREADS
        .newThread(
            () -> {
              try {
                bus.reply(withoutBody, Message.of(reply));
              } catch (BusException e) {
                LOG.debug("Could not answer an oversized request: {}", e.getMessage());
              }
            })
        .start();
  }

  private void hold(String key, ResultStore.Granted granted) {
    held.put(key, granted);
    // Every call passes here: the lock only until the renewing thread is there.
    if (renewing == null) {
      synchronized (this) {
        if (renewing == null && !closed) {
          renewing = Thread.ofVirtual().name("toolhost-invoke-lease-" + group).start(this::renew);
        }
      }
    }
  }

  // Renews every held claim each third of a lease. A claim that is no longer this handler's lapsed
  // (the worker stalled for a whole lease): another worker may run the call now; this run goes on,
  // since a tool cannot be stopped safely halfway, and its result is stored all the same. Once the
  // handler is closed, it renews until the calls still running have finished, then ends.
  private void renew() {
    Duration every = lease.dividedBy(3);
    try {
      while (true) {
        Thread.sleep(every);
        if (closed() && held.isEmpty()) {
          return;
        }
        for (Map.Entry<String, ResultStore.Granted> claim : held.entrySet()) {
          try {
            if (!results.renew(claim.getKey(), claim.getValue(), lease)
                && held.remove(claim.getKey(), claim.getValue())) {
              LOG.warn(
                  "The claim of call {} lapsed before it finished; another worker may run it",
                  claim.getKey());
            }
          } catch (BusException e) {
            LOG.warn("Could not renew the claim of call {}: {}", claim.getKey(), e.getMessage());
          }
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private synchronized boolean closed() {
    return closed;
  }

  /**
   * Closes the handler. Claims of calls still running are renewed until they finish (their
   * deliveries went back to the queue, and another worker waits for their results rather than
   * running them again); with none running, the renewing thread ends now.
   */
  @Override
  public void close() {
    Thread stopping;
    synchronized (this) {
      closed = true;
      stopping = held.isEmpty() ? renewing : null;
    }
    if (stopping != null) {
      stopping.interrupt();
      try {
        stopping.join(Duration.ofSeconds(5));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private Duration keepFor(ToolCall call) {
    Duration untilDeadline =
        Duration.between(Instant.now(), call.deadline())
            .plus(results.remote() ? AFTER_DEADLINE : AFTER_DEADLINE_IN_PROCESS);
    return untilDeadline.compareTo(keep) < 0 ? untilDeadline : keep;
  }

  private void reply(Delivery delivery, ToolCall call, ToolResult result) {
    sendAndAck(delivery, new InvokeReply(call.callId(), call.toolName(), result).toJson());
  }

  private void sendAndAck(Delivery delivery, String reply) {
    bus.replyThenAck(delivery, Message.of(reply));
  }

  private static String abbreviate(String body) {
    String oneLine = body.replaceAll("\\s+", " ");
    return oneLine.length() <= 80 ? oneLine : oneLine.substring(0, 80) + "...";
  }
}
