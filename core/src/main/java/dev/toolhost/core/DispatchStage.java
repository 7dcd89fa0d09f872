package dev.toolhost.core;

/**
 * A dispatch stage is one named place in the dispatch chain where interceptors run. The stages and
 * their order are declared here, once, and this is where a reader finds the dispatch order: an
 * interceptor added at a stage runs inside every stage above it and around every stage below it,
 * the executor innermost.
 *
 * <p>Within a stage, interceptors run in the order they were added, the first outermost. The
 * dispatcher's own steps come first in their stages ({@link #TELEMETRY}, {@link #DEADLINE}).
 */
public enum DispatchStage {

  /** Tracing and metrics: outermost, so that they measure everything below, timeouts included. */
  TELEMETRY,

  /** The call's deadline: the rest runs on a virtual thread of its own, bounded by it. */
  DEADLINE,

  /**
   * Whether the call may run at all (approval, rate limits, quotas): inside the deadline, so that a
   * wait for approval is bounded too, and before anything touches the result.
   */
  POLICY,

  /**
   * What the caller gets back is shaped (large results chunked into working memory): it sees the
   * result after the output scan, so what it stores is already clean.
   */
  RESULT_SHAPING,

  /**
   * The output is scanned (leaked secrets redacted): innermost, so that it sees the whole result
   * before anything shrinks it.
   */
  OUTPUT_SCAN
}
