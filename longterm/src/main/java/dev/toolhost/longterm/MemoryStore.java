package dev.toolhost.longterm;

import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A memory store keeps memories, their vectors and associations, and answers the rankings recall
 * fuses: full text (BM25 or its kin), nearest vectors, and the memories linking to others. The
 * embedded store is {@link LuceneMemoryStore}; {@link PostgresMemoryStore} is shared by several
 * hosts.
 *
 * <p>Every query but {@link #unembedded} is for one user and sees only that user's memories. The
 * store keeps skills ({@link Skill}) too, by owner and name, apart from the memories: no memory
 * query ever answers a skill. A memory without a vector of the current model is found by every
 * query but {@link #nearest}. Thread-safe; writes are durable when the method returns.
 */
public interface MemoryStore extends AutoCloseable {

  /**
   * A vector of a memory or a query, by the model that made it.
   *
   * @param model the embedder's model name
   * @param values the vector
   */
  record Vector(String model, float[] values) {
    public Vector {
      Objects.requireNonNull(model, "model");
      Objects.requireNonNull(values, "values");
    }
  }

  /** Saves a new memory, with its vector when it has one. */
  void save(Memory memory, Optional<Vector> vector);

  /** The user's memories of the given ids that exist, in no particular order. */
  List<Memory> get(String user, Collection<String> ids);

  /** Deletes the user's memory; whether there was one. */
  boolean delete(String user, String id);

  /** The ids of the user's memories that match the query's words, best first, at most limit. */
  List<String> fullText(String user, String query, int limit, Optional<MemoryType> type);

  /**
   * The ids of the user's memories whose vectors (of the query vector's model) are nearest to it,
   * nearest first, at most limit.
   */
  List<String> nearest(String user, Vector query, int limit, Optional<MemoryType> type);

  /** The user's memories that have an association to any of the given ids. */
  List<Memory> linkingTo(String user, Collection<String> ids);

  /** The user's newest memories, newest first, at most limit. */
  List<Memory> recent(String user, int limit, Optional<MemoryType> type);

  /** Every memory of the user (of the type, if given). */
  List<Memory> all(String user, Optional<MemoryType> type);

  /** Records that a recall returned the user's memories of the given ids at the instant. */
  void accessed(String user, Collection<String> ids, Instant at);

  /** Memories of any user with no vector of the given model, at most limit. */
  List<Memory> unembedded(String model, int limit);

  /** How many of the user's memories have no vector of the given model. */
  long unembeddedCount(String user, String model);

  /** Gives the memory its vector, replacing any of another model. */
  void embedded(String id, Vector vector);

  /** The model the store was last told it is embedded with ({@code model/dimension}), if any. */
  Optional<String> indexModel();

  /** Records the model the store is embedded with. */
  void indexModel(String model);

  /** Saves the skill, replacing the owner's skill of that name, if any. */
  void saveSkill(Skill skill);

  /** The owner's skill of that name. */
  Optional<Skill> skill(String owner, String name);

  /** Every skill of the owner, in name order. */
  List<Skill> skills(String owner);

  /** Deletes the owner's skill of that name; whether there was one. */
  boolean deleteSkill(String owner, String name);

  @Override
  void close();
}
