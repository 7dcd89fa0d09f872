package dev.toolhost.longterm;

import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A memory is one thing a user's assistant remembers for the long term: its text, its type and
 * importance, where it came from, when it was made and last recalled, and its associations to
 * earlier memories.
 *
 * @param id the memory's id (a UUID)
 * @param user the user it belongs to; no other user's recall sees it
 * @param agent the agent that keeps it, when memories are kept per agent and an agent saved it; no
 *     other agent's recall sees it (see {@link Owner})
 * @param type what kind of thing it records
 * @param content the text, at most the configured size
 * @param importance how much it matters, 0 to 1, as saved (recall adjusts it by use and age: see
 *     {@link LongTermMemory#effectiveImportance})
 * @param source where it came from, if the saver said
 * @param createdAt when it was saved
 * @param accessedAt when a recall last returned it (its creation until then)
 * @param accessCount how many recalls have returned it
 * @param associations its links to earlier memories
 */
public record Memory(
    String id,
    String user,
    Optional<String> agent,
    MemoryType type,
    String content,
    double importance,
    Optional<String> source,
    Instant createdAt,
    Instant accessedAt,
    int accessCount,
    List<Association> associations) {

  public Memory {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(user, "user");
    Objects.requireNonNull(agent, "agent");
    Objects.requireNonNull(type, "type");
    Objects.requireNonNull(content, "content");
    Objects.requireNonNull(source, "source");
    Objects.requireNonNull(createdAt, "createdAt");
    Objects.requireNonNull(accessedAt, "accessedAt");
    associations = List.copyOf(associations);
  }

  /** Who keeps this memory. */
  public Owner owner() {
    return new Owner(user, agent);
  }

  /** This memory recalled once more, at the given instant. */
  public Memory accessed(Instant at) {
    return new Memory(
        id,
        user,
        agent,
        type,
        content,
        importance,
        source,
        createdAt,
        at,
        accessCount + 1,
        associations);
  }
}
