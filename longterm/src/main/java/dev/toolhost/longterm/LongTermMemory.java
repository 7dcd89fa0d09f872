package dev.toolhost.longterm;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Long-term memory saves, recalls and deletes a user's memories over a {@link MemoryStore} and an
 * {@link Embedder}: what the memory tools run.
 *
 * <p><b>Saving never depends on the embedder.</b> A memory is stored with its vector when the
 * embedder answers, and without one when it fails; a background pass (every {@code embedRetry}, and
 * at once after a save that could not be embedded) embeds what has no vector of the current model.
 * That pass also re-embeds everything after a change of model: the store records its model and
 * dimension, and a different one at start leaves every old vector unused (never compared with the
 * new model's) until it is replaced, while full-text recall keeps working.
 *
 * <p><b>Hybrid recall</b> fuses three rankings by reciprocal rank fusion (score = Σ 1/(60 + rank)):
 * the nearest vectors, BM25 full text, and a walk of associations (both ways, two steps) from the
 * five strongest matches of the other two, each reached memory scored by its effective importance ×
 * the association's weight × the relation's multiplier, halved at the second step. A memory that
 * another {@code updates} is preceded by the newer one, which is brought into the results if it was
 * not there. When the query cannot be embedded, or some memories still wait for a vector, the
 * answer says so in its notice.
 *
 * <p><b>Effective importance</b>, the documented rule of use and age: {@code min(1, importance ×
 * 0.5^(days since last recall / 90) + 0.05 × ln(1 + recalls))}, where a memory never recalled
 * counts from its creation and {@code identity} memories never decay. Every recall records the
 * access of each memory it returns.
 *
 * <p>Thread-safe.
 */
public final class LongTermMemory implements AutoCloseable {

  /** The recall modes, by wire name. */
  public enum Mode {
    /** Vectors, full text and associations, fused by reciprocal rank. */
    HYBRID,
    /** Newest first. */
    RECENT,
    /** Highest effective importance first, newest first among equals. */
    IMPORTANT,
    /** The memories of one type (memory_type is required), newest first. */
    TYPED;

    /** The wire name. */
    public String wireName() {
      return name().toLowerCase(Locale.ROOT);
    }

    /** The mode of the wire name, if it is one. */
    public static Optional<Mode> of(String wireName) {
      return Arrays.stream(values())
          .filter(mode -> mode.wireName().equals(wireName.strip().toLowerCase(Locale.ROOT)))
          .findFirst();
    }

    /** Every wire name, comma-separated. */
    public static String wireNames() {
      return Arrays.stream(values()).map(Mode::wireName).collect(Collectors.joining(", "));
    }
  }

  /**
   * A recalled memory and the score its mode ranked it by.
   *
   * @param memory the memory, as it was before this recall
   * @param score the fused score (hybrid) or the effective importance (other modes)
   */
  public record Recalled(Memory memory, double score) {}

  /**
   * A recall's answer.
   *
   * @param memories the memories, best first
   * @param totalFound how many the rankings found before the cut to the requested number
   * @param notice what the answer lacks and why (no vectors), if anything
   */
  public record Recall(List<Recalled> memories, int totalFound, Optional<String> notice) {}

  /**
   * A save's answer.
   *
   * @param id the new memory's id
   * @param notice what is still to happen (embedding), if anything
   */
  public record Saved(String id, Optional<String> notice) {}

  /** The reciprocal rank fusion constant. */
  static final int RRF_K = 60;

  private static final Logger LOG = LoggerFactory.getLogger(LongTermMemory.class);
  private static final int SEEDS = 5;
  private static final int BATCH = 32;

  private final MemoryStore store;
  private final Embedder embedder;
  private final Clock clock;
  private final String model;
  private final ScheduledExecutorService background;
  private final AtomicBoolean passQueued = new AtomicBoolean();
  private volatile boolean closed;
  // Whether some memory may lack a vector of the model: from start until a pass finds none.
  private volatile boolean mayWait = true;

  /**
   * Long-term memory over the store, embedding with the embedder; starts the background pass.
   *
   * @param store where memories live; closed with this
   * @param embedder what makes vectors; closed with this
   * @param embedRetry how often the background pass looks for memories without a vector
   * @param clock the time memories are made and recalled at
   */
  public LongTermMemory(MemoryStore store, Embedder embedder, Duration embedRetry, Clock clock) {
    this.store = Objects.requireNonNull(store, "store");
    this.embedder = Objects.requireNonNull(embedder, "embedder");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.model = embedder.model() + "/" + embedder.dimension();
    Optional<String> indexed = store.indexModel();
    if (indexed.isPresent() && !indexed.get().equals(model)) {
      LOG.info(
          "Long-term memory was embedded with {} and now uses {}: re-embedding in the background;"
              + " full-text recall works meanwhile",
          indexed.get(),
          model);
    }
    if (indexed.isEmpty() || !indexed.get().equals(model)) {
      store.indexModel(model);
    }
    this.background =
        Executors.newSingleThreadScheduledExecutor(
            Thread.ofPlatform().daemon().name("long-term-memory-embedder").factory());
    long every = Math.max(1, embedRetry.toMillis());
    background.scheduleWithFixedDelay(this::embedPending, 0, every, TimeUnit.MILLISECONDS);
  }

  /** The model the vectors are made with, as {@code model/dimension}. */
  public String model() {
    return model;
  }

  /**
   * Saves a memory for the owner; its vector now if the embedder answers, else later.
   *
   * @throws IllegalArgumentException naming an association whose target the owner does not see
   */
  public Saved save(
      Owner owner,
      MemoryType type,
      String content,
      double importance,
      Optional<String> source,
      List<Association> associations) {
    Set<String> targets =
        associations.stream().map(Association::target).collect(Collectors.toSet());
    Set<String> found =
        store.get(owner, targets).stream().map(Memory::id).collect(Collectors.toSet());
    for (String target : targets) {
      if (!found.contains(target)) {
        throw new IllegalArgumentException("no memory has the id '" + target + "'");
      }
    }
    Instant now = clock.instant();
    Memory memory =
        new Memory(
            UUID.randomUUID().toString(),
            owner.user(),
            owner.agent(),
            type,
            content,
            importance,
            source,
            now,
            now,
            0,
            associations);
    Optional<MemoryStore.Vector> vector = Optional.empty();
    Optional<String> notice = Optional.empty();
    try {
      vector = Optional.of(new MemoryStore.Vector(model, embed(List.of(content)).getFirst()));
    } catch (EmbedderException e) {
      LOG.warn(
          "Saved memory {} without a vector; it is embedded later: {}",
          memory.id(),
          e.getMessage());
      notice =
          Optional.of(
              "The embedder is unavailable ("
                  + e.getMessage()
                  + "): the memory is saved and found by full text now, and by meaning once it is"
                  + " embedded.");
    }
    if (vector.isEmpty()) {
      mayWait = true;
    }
    store.save(memory, vector);
    if (vector.isEmpty()) {
      queuePass();
    }
    return new Saved(memory.id(), notice);
  }

  /** Deletes a memory the owner sees; whether there was one. */
  public boolean delete(Owner owner, String id) {
    return store.delete(owner, id);
  }

  /** Recalls the memories the owner sees, recording the access of those it returns. */
  public Recall recall(
      Owner owner, String query, int maxResults, Optional<MemoryType> type, Mode mode) {
    Instant now = clock.instant();
    Recall recall =
        switch (mode) {
          case HYBRID -> hybrid(owner, query, maxResults, type, now);
          case RECENT, TYPED -> byDate(owner, maxResults, type, now);
          case IMPORTANT -> byImportance(owner, maxResults, type, now);
        };
    if (!recall.memories().isEmpty()) {
      store.accessed(owner, recall.memories().stream().map(r -> r.memory().id()).toList(), now);
    }
    return recall;
  }

  /** The importance of a memory now, by the rule of use and age in the class comment. */
  public static double effectiveImportance(Memory memory, Instant now) {
    if (memory.type() == MemoryType.IDENTITY) {
      return memory.importance();
    }
    double idleDays =
        Math.max(0, Duration.between(memory.accessedAt(), now).toMillis()) / 86_400_000.0;
    double decayed = memory.importance() * Math.pow(0.5, idleDays / 90);
    return Math.min(1, decayed + 0.05 * Math.log1p(memory.accessCount()));
  }

  /** Embeds memories with no vector of the current model, until none is left or one fails. */
  void embedPending() {
    passQueued.set(false);
    try {
      while (!closed) {
        // Cleared before the look, so that a save failing meanwhile sets it again.
        mayWait = false;
        List<Memory> pending = store.unembedded(model, BATCH);
        if (pending.isEmpty()) {
          return;
        }
        mayWait = true;
        List<float[]> vectors = embed(pending.stream().map(Memory::content).toList());
        for (int i = 0; i < pending.size(); i++) {
          store.embedded(pending.get(i).id(), new MemoryStore.Vector(model, vectors.get(i)));
        }
        LOG.info("Embedded {} memories that had no vector of {}", pending.size(), model);
      }
    } catch (EmbedderException e) {
      mayWait = true;
      LOG.warn("Memories wait for their vectors; the embedder failed: {}", e.getMessage());
    } catch (RuntimeException e) {
      mayWait = true;
      LOG.warn("The background embedding of memories failed", e);
    }
  }

  private void queuePass() {
    if (passQueued.compareAndSet(false, true)) {
      try {
        background.execute(this::embedPending);
      } catch (RuntimeException e) {
        // Closed: the memory waits for the next start.
        passQueued.set(false);
      }
    }
  }

  private List<float[]> embed(List<String> texts) {
    List<float[]> vectors;
    try {
      vectors = embedder.embed(texts);
    } catch (EmbedderException e) {
      throw e;
    } catch (RuntimeException e) {
      throw new EmbedderException(String.valueOf(e.getMessage()), e);
    }
    if (vectors.size() != texts.size()) {
      throw new EmbedderException(
          "the embedder gave " + vectors.size() + " vectors for " + texts.size() + " texts");
    }
    for (float[] vector : vectors) {
      if (vector.length != embedder.dimension()) {
        throw new EmbedderException(
            "the embedder gave a vector of "
                + vector.length
                + " (expected "
                + embedder.dimension()
                + ")");
      }
    }
    return vectors;
  }

  // ---- hybrid ----

  private Recall hybrid(
      Owner owner, String query, int maxResults, Optional<MemoryType> type, Instant now) {
    int depth = Math.max(50, maxResults * 5);
    List<String> notices = new ArrayList<>();
    List<String> text = store.fullText(owner, query, depth, type);
    List<String> nearest = List.of();
    try {
      float[] vector = embed(List.of(query)).getFirst();
      nearest = store.nearest(owner, new MemoryStore.Vector(model, vector), depth, type);
      // Counted only while some memory may wait: counting reads the whole index.
      long waiting = mayWait ? store.unembeddedCount(owner, model) : 0;
      if (waiting > 0) {
        notices.add(
            waiting
                + " of your memories wait for their vectors and can be found only by full text and"
                + " associations until they are embedded.");
      }
    } catch (EmbedderException e) {
      notices.add(
          "Search by meaning is unavailable (the embedder failed: "
              + e.getMessage()
              + "): these results come from full-text search and associations only.");
    }
    Map<String, Double> fused = new HashMap<>();
    fuse(fused, nearest);
    fuse(fused, text);
    List<String> seeds = ranked(fused).stream().limit(SEEDS).toList();
    Map<String, Memory> known = new HashMap<>();
    store.get(owner, seeds).forEach(m -> known.put(m.id(), m));
    fuse(fused, walk(owner, seeds, known, type, now));
    // Only the best are read (stored text is what a recall costs most); newer memories that
    // update one of them come with it, and before it.
    List<String> order = ranked(fused);
    List<String> top = order.subList(0, Math.min(order.size(), maxResults));
    load(owner, top, known);
    Map<String, List<Memory>> updatedBy = new HashMap<>();
    for (Memory newer : store.linkingTo(owner, top)) {
      if (type.isPresent() && newer.type() != type.get()) {
        continue;
      }
      known.putIfAbsent(newer.id(), newer);
      for (Association association : newer.associations()) {
        if (association.relation() == Relation.UPDATES && top.contains(association.target())) {
          updatedBy.computeIfAbsent(association.target(), id -> new ArrayList<>()).add(newer);
        }
      }
    }
    List<Recalled> results = new ArrayList<>();
    Set<String> placed = new HashSet<>();
    for (String id : top) {
      place(id, fused.get(id), fused, known, updatedBy, placed, results, new HashSet<>());
    }
    Set<String> found = new HashSet<>(order);
    placed.forEach(found::add);
    int total = found.size();
    return new Recall(
        List.copyOf(results.subList(0, Math.min(maxResults, results.size()))),
        total,
        notices.isEmpty() ? Optional.empty() : Optional.of(String.join(" ", notices)));
  }

  /** Places a memory, after placing first every newer memory that updates it. */
  private static void place(
      String id,
      double score,
      Map<String, Double> fused,
      Map<String, Memory> known,
      Map<String, List<Memory>> updatedBy,
      Set<String> placed,
      List<Recalled> results,
      Set<String> visiting) {
    Memory memory = known.get(id);
    if (memory == null || placed.contains(id) || !visiting.add(id)) {
      return;
    }
    for (Memory newer : updatedBy.getOrDefault(id, List.of())) {
      place(
          newer.id(),
          Math.max(score, fused.getOrDefault(newer.id(), 0.0)),
          fused,
          known,
          updatedBy,
          placed,
          results,
          visiting);
    }
    placed.add(id);
    results.add(new Recalled(memory, score));
  }

  /** The ranking of the walk of associations from the seeds: two steps, both ways. */
  private List<String> walk(
      Owner owner,
      List<String> seeds,
      Map<String, Memory> known,
      Optional<MemoryType> type,
      Instant now) {
    Map<String, Double> reached = new HashMap<>();
    Set<String> frontier = new LinkedHashSet<>(seeds);
    Set<String> seen = new HashSet<>(seeds);
    for (int step = 1; step <= 2 && !frontier.isEmpty(); step++) {
      double damping = step == 1 ? 1 : 0.5;
      // Each link of the frontier, either way, as the neighbour it leads to.
      List<Association> links = new ArrayList<>();
      for (String id : frontier) {
        Memory memory = known.get(id);
        if (memory != null) {
          links.addAll(memory.associations());
        }
      }
      for (Memory linking : store.linkingTo(owner, frontier)) {
        known.putIfAbsent(linking.id(), linking);
        for (Association a : linking.associations()) {
          if (frontier.contains(a.target())) {
            links.add(new Association(linking.id(), a.relation(), a.weight()));
          }
        }
      }
      load(owner, links.stream().map(Association::target).toList(), known);
      Set<String> next = new LinkedHashSet<>();
      for (Association link : links) {
        Memory neighbour = known.get(link.target());
        // A seed linked to another seed is reached too: being linked to a match is the signal.
        if (neighbour == null || type.isPresent() && neighbour.type() != type.get()) {
          continue;
        }
        double score =
            effectiveImportance(neighbour, now)
                * link.weight()
                * link.relation().multiplier()
                * damping;
        reached.merge(neighbour.id(), score, Math::max);
        if (seen.add(neighbour.id())) {
          next.add(neighbour.id());
        }
      }
      frontier = next;
    }
    return reached.entrySet().stream()
        .sorted(Map.Entry.<String, Double>comparingByValue().reversed())
        .map(Map.Entry::getKey)
        .toList();
  }

  private void load(Owner owner, Collection<String> ids, Map<String, Memory> known) {
    List<String> missing = ids.stream().filter(id -> !known.containsKey(id)).distinct().toList();
    store.get(owner, missing).forEach(m -> known.put(m.id(), m));
  }

  private static void fuse(Map<String, Double> fused, List<String> ranking) {
    for (int rank = 0; rank < ranking.size(); rank++) {
      fused.merge(ranking.get(rank), 1.0 / (RRF_K + rank + 1), Double::sum);
    }
  }

  private static List<String> ranked(Map<String, Double> fused) {
    return fused.entrySet().stream()
        .sorted(
            Map.Entry.<String, Double>comparingByValue()
                .reversed()
                .thenComparing(Map.Entry.comparingByKey()))
        .map(Map.Entry::getKey)
        .toList();
  }

  // ---- the other modes ----

  private Recall byDate(Owner owner, int maxResults, Optional<MemoryType> type, Instant now) {
    List<Memory> recent = store.recent(owner, maxResults, type);
    return new Recall(
        recent.stream().map(m -> new Recalled(m, effectiveImportance(m, now))).toList(),
        recent.size(),
        Optional.empty());
  }

  private Recall byImportance(Owner owner, int maxResults, Optional<MemoryType> type, Instant now) {
    List<Memory> all = store.all(owner, type);
    Map<String, Double> importance = new LinkedHashMap<>();
    all.forEach(m -> importance.put(m.id(), effectiveImportance(m, now)));
    List<Recalled> ranked =
        all.stream()
            .sorted(
                Comparator.<Memory>comparingDouble(m -> importance.get(m.id()))
                    .reversed()
                    .thenComparing(Memory::createdAt, Comparator.reverseOrder()))
            .limit(maxResults)
            .map(m -> new Recalled(m, importance.get(m.id())))
            .toList();
    return new Recall(ranked, all.size(), Optional.empty());
  }

  @Override
  public void close() {
    // No interrupt: the pass ends after its batch (an interrupt would reach the embedder and the
    // store mid-write); a pass still running after the wait is left to its daemon thread.
    closed = true;
    background.shutdown();
    try {
      background.awaitTermination(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    try {
      embedder.close();
    } finally {
      store.close();
    }
  }
}
