package dev.toolhost.core;

import tools.jackson.databind.JsonNode;

/**
 * A tool executor runs one tool: it takes a call whose arguments were already parsed and validated
 * against the tool's schema, and returns its result.
 *
 * <p>It runs on a virtual thread of its own and may block. It should stop when its thread is
 * interrupted (the deadline passed or the call was cancelled); the caller does not wait for it
 * either way. To fail a call with a message for the model, it throws a {@link ToolException}
 * carrying the error (or returns a failure). Anything else it throws is classified by the dispatch
 * path: a {@link java.util.concurrent.TimeoutException} as {@code timeout}, anything else as {@code
 * execution_failed} with a message that says nothing internal; the exception goes to the log.
 */
@FunctionalInterface
public interface ToolExecutor {

  /**
   * Runs the tool.
   *
   * @param call the call, as the caller sent it
   * @param arguments the parsed arguments object, valid against the tool's schema
   * @return the result; errors are results too
   * @throws Exception when the tool fails; see the class comment for how it is classified
   */
  ToolResult execute(ToolCall call, JsonNode arguments) throws Exception;
}
