package dev.toolhost.longterm;

import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * A memory type says what kind of thing a memory records, and how important such a memory is when
 * its saver does not say: Spacebot's types and defaults, identity highest and observation lowest.
 */
public enum MemoryType {
  /** Who the user or the agent is. */
  IDENTITY(1.0),
  /** What the user wants to achieve. */
  GOAL(0.9),
  /** What was decided, and why. */
  DECISION(0.8),
  /** Something still to do. */
  TODO(0.8),
  /** How the user likes things done. */
  PREFERENCE(0.7),
  /** Something true about the world or the user; the default type. */
  FACT(0.6),
  /** Something that happened. */
  EVENT(0.4),
  /** Something noticed in passing. */
  OBSERVATION(0.3);

  private final double defaultImportance;

  MemoryType(double defaultImportance) {
    this.defaultImportance = defaultImportance;
  }

  /** The importance a memory of this type gets when its saver gives none. */
  public double defaultImportance() {
    return defaultImportance;
  }

  /** The wire name: {@code identity}, {@code fact}, ... */
  public String wireName() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** The type of the given wire name, if it is one. */
  public static Optional<MemoryType> of(String wireName) {
    return Arrays.stream(values())
        .filter(type -> type.wireName().equals(wireName.strip().toLowerCase(Locale.ROOT)))
        .findFirst();
  }

  /** Every wire name, comma-separated, for messages. */
  public static String wireNames() {
    return Arrays.stream(values()).map(MemoryType::wireName).collect(Collectors.joining(", "));
  }
}
