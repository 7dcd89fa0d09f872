package dev.toolhost.agent;

import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * A context state is what a conversation remembers of fitting its history to its model's window:
 * the summary of the turns it no longer sends, where in the history that summary ends, the tool
 * results it sends as a digest in place of their text, and the window a refusal of the model taught
 * it. The history itself is never changed. Guarded by its own monitor; {@link #saved} and {@link
 * #restore} take it.
 */
final class ContextState {

  private static final int COUNTS_KEPT = 4_096;

  /** The summary of the history before {@link #cut}; empty when nothing was summarised. */
  String summary = "";

  /** The index in the history of the first message sent as it is. */
  int cut;

  /** The digest sent in place of a tool result, by tool call id. */
  final Map<String, String> digests = new HashMap<>();

  /** The window the model's refusal said it has, when it said a smaller one than configured. */
  Optional<Integer> learnedWindow = Optional.empty();

  private TextCounts counts;

  /**
   * A saved context state is what a {@link ConversationStore} keeps of one: everything but the
   * token counts, which are counted again.
   *
   * @param summary the summary of the history before {@code cut}
   * @param cut the index in the history of the first message sent as it is
   * @param digests the digest sent in place of a tool result, by tool call id
   * @param learnedWindow the window a refusal of the model taught
   */
  record Saved(
      String summary, int cut, Map<String, String> digests, Optional<Integer> learnedWindow) {
    Saved {
      Objects.requireNonNull(summary, "summary");
      digests = Map.copyOf(digests);
      Objects.requireNonNull(learnedWindow, "learnedWindow");
    }
  }

  /** What this state holds now, to be kept. */
  synchronized Saved saved() {
    return new Saved(summary, cut, digests, learnedWindow);
  }

  /** Takes what a saved state holds, for a conversation read back from its store. */
  synchronized void restore(Saved saved) {
    summary = saved.summary();
    cut = saved.cut();
    digests.clear();
    digests.putAll(saved.digests());
    learnedWindow = saved.learnedWindow();
  }

  /** The token counts of texts this conversation sent, for the given counter. */
  TextCounts counts(TokenCounter counter) {
    if (counts == null || counts.counter() != counter) {
      counts = new TextCounts(counter, COUNTS_KEPT);
    }
    return counts;
  }
}
