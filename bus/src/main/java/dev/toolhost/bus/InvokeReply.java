package dev.toolhost.bus;

import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ToolError;
import dev.toolhost.core.ToolResult;
import java.io.StringWriter;
import java.util.Objects;
import tools.jackson.core.JsonGenerator;
import tools.jackson.core.ObjectWriteContext;
import tools.jackson.core.TokenStreamFactory;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * An invoke reply is a tool result as it travels back from a worker: {@code {tool_call_id,
 * tool_name, content, is_error, error: {code, message, retryable}}}. The operator-only detail of an
 * error stays on the worker: it is never put on the wire.
 *
 * @param toolCallId the call this answers
 * @param toolName the tool that ran
 * @param result the result
 */
public record InvokeReply(String toolCallId, String toolName, ToolResult result) {

  private static final JsonMapper JSON = JsonMapper.shared();
  // The mapper's own factory, for a reply with no tree in it: no databind context per reply.
  private static final TokenStreamFactory STREAMS = JSON.tokenStreamFactory();

  public InvokeReply {
    Objects.requireNonNull(toolCallId, "toolCallId");
    Objects.requireNonNull(toolName, "toolName");
    Objects.requireNonNull(result, "result");
  }

  /** The reply as JSON text, written with a streaming generator (a worker writes one per call). */
  public String toJson() {
    StringWriter text = new StringWriter(128 + result.text().length());
    // Only structured content is a tree, which needs the mapper; the rest is plain tokens.
    boolean tree = result instanceof ToolResult.Success success && success.structured().isPresent();
    try (JsonGenerator body =
        tree
            ? JSON.createGenerator(text)
            : STREAMS.createGenerator(ObjectWriteContext.empty(), text)) {
      body.writeStartObject();
      body.writeStringProperty("tool_call_id", toolCallId);
      body.writeStringProperty("tool_name", toolName);
      body.writeStringProperty("content", result.text());
      body.writeBooleanProperty("is_error", result.isError());
      switch (result) {
        case ToolResult.Success success -> {
          body.writeNullProperty("error");
          if (success.structured().isPresent()) {
            body.writeName("structured");
            body.writeTree(success.structured().get());
          }
        }
        case ToolResult.Failure failure -> {
          body.writeObjectPropertyStart("error");
          body.writeStringProperty("code", failure.error().code().wireName());
          body.writeStringProperty("message", failure.error().message());
          body.writeBooleanProperty("retryable", failure.error().retryable());
          body.writeEndObject();
        }
      }
      body.writeEndObject();
    }
    return text.toString();
  }

  /**
   * Reads a reply.
   *
   * @throws IllegalArgumentException saying why the text is not a reply
   */
  public static InvokeReply parse(String text) {
    JsonNode body = WireJson.readObject(text);
    String id = WireJson.text(body, "tool_call_id").orElse("");
    String name = WireJson.text(body, "tool_name").orElse("");
    String content = WireJson.text(body, "content").orElse("");
    JsonNode error = body.get("error");
    boolean isError = body.path("is_error").asBoolean(false);
    if (isError || (error != null && error.isObject())) {
      ErrorCode code;
      try {
        code = ErrorCode.fromWireName(error == null ? "" : error.path("code").asString(""));
      } catch (IllegalArgumentException e) {
        code = ErrorCode.EXECUTION_FAILED;
      }
      String message =
          error != null && error.path("message").isString()
              ? error.path("message").asString()
              : content.isEmpty() ? code.defaultMessage() : content;
      return new InvokeReply(id, name, new ToolResult.Failure(new ToolError(code, message)));
    }
    JsonNode structured = body.get("structured");
    return new InvokeReply(
        id,
        name,
        structured == null || structured.isNull()
            ? ToolResult.success(content)
            : ToolResult.success(content, structured));
  }
}
