package dev.toolhost.core;

/**
 * A call recorder is told of every call a dispatcher answers, once the caller's answer is known:
 * the place for a journal of calls (an audit journal, say) that must hold refused calls as well as
 * those that ran, which an interceptor never sees.
 *
 * <p>It runs on the caller's thread after the call, so it must be quick (hand slow work to a thread
 * of its own) and thread-safe. What it throws is logged, never given to the caller.
 */
@FunctionalInterface
public interface CallRecorder {

  /** Records one answered call. */
  void record(CallRecord record);
}
