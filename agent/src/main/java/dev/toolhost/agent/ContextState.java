package dev.toolhost.agent;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * A context state is what a conversation remembers of fitting its history to its model's window:
 * the summary of the turns it no longer sends, where in the history that summary ends, the tool
 * results it sends as a digest in place of their text, and the window a refusal of the model taught
 * it. The history itself is never changed. Guarded by its own monitor.
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

  /** The token counts of texts this conversation sent, for the given counter. */
  TextCounts counts(TokenCounter counter) {
    if (counts == null || counts.counter() != counter) {
      counts = new TextCounts(counter, COUNTS_KEPT);
    }
    return counts;
  }
}
