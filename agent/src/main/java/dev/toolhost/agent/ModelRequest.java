package dev.toolhost.agent;

import java.util.List;
import java.util.Objects;
import tools.jackson.databind.node.ObjectNode;

/**
 * A model request is one Chat Completions request: the history, the tools offered in OpenAI
 * function form, and the tool choice.
 *
 * @param messages the history, instructions first
 * @param tools the tools offered ({@code {"type": "function", "function": ...}}), possibly none
 * @param toolChoice whether the model may, must or must not call a tool
 * @param stream whether the answer is streamed
 */
public record ModelRequest(
    List<ChatMessage> messages, List<ObjectNode> tools, ToolChoice toolChoice, boolean stream) {

  public ModelRequest {
    messages = List.copyOf(messages);
    tools = List.copyOf(tools);
    Objects.requireNonNull(toolChoice, "toolChoice");
  }

  /** A tool choice is the closed set of {@code tool_choice} values the loop sends. */
  public enum ToolChoice {
    AUTO("auto"),
    NONE("none"),
    REQUIRED("required");

    private final String wireName;

    ToolChoice(String wireName) {
      this.wireName = wireName;
    }

    /** The value on the wire. */
    public String wireName() {
      return wireName;
    }
  }
}
