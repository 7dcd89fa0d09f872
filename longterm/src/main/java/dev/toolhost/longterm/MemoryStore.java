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
 * <p>Every query but {@link #unembedded} is for one {@link Owner} and sees only the memories that
 * owner sees: its user's, kept by no agent or by its agent. A memory without a vector of the
 * current model is found by every query but {@link #nearest}. Thread-safe; writes are durable when
 * the method returns. The store keeps skills ({@link Skill}) too, by owner and name, apart from the
 * memories: no memory query ever answers a skill.
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

  /** The memories of the given ids that the owner sees, in no particular order. */
  List<Memory> get(Owner owner, Collection<String> ids);

  /** Deletes a memory the owner sees; whether there was one. */
  boolean delete(Owner owner, String id);

  /** The ids of the owner's memories that match the query's words, best first, at most limit. */
  List<String> fullText(Owner owner, String query, int limit, Optional<MemoryType> type);

  /**
   * The ids of the owner's memories whose vectors (of the query vector's model) are nearest to it,
   * nearest first, at most limit.
   */
  List<String> nearest(Owner owner, Vector query, int limit, Optional<MemoryType> type);

  /** The user's memories that have an association to any of the given ids. */
  List<Memory> linkingTo(Owner owner, Collection<String> ids);

  /** The user's newest memories, newest first, at most limit. */
  List<Memory> recent(Owner owner, int limit, Optional<MemoryType> type);

  /** Every memory the owner sees (of the type, if given). */
  List<Memory> all(Owner owner, Optional<MemoryType> type);

  /** Records that a recall returned the owner's memories of the given ids at the instant. */
  void accessed(Owner owner, Collection<String> ids, Instant at);

  /** Memories of any user with no vector of the given model, at most limit. */
  List<Memory> unembedded(String model, int limit);

  /** How many of the owner's memories have no vector of the given model. */
  long unembeddedCount(Owner owner, String model);

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
