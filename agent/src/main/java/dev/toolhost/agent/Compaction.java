package dev.toolhost.agent;

import java.util.List;
import java.util.Objects;

/**
 * A compaction is one shrinking of what a conversation sends its model: old turns summarised into
 * one message, tool results replaced by their working-memory key and a one-line digest, or both.
 * The conversation's own history keeps every message whole; only the requests shrink.
 *
 * @param reason why it happened
 * @param summarisedMessages how many messages of the history were folded into the summary
 * @param trimmedResults how many tool results were replaced by a digest
 * @param memoryKeys the working-memory keys the replaced results were stored under (empty without
 *     working memory, when only the digest is sent)
 * @param before the request's size before
 * @param after the request's size after
 * @param window the window it was fitted to, in tokens
 */
public record Compaction(
    Reason reason,
    int summarisedMessages,
    int trimmedResults,
    List<String> memoryKeys,
    TokenCount before,
    TokenCount after,
    int window) {

  public Compaction {
    Objects.requireNonNull(reason, "reason");
    memoryKeys = List.copyOf(memoryKeys);
    Objects.requireNonNull(before, "before");
    Objects.requireNonNull(after, "after");
  }

  /** Why a compaction happened. */
  public enum Reason {
    /** The request passed the share of the window set by {@link ContextBudget#compactAt}. */
    BUDGET("budget"),
    /** The model refused the request as longer than its context window. */
    OVERFLOW("overflow");

    private final String wireName;

    Reason(String wireName) {
      this.wireName = wireName;
    }

    /** The name on the wire: {@code budget} or {@code overflow}. */
    public String wireName() {
      return wireName;
    }
  }
}
