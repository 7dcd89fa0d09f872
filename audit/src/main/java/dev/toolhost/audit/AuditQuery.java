package dev.toolhost.audit;

import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * An audit query picks entries of the journal: those of a user, a principal or a tool, since an
 * instant, at most a number of them, the latest.
 *
 * @param user only this user's calls, when given
 * @param principal only this principal's calls, when given
 * @param tool only calls of this tool, when given
 * @param since only calls at or after this instant, when given
 * @param limit at most this many entries: the latest of those that match
 */
public record AuditQuery(
    Optional<String> user,
    Optional<String> principal,
    Optional<String> tool,
    Optional<Instant> since,
    int limit) {

  /** The most entries one query answers. */
  public static final int MAX_LIMIT = 10_000;

  /** How many entries a query that names no limit answers. */
  public static final int DEFAULT_LIMIT = 100;

  public AuditQuery {
    Objects.requireNonNull(user, "user");
    Objects.requireNonNull(principal, "principal");
    Objects.requireNonNull(tool, "tool");
    Objects.requireNonNull(since, "since");
    if (limit < 1 || limit > MAX_LIMIT) {
      throw new IllegalArgumentException(
          "'limit' is " + limit + " (expected 1 to " + MAX_LIMIT + ")");
    }
  }

  /** The latest entries, however many the limit says. */
  public static AuditQuery latest(int limit) {
    return new AuditQuery(
        Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), limit);
  }

  /** Whether an entry is one this query picks, the limit aside. */
  public boolean matches(AuditEntry entry) {
    return user.map(wanted -> entry.user().equals(Optional.of(wanted))).orElse(true)
        && principal.map(wanted -> entry.principal().equals(Optional.of(wanted))).orElse(true)
        && tool.map(entry.tool()::equals).orElse(true)
        && since.map(start -> !entry.at().isBefore(start)).orElse(true);
  }
}
