package dev.toolhost.agent;

import java.util.List;
import java.util.Objects;
import java.util.Optional;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * A chat message is one entry of a conversation's history in the Chat Completions wire format: the
 * instructions, a user message, an assistant message (text, tool calls, or both), or the result of
 * one tool call answering its {@code tool_call_id}.
 */
public sealed interface ChatMessage {

  /** This message as the wire sends it. */
  ObjectNode toWire();

  /** The agent's instructions ({@code role: system}). */
  record SystemMessage(String content) implements ChatMessage {
    public SystemMessage {
      Objects.requireNonNull(content, "content");
    }

    @Override
    public ObjectNode toWire() {
      return JsonNodeFactory.instance.objectNode().put("role", "system").put("content", content);
    }
  }

  /** What the user (or, for a notice, the host on the user's side) said. */
  record UserMessage(String content) implements ChatMessage {
    public UserMessage {
      Objects.requireNonNull(content, "content");
    }

    @Override
    public ObjectNode toWire() {
      return JsonNodeFactory.instance.objectNode().put("role", "user").put("content", content);
    }
  }

  /**
   * What the model answered: text, tool calls, or both.
   *
   * @param content the text, when there is any
   * @param toolCalls the calls, in the model's order
   */
  record AssistantMessage(Optional<String> content, List<ModelToolCall> toolCalls)
      implements ChatMessage {
    public AssistantMessage {
      Objects.requireNonNull(content, "content");
      toolCalls = List.copyOf(toolCalls);
    }

    @Override
    public ObjectNode toWire() {
      ObjectNode message = JsonNodeFactory.instance.objectNode().put("role", "assistant");
      if (content.isPresent()) {
        message.put("content", content.get());
      } else {
        message.putNull("content");
      }
      if (!toolCalls.isEmpty()) {
        ArrayNode calls = message.putArray("tool_calls");
        for (ModelToolCall call : toolCalls) {
          ObjectNode wire = calls.addObject().put("id", call.id()).put("type", "function");
          wire.putObject("function").put("name", call.name()).put("arguments", call.arguments());
        }
      }
      return message;
    }
  }

  /**
   * The result of one tool call, as the model reads it.
   *
   * @param toolCallId the id of the call it answers
   * @param content the result's text (an error's message when the call failed)
   */
  record ToolMessage(String toolCallId, String content) implements ChatMessage {
    public ToolMessage {
      Objects.requireNonNull(toolCallId, "toolCallId");
      Objects.requireNonNull(content, "content");
    }

    @Override
    public ObjectNode toWire() {
      return JsonNodeFactory.instance
          .objectNode()
          .put("role", "tool")
          .put("tool_call_id", toolCallId)
          .put("content", content);
    }
  }
}
