package dev.toolhost.memory;

import java.time.Instant;
import java.util.Objects;

/**
 * A memory entry is one piece of text in working memory, with its full key, its category, and when
 * it was stored and expires.
 *
 * @param key the full key, such as {@code session/abc123/emails}
 * @param value the text
 * @param category what kind of entry it is, such as {@code tool-result}
 * @param storedAt when it was stored
 * @param expiresAt when it expires; it is gone from then on
 */
public record MemoryEntry(
    String key, String value, String category, Instant storedAt, Instant expiresAt) {

  public MemoryEntry {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(value, "value");
    Objects.requireNonNull(category, "category");
    Objects.requireNonNull(storedAt, "storedAt");
    Objects.requireNonNull(expiresAt, "expiresAt");
  }
}
