package dev.toolhost.server;

import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolProfile;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSpec;
import java.util.Collection;
import java.util.List;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The API's JSON is the shape of every document the HTTP API and the command line write: tool lists
 * in OpenAI function form, call results on the wire protocol and profiles ({@link JsonErrorHandler}
 * writes the errors).
 *
 * <p>Field names are lower_snake wire names and never change once released. Thread-safe.
 */
final class ApiJson {

  private final JsonMapper mapper = JsonMapper.builder().build();
  private final JsonMapper pretty =
      JsonMapper.builder().enable(SerializationFeature.INDENT_OUTPUT).build();

  /** The mapper requests are parsed with. */
  JsonMapper mapper() {
    return mapper;
  }

  /** {@code {"profile", "tools": [{"type": "function", "function": {...}, "source"}]}}. */
  ObjectNode tools(String profile, List<ToolSpec> specs) {
    ObjectNode document = mapper.createObjectNode();
    document.put("profile", profile);
    ArrayNode tools = document.putArray("tools");
    for (ToolSpec spec : specs) {
      ObjectNode tool = spec.toOpenAiFunction();
      tool.put("source", spec.source());
      tools.add(tool);
    }
    return document;
  }

  /**
   * {@code {"tool_call_id", "tool_name", "content", "is_error", "error"}}, with {@code
   * "structured_content"} when a success carries structured JSON; {@code error} is null on success.
   */
  ObjectNode result(ToolCall call, ToolResult result) {
    ObjectNode document = mapper.createObjectNode();
    document.put("tool_call_id", call.callId());
    document.put("tool_name", call.toolName());
    document.put("content", result.text());
    document.put("is_error", result.isError());
    switch (result) {
      case ToolResult.Success success -> {
        document.putNull("error");
        success.structured().ifPresent(json -> document.set("structured_content", json));
      }
      case ToolResult.Failure failure -> {
        ObjectNode error = document.putObject("error");
        error.put("code", failure.error().code().wireName());
        error.put("message", failure.error().message());
        error.put("retryable", failure.error().retryable());
      }
    }
    return document;
  }

  /** One entry of {@code GET /v1/profiles}. */
  ObjectNode profile(ToolProfile profile, List<String> visibleTools) {
    ObjectNode document = mapper.createObjectNode();
    document.put("name", profile.name());
    strings(document.putArray("allowed_sources"), profile.allowedSources());
    strings(document.putArray("denied_sources"), profile.deniedSources());
    strings(document.putArray("allowed_tools"), profile.allowedNames());
    strings(document.putArray("denied_tools"), profile.deniedNames());
    ArrayNode tools = document.putArray("tools");
    visibleTools.forEach(tools::add);
    return document;
  }

  /** A new empty object. */
  ObjectNode object() {
    return mapper.createObjectNode();
  }

  /** The document as compact UTF-8 JSON. */
  byte[] bytes(JsonNode document) {
    return mapper.writeValueAsBytes(document);
  }

  /** The document as indented JSON text, for people. */
  String prettyText(JsonNode document) {
    return pretty.writeValueAsString(document);
  }

  private static void strings(ArrayNode array, Collection<String> values) {
    values.stream().sorted().forEach(array::add);
  }
}
