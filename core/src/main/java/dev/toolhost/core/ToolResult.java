package dev.toolhost.core;

import java.util.Objects;
import java.util.Optional;
import tools.jackson.databind.JsonNode;

/**
 * A tool result is what one call produced: a {@link Success} with text content (and structured JSON
 * where the tool gives it), or a {@link Failure} with a {@link ToolError}.
 *
 * <p>Errors are results, never exceptions thrown at the caller: the model reads them and decides
 * what to do next.
 */
public sealed interface ToolResult {

  /** The text the model reads: the content on success, the error message on failure. */
  String text();

  /** Whether this result is a failure. */
  default boolean isError() {
    return this instanceof Failure;
  }

  /** A success with text content only. */
  static Success success(String content) {
    return new Success(content, Optional.empty());
  }

  /** A success with text content and the structured JSON it was rendered from. */
  static Success success(String content, JsonNode structured) {
    return new Success(content, Optional.of(structured));
  }

  /** A failure with the code's default message. */
  static Failure failure(ErrorCode code) {
    return new Failure(new ToolError(code, code.defaultMessage()));
  }

  /** A failure with a model-facing message. */
  static Failure failure(ErrorCode code, String message) {
    return new Failure(new ToolError(code, message));
  }

  /** A failure with a model-facing message and an operator-only detail. */
  static Failure failure(ErrorCode code, String message, String detail) {
    return new Failure(new ToolError(code, message, detail));
  }

  /**
   * A successful result.
   *
   * @param content the text the model reads
   * @param structured the JSON value behind the text, when the tool returned one
   */
  record Success(String content, Optional<JsonNode> structured) implements ToolResult {
    public Success {
      Objects.requireNonNull(content, "content");
      Objects.requireNonNull(structured, "structured");
    }

    @Override
    public String text() {
      return content;
    }
  }

  /**
   * A failed result.
   *
   * @param error why the call failed
   */
  record Failure(ToolError error) implements ToolResult {
    public Failure {
      Objects.requireNonNull(error, "error");
    }

    @Override
    public String text() {
      return error.message();
    }
  }
}
