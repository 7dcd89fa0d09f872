package dev.toolhost.agent;

import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolResult;

/**
 * A run listener hears one run of the agent loop as it happens: the model's text as it streams,
 * each tool call as it starts, each result as it arrives, and each compaction of what the model is
 * sent.
 *
 * <p>Text comes on the run's thread; tool calls and results come on the tools' own threads, so
 * several may arrive at once: an implementation that prints must synchronize.
 */
public interface RunListener {

  /** A listener that ignores everything. */
  RunListener NONE = new RunListener() {};

  /** A piece of the model's text. */
  default void onText(String delta) {}

  /** A tool call about to be dispatched. */
  default void onToolCall(ToolCall call) {}

  /** The result of a tool call. */
  default void onToolResult(ToolCall call, ToolResult result) {}

  /**
   * The history sent to the model was compacted before a request (on the run's thread); the
   * conversation's own history is unchanged.
   */
  default void onCompaction(Compaction compaction) {}
}
