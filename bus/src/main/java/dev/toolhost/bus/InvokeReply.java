package dev.toolhost.bus;

import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ToolError;
import dev.toolhost.core.ToolResult;
import java.io.StringWriter;
import java.util.Objects;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonGenerator;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.core.ObjectReadContext;
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
  // The mapper's own factory, for text with no tree in it: no databind context per reply.
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
    InvokeReply common = parseCommon(text);
    return common != null ? common : parseTree(text);
  }

  // Bits of the fields parseCommon has seen, to leave a repeated one to the tree reader.
  private static final int ID = 1;
  private static final int NAME = 2;
  private static final int CONTENT = 4;
  private static final int IS_ERROR = 8;
  private static final int ERROR = 16;

  /**
   * Reads a reply of the shape Toolhost's workers write (strings, a boolean {@code is_error}, an
   * {@code error} that is null or an object of strings and a boolean, no {@code structured}) in one
   * streaming pass, as {@link #parseTree} would; null for anything else, which {@link #parseTree}
   * then judges: the caller reads every reply, and a tree per reply was most of that.
   */
  static InvokeReply parseCommon(String text) {
    String id = "";
    String name = "";
    String content = "";
    boolean isError = false;
    boolean errorObject = false;
    String code = null;
    String message = null;
    int seen = 0;
    try (JsonParser parser = STREAMS.createParser(ObjectReadContext.empty(), text)) {
      if (parser.nextToken() != JsonToken.START_OBJECT) {
        return null;
      }
      while (parser.nextToken() == JsonToken.PROPERTY_NAME) {
        String field = parser.currentName();
        JsonToken value = parser.nextToken();
        int bit =
            switch (field) {
              case "tool_call_id" -> ID;
              case "tool_name" -> NAME;
              case "content" -> CONTENT;
              case "is_error" -> IS_ERROR;
              case "error" -> ERROR;
              case "structured" -> -1;
              default -> 0;
            };
        if (bit < 0 || (seen & bit) != 0) {
          return null;
        }
        seen |= bit;
        switch (bit) {
          case ID, NAME, CONTENT -> {
            if (value != JsonToken.VALUE_STRING) {
              return null;
            }
            String string = parser.getString();
            if (bit == ID) {
              id = string;
            } else if (bit == NAME) {
              name = string;
            } else {
              content = string;
            }
          }
          case IS_ERROR -> {
            if (value != JsonToken.VALUE_TRUE && value != JsonToken.VALUE_FALSE) {
              return null;
            }
            isError = value == JsonToken.VALUE_TRUE;
          }
          case ERROR -> {
            if (value == JsonToken.START_OBJECT) {
              errorObject = true;
              int inner = 0;
              while (parser.nextToken() == JsonToken.PROPERTY_NAME) {
                String key = parser.currentName();
                JsonToken part = parser.nextToken();
                int innerBit =
                    switch (key) {
                      case "code" -> 1;
                      case "message" -> 2;
                      case "retryable" -> 4;
                      default -> 0;
                    };
                if (innerBit == 0 || (inner & innerBit) != 0) {
                  return null;
                }
                inner |= innerBit;
                if (innerBit == 4) {
                  if (part != JsonToken.VALUE_TRUE && part != JsonToken.VALUE_FALSE) {
                    return null;
                  }
                } else if (part != JsonToken.VALUE_STRING) {
                  return null;
                } else if (innerBit == 1) {
                  code = parser.getString();
                } else {
                  message = parser.getString();
                }
              }
            } else if (value != JsonToken.VALUE_NULL) {
              return null;
            }
          }
          default -> parser.skipChildren();
        }
      }
      if (parser.currentToken() != JsonToken.END_OBJECT || parser.nextToken() != null) {
        return null;
      }
    } catch (JacksonException e) {
      return null;
    }
    if (isError || errorObject) {
      ErrorCode errorCode;
      try {
        errorCode = ErrorCode.fromWireName(code == null ? "" : code);
      } catch (IllegalArgumentException e) {
        errorCode = ErrorCode.EXECUTION_FAILED;
      }
      String said =
          message != null ? message : content.isEmpty() ? errorCode.defaultMessage() : content;
      return new InvokeReply(id, name, new ToolResult.Failure(new ToolError(errorCode, said)));
    }
    return new InvokeReply(id, name, ToolResult.success(content));
  }

  /**
   * Reads a reply as a tree: any reply a worker in any language may send.
   *
   * @throws IllegalArgumentException saying why the text is not a reply
   */
  static InvokeReply parseTree(String text) {
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
