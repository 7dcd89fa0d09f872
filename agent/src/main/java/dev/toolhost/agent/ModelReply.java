package dev.toolhost.agent;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A model reply is one whole answer of the model: its text, its tool calls, and why it stopped.
 *
 * @param content the text, when there is any
 * @param toolCalls the tool calls, in index order
 * @param finishReason the {@code finish_reason}, such as {@code stop} or {@code tool_calls}
 */
public record ModelReply(
    Optional<String> content, List<ModelToolCall> toolCalls, String finishReason) {
  public ModelReply {
    Objects.requireNonNull(content, "content");
    toolCalls = List.copyOf(toolCalls);
    Objects.requireNonNull(finishReason, "finishReason");
  }

  /** This reply as the assistant message the history keeps. */
  public ChatMessage.AssistantMessage toMessage() {
    return new ChatMessage.AssistantMessage(content, toolCalls);
  }
}
