package dev.toolhost.memory;

import dev.toolhost.search.Bm25Index;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Working memory is a short-lived store of text by key, each entry with a time to live and a
 * category, that an agent and its tools use to hold what does not fit in, or should not stay in,
 * the conversation.
 *
 * <p>Keys are paths; the first two segments are the namespace, so an agent's session keeps its
 * entries under {@link #sessionNamespace} ({@code session/abc123/emails}). An entry is gone once
 * its time to live has passed: {@link #get}, {@link #list} and {@link #search} never return it.
 *
 * <p>Two implementations: {@link InProcessWorkingMemory}, the default, for one process; {@link
 * RedisWorkingMemory} for several hosts sharing one memory. Both are thread-safe. A failure of the
 * store itself (Redis unreachable) is an unchecked exception.
 */
public interface WorkingMemory extends AutoCloseable {

  /** The category of an entry stored without one. */
  String DEFAULT_CATEGORY = "general";

  /**
   * The namespace of a session's entries: {@code session/{sessionId}}, the id one path segment
   * ({@code /} written {@code %2F}, {@code %} written {@code %25}), so that no session's namespace
   * is a prefix of another's: session {@code ten} never lists the entries of session {@code
   * ten/ant}, a subagent's, which has a namespace of its own.
   */
  static String sessionNamespace(String sessionId) {
    Objects.requireNonNull(sessionId, "sessionId");
    return "session/" + sessionId.replace("%", "%25").replace("/", "%2F");
  }

  /**
   * Stores the text under the key, replacing any entry there, for the given time.
   *
   * @throws IllegalArgumentException when the key or category is blank or the time is not positive
   */
  void put(String key, String value, Duration ttl, String category);

  /** Stores the text under the key in the {@link #DEFAULT_CATEGORY} category. */
  default void put(String key, String value, Duration ttl) {
    put(key, value, ttl, DEFAULT_CATEGORY);
  }

  /** The live entry under the key, if there is one. */
  Optional<MemoryEntry> get(String key);

  /** Every live entry whose key starts with the prefix, in key order. */
  List<MemoryEntry> list(String prefix);

  /**
   * Removes the entry under the key.
   *
   * @return whether there was one
   */
  boolean remove(String key);

  /**
   * Removes every entry whose key starts with the prefix (every entry, for the empty prefix).
   *
   * @return how many were removed
   */
  int removeAll(String prefix);

  /**
   * Returns up to {@code limit} live entries under the prefix that match the query, best first,
   * ranked by BM25 over each entry's key, category and text.
   */
  default List<MemoryMatch> search(String prefix, String query, int limit) {
    return Bm25Index.rank(list(prefix), WorkingMemory::searchText, query, limit).stream()
        .map(hit -> new MemoryMatch(hit.item(), hit.score(), hit.relevance()))
        .toList();
  }

  /** Releases what the store holds open (connections); entries in a shared store stay. */
  @Override
  void close();

  private static String searchText(MemoryEntry entry) {
    return entry.key() + "\n" + entry.category() + "\n" + entry.value();
  }
}
