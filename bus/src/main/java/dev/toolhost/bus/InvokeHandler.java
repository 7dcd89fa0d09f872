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
import java.util.Objects;
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
 * is answered from the {@link ResultStore}; one whose first execution still runs waits for it. A
 * message that is not valid JSON, or not a request, is dead-lettered with a log line saying why; it
 * never throws.
 *
 * <p>A request runs on a virtual thread of its own, so that a slow tool never holds up the
 * deliveries behind it; except a request for an {@linkplain
 * dev.toolhost.core.ExecutableTool#inline() inline} tool (or for no tool at all) with an in-process
 * result store: nothing on its way blocks, so it runs on the delivery's own thread and saves the
 * thread hop. Waiting for another execution of the same call always moves to a thread of its own.
 */
public final class InvokeHandler implements MessageBus.DeliveryHandler {

  private static final Logger LOG = LoggerFactory.getLogger(InvokeHandler.class);
  private static final ThreadFactory THREADS =
      Thread.ofVirtual().name("toolhost-invoke-", 0).factory();
  private static final Duration WAIT_STEP = Duration.ofMillis(20);
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

  /**
   * A handler for the requests of one worker group.
   *
   * @param keep how long finished results are remembered at most; a result is kept no longer than 1
   *     s past its call's deadline (30 s in a store workers share), after which no request for it
   *     is run or answered
   */
  public InvokeHandler(
      MessageBus bus,
      String group,
      ToolSet tools,
      ToolDispatcher dispatcher,
      ResultStore results,
      Duration keep) {
    this.bus = Objects.requireNonNull(bus, "bus");
    this.group = Objects.requireNonNull(group, "group");
    this.queue = ToolWorker.queue(group);
    this.tools = Objects.requireNonNull(tools, "tools");
    this.dispatcher = Objects.requireNonNull(dispatcher, "dispatcher");
    this.results = Objects.requireNonNull(results, "results");
    this.keep = Objects.requireNonNull(keep, "keep");
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
    if (!results.remote() && runsInline(call)) {
      run(delivery, call, true);
    } else {
      THREADS.newThread(() -> run(delivery, call, false)).start();
    }
  }

  private boolean runsInline(ToolCall call) {
    return tools.find(call.toolName()).map(entry -> entry.tool().inline()).orElse(true);
  }

  private void run(Delivery delivery, ToolCall call, boolean onDeliveryThread) {
    String key = group + ":" + call.callId();
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
      Duration lease = Duration.between(Instant.now(), call.deadline()).plusSeconds(1);
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
              THREADS.newThread(() -> run(delivery, call, false)).start();
              return;
            }
            if (!call.deadline().isAfter(Instant.now())) {
              delivery.ack();
              return;
            }
            Thread.sleep(WAIT_STEP);
          }
          case ResultStore.Granted granted -> {
            ToolResult result;
            // The caller's trace, in the request's headers, is the parent of the tool's span.
            try (Scope ignored =
                TraceContext.parentFrom(delivery.message().headers()).makeCurrent()) {
              result = dispatcher.dispatch(tools, call);
            } catch (RuntimeException e) {
              results.release(key);
              throw e;
            }
            String reply = new InvokeReply(call.callId(), call.toolName(), result).toJson();
            results.finish(key, reply, keepFor(call));
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
