package dev.toolhost.memory;

import java.time.Duration;
import java.util.Objects;

/** The rules every working memory applies to what it is asked to store. */
final class EntryRules {

  private EntryRules() {}

  static void checkPut(String key, String value, Duration ttl, String category) {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(value, "value");
    Objects.requireNonNull(ttl, "ttl");
    Objects.requireNonNull(category, "category");
    if (key.isBlank()) {
      throw new IllegalArgumentException("A working memory key may not be blank.");
    }
    if (category.isBlank()) {
      throw new IllegalArgumentException("A working memory category may not be blank.");
    }
    if (ttl.isNegative() || ttl.isZero()) {
      throw new IllegalArgumentException("A time to live must be positive, not " + ttl + ".");
    }
  }
}
