package dev.toolhost.core;

import java.util.List;
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
   * An image a tool returned beside its text, such as a screenshot: served to MCP clients as image
   * content; other callers read the text, which says where the image is.
   *
   * @param mimeType the image's media type, such as {@code image/png}
   * @param data the image's bytes, base64
   */
  record Image(String mimeType, String data) {
    public Image {
      Objects.requireNonNull(mimeType, "mimeType");
      Objects.requireNonNull(data, "data");
    }

    @Override
    public String toString() {
      // The bytes are no use in a log line.
      return "Image[" + mimeType + ", " + data.length() + " base64 chars]";
    }
  }

  /**
   * A successful result.
   *
   * @param content the text the model reads
   * @param structured the JSON value behind the text, when the tool returned one
   * @param images images beside the text, for clients that take them (none for most tools)
   */
  record Success(String content, Optional<JsonNode> structured, List<Image> images)
      implements ToolResult {
    public Success {
      Objects.requireNonNull(content, "content");
      Objects.requireNonNull(structured, "structured");
      images = List.copyOf(images);
    }

    /** A success with no images. */
    public Success(String content, Optional<JsonNode> structured) {
      this(content, structured, List.of());
    }

    /** This success with the given images. */
    public Success withImages(List<Image> images) {
      return new Success(content, structured, images);
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
