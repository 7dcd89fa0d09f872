package dev.toolhost.longterm;

import java.util.Objects;

/**
 * An association links a memory to an earlier one of the same user.
 *
 * @param target the id of the memory it points to
 * @param relation how the two relate
 * @param weight how strongly, 0 to 1
 */
public record Association(String target, Relation relation, double weight) {

  public Association {
    Objects.requireNonNull(target, "target");
    Objects.requireNonNull(relation, "relation");
    if (!(weight >= 0 && weight <= 1)) {
      throw new IllegalArgumentException("An association's weight is 0 to 1, not " + weight);
    }
  }
}
