package dev.toolhost.agent;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Text counts are a token counter's counts of texts it has seen, the most recently used kept up to
 * a bound: a conversation sends the same history on every request, so each message is tokenized
 * once. Keyed by the text itself (a history's strings are the same instances from one request to
 * the next, their hash computed once). Not thread-safe: one conversation runs one turn at a time,
 * and its context state guards it.
 */
final class TextCounts {

  private final TokenCounter counter;
  private final Map<String, Integer> counts;

  TextCounts(TokenCounter counter, int bound) {
    this.counter = counter;
    this.counts =
        new LinkedHashMap<>(16, 0.75f, true) {
          @Override
          protected boolean removeEldestEntry(Map.Entry<String, Integer> eldest) {
            return size() > bound;
          }
        };
  }

  TokenCounter counter() {
    return counter;
  }

  int count(String text) {
    Integer known = counts.get(text);
    if (known != null) {
      return known;
    }
    int tokens = counter.count(text);
    counts.put(text, tokens);
    return tokens;
  }
}
