package dev.toolhost.agent;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A model reply is one whole answer of the model: its text, its tool calls, why it stopped, and,
 * when the server said, the tokens it took and which completion of which model it was.
 *
 * @param content the text, when there is any
 * @param toolCalls the tool calls, in index order
 * @param finishReason the {@code finish_reason}, such as {@code stop} or {@code tool_calls}
 * @param usage the tokens the request took, when the server reported them (a server may ignore
 *     {@code stream_options.include_usage}, or send a count that cannot be read)
 * @param responseId the completion's {@code id}, when the server gave one
 * @param responseModel the {@code model} that answered, as the server names it (it may name a dated
 *     version of the model asked for), when it gave one
 */
public record ModelReply(
    Optional<String> content,
    List<ModelToolCall> toolCalls,
    String finishReason,
    Optional<TokenUsage> usage,
    Optional<String> responseId,
    Optional<String> responseModel) {
  public ModelReply {
    Objects.requireNonNull(content, "content");
    toolCalls = List.copyOf(toolCalls);
    Objects.requireNonNull(finishReason, "finishReason");
    Objects.requireNonNull(usage, "usage");
    Objects.requireNonNull(responseId, "responseId");
    Objects.requireNonNull(responseModel, "responseModel");
  }

  /** This reply as the assistant message the history keeps. */
  public ChatMessage.AssistantMessage toMessage() {
    return new ChatMessage.AssistantMessage(content, toolCalls);
  }
}
