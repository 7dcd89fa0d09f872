package dev.toolhost.mcp;

import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ToolAnnotations;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSpec;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * MCP results are the translations between the SDK's MCP types and Toolhost's: tool results,
 * annotations and schemas, both ways.
 */
final class McpResults {

  private static final JsonMapper MAPPER = JsonMapper.shared();
  private static final TypeReference<Map<String, Object>> MAP = new TypeReference<>() {};

  private McpResults() {}

  /** An MCP call result as a Toolhost result: text content joined, structured content kept. */
  static ToolResult toToolResult(McpSchema.CallToolResult result, String toolName) {
    String text = text(result.content());
    if (Boolean.TRUE.equals(result.isError())) {
      return ToolResult.failure(
          ErrorCode.EXECUTION_FAILED,
          text.isBlank() ? "Tool '" + toolName + "' reported an error without a message." : text);
    }
    if (result.structuredContent() != null) {
      JsonNode structured = MAPPER.valueToTree(result.structuredContent());
      return ToolResult.success(text.isEmpty() ? structured.toString() : text, structured);
    }
    return ToolResult.success(text);
  }

  /** A JSON-RPC error the server answered, as a result the model can act on. */
  static ToolResult protocolError(McpError error, String toolName, String server) {
    String message = error.getMessage() == null ? "no message" : error.getMessage();
    boolean invalidParams =
        error.getJsonRpcError() != null
            && error.getJsonRpcError().code() == McpSchema.ErrorCodes.INVALID_PARAMS;
    return ToolResult.failure(
        invalidParams ? ErrorCode.INVALID_ARGUMENTS : ErrorCode.EXECUTION_FAILED,
        "Tool '" + toolName + "' (MCP server '" + server + "') refused the call: " + message,
        "JSON-RPC error "
            + (error.getJsonRpcError() == null ? "" : error.getJsonRpcError().code()));
  }

  private static String text(List<McpSchema.Content> content) {
    List<String> parts = new ArrayList<>();
    for (McpSchema.Content item : content) {
      switch (item) {
        case McpSchema.TextContent text -> parts.add(text.text());
        case McpSchema.ImageContent image ->
            parts.add(
                "[image " + image.mimeType() + ", " + image.data().length() + " base64 chars]");
        case McpSchema.AudioContent audio ->
            parts.add(
                "[audio " + audio.mimeType() + ", " + audio.data().length() + " base64 chars]");
        case McpSchema.EmbeddedResource embedded -> parts.add(resource(embedded.resource()));
        case McpSchema.ResourceLink link ->
            parts.add(
                "[resource link "
                    + link.uri()
                    + (link.name() == null ? "" : " " + link.name())
                    + "]");
        default -> parts.add("[" + item.type() + " content]");
      }
    }
    return String.join("\n", parts);
  }

  private static String resource(McpSchema.ResourceContents contents) {
    if (contents instanceof McpSchema.TextResourceContents text) {
      return text.text();
    }
    return "[resource " + contents.uri() + ", " + contents.mimeType() + "]";
  }

  /**
   * A Toolhost result as an MCP call result: errors are {@code isError} results with their code.
   */
  static McpSchema.CallToolResult toCallToolResult(ToolResult result) {
    return switch (result) {
      case ToolResult.Success success -> {
        McpSchema.CallToolResult.Builder builder =
            McpSchema.CallToolResult.builder().addTextContent(success.content()).isError(false);
        success
            .structured()
            .filter(JsonNode::isObject)
            .ifPresent(
                structured -> builder.structuredContent(MAPPER.convertValue(structured, MAP)));
        for (ToolResult.Image image : success.images()) {
          builder.addContent(
              new McpSchema.ImageContent(null, image.data(), image.mimeType(), null));
        }
        yield builder.build();
      }
      case ToolResult.Failure failure ->
          McpSchema.CallToolResult.builder()
              .addTextContent(failure.error().message())
              .isError(true)
              .meta(
                  Map.of(
                      "toolhost/error",
                      Map.of(
                          "code",
                          failure.error().code().wireName(),
                          "retryable",
                          failure.error().retryable())))
              .build();
    };
  }

  /** The MCP annotations as Toolhost annotations, MCP defaults where a hint is missing. */
  static ToolAnnotations annotations(McpSchema.ToolAnnotations hints) {
    ToolAnnotations defaults = ToolAnnotations.UNSPECIFIED;
    if (hints == null) {
      return defaults;
    }
    return new ToolAnnotations(
        Optional.ofNullable(hints.readOnlyHint()).orElse(defaults.readOnly()),
        Optional.ofNullable(hints.destructiveHint()).orElse(defaults.destructive()),
        Optional.ofNullable(hints.idempotentHint()).orElse(defaults.idempotent()),
        Optional.ofNullable(hints.openWorldHint()).orElse(defaults.openWorld()));
  }

  /** The MCP tool a Toolhost spec is served as. */
  static McpSchema.Tool toMcpTool(ToolSpec spec) {
    ToolAnnotations hints = spec.annotations();
    return McpSchema.Tool.builder(spec.name(), MAPPER.convertValue(spec.parameters(), MAP))
        .description(spec.description())
        .annotations(
            McpSchema.ToolAnnotations.builder()
                .readOnlyHint(hints.readOnly())
                .destructiveHint(hints.destructive())
                .idempotentHint(hints.idempotent())
                .openWorldHint(hints.openWorld())
                .build())
        .build();
  }

  /** An MCP input schema as a parameters schema object. */
  static ObjectNode parameters(Map<String, Object> inputSchema) {
    JsonNode node =
        MAPPER.valueToTree(inputSchema == null ? Map.of("type", "object") : inputSchema);
    if (!node.isObject()) {
      throw new IllegalArgumentException("the input schema is not a JSON object");
    }
    ObjectNode schema = (ObjectNode) node;
    if (!schema.has("type")) {
      schema.put("type", "object");
    }
    return schema;
  }

  /** A JSON object as the arguments map the SDK sends. */
  static Map<String, Object> arguments(JsonNode arguments) {
    return MAPPER.convertValue(arguments, MAP);
  }
}
