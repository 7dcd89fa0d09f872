package dev.toolhost.agent;

import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolResult;

/**
 * A run listener hears one run of the agent loop as it happens: the model's text as it streams,
 * each tool call as it starts, each result as it arrives.
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
}
