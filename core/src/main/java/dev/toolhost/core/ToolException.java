package dev.toolhost.core;

import java.util.Objects;

/**
 * A tool exception is how a tool's own code fails a call on purpose, with the {@link ToolError} the
 * model is to read: "the date must be in the future" as {@code invalid_arguments}, "the server is
 * not connected" as {@code unavailable}.
 *
 * <p>The dispatch path answers it with exactly its error. Any other exception a tool throws is not
 * the model's to read: it answers {@code execution_failed} with a message that says nothing
 * internal, and the exception goes to the log and the error's detail. A library's {@link
 * IllegalArgumentException} thrown deep inside a tool is the tool's failure, not the model's
 * arguments, so it is not turned into {@code invalid_arguments} either.
 *
 * <p>It records no stack trace: it is a result on its way out, not a fault to debug.
 */
public final class ToolException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  /** Not serialised with the exception: an error crosses the wire as JSON, never as Java. */
  private final transient ToolError error;

  /** An exception that fails the call with the given error. */
  public ToolException(ToolError error) {
    super(Objects.requireNonNull(error, "error").message(), null, false, false);
    this.error = error;
  }

  /** An exception that fails the call with the given code and model-facing message. */
  public ToolException(ErrorCode code, String message) {
    this(new ToolError(code, message));
  }

  /** An exception that fails the call as {@code invalid_arguments} with the given message. */
  public static ToolException invalidArguments(String message) {
    return new ToolException(ErrorCode.INVALID_ARGUMENTS, message);
  }

  /** The error the call answers. */
  public ToolError error() {
    return error;
  }
}
