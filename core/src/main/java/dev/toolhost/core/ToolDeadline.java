package dev.toolhost.core;

import io.opentelemetry.context.Context;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The deadline step of the dispatch path: it runs the rest of the chain on a virtual thread of its
 * own and waits for it until the call's deadline, never longer.
 *
 * <p>At the deadline the tool's thread is interrupted and the call answers {@code timeout}
 * (retryable), whether or not the tool stops. When the waiting thread is interrupted (the caller
 * cancelled), the tool's thread is interrupted too and the call answers {@code cancelled}, in the
 * tool's own words if it answers within {@link #CANCEL_GRACE}. A call whose deadline has already
 * passed does not run at all.
 *
 * <p>An {@linkplain ExecutableTool#inline() inline} tool, whose executor returns by the deadline on
 * its own (it never blocks, or it bounds every wait by the deadline), runs on the caller's thread
 * instead: its deadline and the caller's interruption are checked before it starts, and the thread
 * hop, which costs tens of microseconds from a platform thread, is skipped.
 */
final class ToolDeadline implements ToolInterceptor {

  /** How long a cancelled call waits for its tool's own answer before answering without it. */
  static final Duration CANCEL_GRACE = Duration.ofMillis(200);

  private static final ThreadFactory THREADS =
      Thread.ofVirtual().name("toolhost-tool-", 0).factory();

  @Override
  public ToolResult intercept(Chain chain) {
    ToolCall call = chain.call();
    if (chain instanceof ToolDispatcher.DispatchChain dispatch && dispatch.inline()) {
      // As of the call's arrival, microseconds ago: no clock read on the inline path.
      if (EpochClock.passed(call.deadline(), chain.startNanos())) {
        return timeout(call);
      }
      if (Thread.currentThread().isInterrupted()) {
        return ToolDispatcher.cancelled(call.toolName());
      }
      return chain.proceed(call);
    }
    // The tool's own thread waits this long: read the clock now, not as of the call's arrival.
    long remaining = Instant.now().until(call.deadline(), ChronoUnit.NANOS);
    if (remaining <= 0) {
      return timeout(call);
    }
    FutureTask<ToolResult> task =
        new FutureTask<>(Context.current().wrap(() -> chain.proceed(call)));
    Thread tool = THREADS.newThread(task);
    tool.start();
    try {
      return task.get(remaining, TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      task.cancel(true);
      return timeout(call);
    } catch (InterruptedException e) {
      return cancelled(call, task, tool);
    } catch (ExecutionException e) {
      // Executors' exceptions are results already; this is a broken interceptor further in.
      return ToolDispatcher.classify(call.toolName(), e.getCause());
    }
  }

  /**
   * The answer of a call whose caller cancelled it: the tool's thread is interrupted, and its own
   * answer is awaited for {@link #CANCEL_GRACE} (never past the deadline), for an executor that
   * says what became of the work (a remote worker's "may have been done", a sandbox's process
   * killed) to be heard; past that, the call answers {@code cancelled} saying its work may have
   * been done. Whatever it answers is {@code cancelled}: a tool that finished anyway was not waited
   * for. The caller's interruption stays set.
   */
  private static ToolResult cancelled(ToolCall call, FutureTask<ToolResult> task, Thread tool) {
    tool.interrupt();
    long grace =
        Math.min(CANCEL_GRACE.toNanos(), Instant.now().until(call.deadline(), ChronoUnit.NANOS));
    ToolResult answer = null;
    try {
      answer = task.get(Math.max(0, grace), TimeUnit.NANOSECONDS);
    } catch (InterruptedException | TimeoutException | ExecutionException e) {
      // Not heard in time: the call's own answer below.
    } finally {
      task.cancel(true);
      Thread.currentThread().interrupt();
    }
    if (answer instanceof ToolResult.Failure failure
        && failure.error().code() == ErrorCode.CANCELLED) {
      return failure;
    }
    return ToolResult.failure(
        ErrorCode.CANCELLED,
        "The call to tool '"
            + call.toolName()
            + "' was cancelled while it ran; some of its work may have been done.");
  }

  private static ToolResult timeout(ToolCall call) {
    return ToolResult.failure(
        ErrorCode.TIMEOUT,
        "Tool '"
            + call.toolName()
            + "' did not finish before its deadline and was stopped. You may retry, perhaps with"
            + " a smaller request, or try another way.");
  }
}
