package dev.toolhost.core;

import java.util.Objects;

/**
 * A tool error is why a call failed: a code, a message the model can act on, and a detail for the
 * operator only.
 *
 * <p>The message goes to the model and never holds a stack trace or an exception class name. The
 * detail goes to logs and traces, never to the model. An error holds no {@link Throwable}: it
 * crosses the wire.
 *
 * @param code what kind of failure this is
 * @param message what the model is told
 * @param detail what the operator is told (empty when there is nothing more to say)
 */
public record ToolError(ErrorCode code, String message, String detail) {

  public ToolError {
    Objects.requireNonNull(code, "code");
    Objects.requireNonNull(message, "message");
    Objects.requireNonNull(detail, "detail");
  }

  /** An error with a model-facing message and no operator detail. */
  public ToolError(ErrorCode code, String message) {
    this(code, message, "");
  }

  /** Whether calling again, unchanged, may succeed. */
  public boolean retryable() {
    return code.retryable();
  }
}
