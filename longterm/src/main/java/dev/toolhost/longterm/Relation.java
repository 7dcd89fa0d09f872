package dev.toolhost.longterm;

import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * A relation is how one memory is associated with another; its multiplier weighs the association in
 * recall's walk of the graph (Spacebot's: an update counts most, a contradiction least).
 */
public enum Relation {
  /** The two are about the same thing. */
  RELATED_TO(1.0),
  /** This memory replaces the other: recall ranks it above the one it updates. */
  UPDATES(1.5),
  /** This memory contradicts the other. */
  CONTRADICTS(0.5),
  /** This memory happened because of the other. */
  CAUSED_BY(1.3),
  /** This memory is what the other led to. */
  RESULT_OF(1.3),
  /** This memory is a part of the other. */
  PART_OF(0.8);

  private final double multiplier;

  Relation(double multiplier) {
    this.multiplier = multiplier;
  }

  /** How much the walk of associations weighs this relation. */
  public double multiplier() {
    return multiplier;
  }

  /** The wire name: {@code related_to}, {@code updates}, ... */
  public String wireName() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** The relation of the given wire name, if it is one. */
  public static Optional<Relation> of(String wireName) {
    return Arrays.stream(values())
        .filter(relation -> relation.wireName().equals(wireName.strip().toLowerCase(Locale.ROOT)))
        .findFirst();
  }

  /** Every wire name, comma-separated, for messages. */
  public static String wireNames() {
    return Arrays.stream(values()).map(Relation::wireName).collect(Collectors.joining(", "));
  }
}
