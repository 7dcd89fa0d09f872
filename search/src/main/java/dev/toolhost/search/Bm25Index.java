package dev.toolhost.search;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * A BM25 index is an inverted index of text documents, each stored under a unique key with an item,
 * that ranks them against a query by Okapi BM25 with a phrase bonus.
 *
 * <p>The ranking is RockBot's {@code Bm25Ranker}, term for term:
 *
 * <ul>
 *   <li>Tokens: the text lowercased and split on every character that is not a letter or a digit;
 *       tokens shorter than three characters are dropped ({@link #tokenize}).
 *   <li>Query terms are the distinct query tokens. A term {@code t} that occurs {@code f} times in
 *       a document of {@code len} tokens scores {@code idf(t) * f * (k1 + 1) / (f + k1 * (1 - b + b
 *       * len / avgdl))}, with {@code k1 = 1.5}, {@code b = 0.75}, {@code avgdl} the mean document
 *       length in tokens over the index, and {@code idf(t) = ln((N - n + 0.5) / (n + 0.5) + 1)}
 *       where {@code N} is the number of documents and {@code n} the number holding {@code t}.
 *   <li>Phrase bonus: each distinct pair of adjacent query tokens ("reschedule meeting") is scored
 *       as one more term, with the same formula, and that term score is doubled: {@code 2 * idf(p)
 *       * f * (k1 + 1) / (f + k1 * (1 - b + b * len / avgdl))}, where {@code n} (inside {@code
 *       idf(p)}) is the number of documents holding the phrase and {@code f} the number of times
 *       this document holds it; {@code len} stays the document's length in single tokens. A
 *       document holds a phrase where the two tokens are adjacent in its token sequence, so the
 *       punctuation or one- and two-letter words between them ("web-search", "search a web") do not
 *       break it. (RockBot searches the raw lowercased text for the two words joined by one space;
 *       matching on tokens agrees with it on plain prose and lets the phrase have postings of its
 *       own.)
 *   <li>A document scoring zero is not a result. Results are ordered by score, highest first, ties
 *       by key. A hit's relevance is its score over the top score of the same search, rounded to
 *       two decimals: the best hit has relevance 1.0.
 * </ul>
 *
 * <p>Searching reads only the postings of the query's terms and phrases, never every document.
 * Thread-safe: any number of searches run at once; a put or remove waits for the searches in
 * progress and is seen whole by every search that starts after it. Keys and texts must not be null.
 *
 * @param <T> the item stored with each document and handed back with its hits
 */
public final class Bm25Index<T> {

  /** Term frequency saturation. */
  public static final double K1 = 1.5;

  /** Length normalisation. */
  public static final double B = 0.75;

  private static final int MIN_TOKEN_LENGTH = 3;
  private static final int SCRATCH_POOL = 8;

  private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
  private final Map<String, Postings> terms = new HashMap<>();
  private final Map<String, Postings> phrases = new HashMap<>();
  private final Map<String, Integer> slots = new HashMap<>();
  private final AtomicReferenceArray<Scratch> scratchPool =
      new AtomicReferenceArray<>(SCRATCH_POOL);
  private Doc<T>[] docs = newDocs(64);
  private int[] lengths = new int[64];
  private int[] freeSlots = new int[16];
  private int freeCount;
  private int slotCount;
  private int size;
  private long totalLength;

  /** An empty index. */
  public Bm25Index() {}

  /**
   * A hit is one document that matched a search.
   *
   * @param key the document's key
   * @param item the item stored with it
   * @param score its BM25 score, phrase bonus included
   * @param relevance its score over the top score of the search, rounded to two decimals
   */
  public record Hit<T>(String key, T item, double score, double relevance) {}

  /**
   * Returns the tokens of the text: lowercased, split on every character that is not a letter or a
   * digit, keeping tokens of three or more characters, in order.
   */
  public static List<String> tokenize(String text) {
    List<String> tokens = new ArrayList<>();
    StringBuilder token = new StringBuilder();
    int length = 0;
    for (int i = 0; i < text.length(); ) {
      int cp = text.codePointAt(i);
      i += Character.charCount(cp);
      if (Character.isLetterOrDigit(cp)) {
        token.appendCodePoint(Character.toLowerCase(cp));
        length++;
      } else {
        if (length >= MIN_TOKEN_LENGTH) {
          tokens.add(token.toString());
        }
        token.setLength(0);
        length = 0;
      }
    }
    if (length >= MIN_TOKEN_LENGTH) {
      tokens.add(token.toString());
    }
    return tokens;
  }

  /**
   * Ranks the items against the query once, without keeping an index: the items are the whole
   * corpus ({@code N} is their number), scored one by one. Meant for small collections (a service's
   * skills, a session's working memory). A hit's key is its item's position, zero-padded to ten
   * digits; ties keep the items' order.
   *
   * @return up to {@code limit} matching items, best first, with their scores and relevance
   */
  public static <T> List<Hit<T>> rank(
      Collection<T> items, Function<T, String> text, String query, int limit) {
    List<T> all = List.copyOf(items);
    List<List<String>> docs = new ArrayList<>(all.size());
    for (T item : all) {
      docs.add(tokenize(text.apply(item)));
    }
    double[] scores = scan(docs, Query.of(query));
    List<Integer> order = new ArrayList<>();
    for (int i = 0; i < scores.length; i++) {
      if (scores[i] > 0) {
        order.add(i);
      }
    }
    // Stable: equal scores keep the items' order.
    order.sort((a, b) -> Double.compare(scores[b], scores[a]));
    List<Hit<T>> hits = new ArrayList<>(Math.min(limit, order.size()));
    for (int i = 0; i < order.size() && i < limit; i++) {
      int at = order.get(i);
      double relevance = Math.round(scores[at] / scores[order.get(0)] * 100) / 100.0;
      hits.add(new Hit<>("%010d".formatted(at), all.get(at), scores[at], relevance));
    }
    return List.copyOf(hits);
  }

  /** The terms and adjacent pairs of a query, each once, in order. */
  record Query(List<String> terms, List<String[]> phrases) {
    static Query of(String query) {
      List<String> tokens = tokenize(query);
      List<String[]> phrases = new ArrayList<>();
      Set<String> seen = new LinkedHashSet<>();
      for (int i = 1; i < tokens.size(); i++) {
        if (seen.add(tokens.get(i - 1) + ' ' + tokens.get(i))) {
          phrases.add(new String[] {tokens.get(i - 1), tokens.get(i)});
        }
      }
      return new Query(List.copyOf(new LinkedHashSet<>(tokens)), phrases);
    }
  }

  /**
   * Scores each tokenized document against the query, the documents being the whole corpus, by
   * looking at every token of every document: the plain form of the ranking this index computes
   * from its postings.
   */
  static double[] scan(List<List<String>> docs, Query query) {
    int n = docs.size();
    double[] scores = new double[n];
    if (n == 0) {
      return scores;
    }
    double avgdl = docs.stream().mapToInt(List::size).average().orElse(0);
    if (avgdl == 0) {
      avgdl = 1;
    }
    int[] counts = new int[n];
    for (String term : query.terms()) {
      int holding = 0;
      for (int d = 0; d < n; d++) {
        int count = 0;
        for (String token : docs.get(d)) {
          if (token.equals(term)) {
            count++;
          }
        }
        counts[d] = count;
        holding += count > 0 ? 1 : 0;
      }
      add(scores, counts, docs, holding, 1.0, avgdl);
    }
    for (String[] phrase : query.phrases()) {
      int holding = 0;
      for (int d = 0; d < n; d++) {
        List<String> doc = docs.get(d);
        int count = 0;
        for (int i = 1; i < doc.size(); i++) {
          if (doc.get(i - 1).equals(phrase[0]) && doc.get(i).equals(phrase[1])) {
            count++;
          }
        }
        counts[d] = count;
        holding += count > 0 ? 1 : 0;
      }
      add(scores, counts, docs, holding, 2.0, avgdl);
    }
    return scores;
  }

  private static void add(
      double[] scores,
      int[] counts,
      List<List<String>> docs,
      int holding,
      double factor,
      double avgdl) {
    if (holding == 0) {
      return;
    }
    int n = docs.size();
    double idf = Math.log((n - holding + 0.5) / (holding + 0.5) + 1.0);
    for (int d = 0; d < n; d++) {
      int f = counts[d];
      if (f > 0) {
        scores[d] +=
            factor * idf * f * (K1 + 1) / (f + K1 * (1 - B + B * docs.get(d).size() / avgdl));
      }
    }
  }

  /** Puts a document under the key, replacing any document already there. */
  public void put(String key, T item, String text) {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(text, "text");
    // Tokenize outside the lock: writers hold it only to move postings.
    List<String> tokens = tokenize(text);
    Map<String, Integer> termFreqs = new HashMap<>();
    Map<String, Integer> phraseFreqs = new HashMap<>();
    for (int i = 0; i < tokens.size(); i++) {
      termFreqs.merge(tokens.get(i), 1, Integer::sum);
      if (i > 0) {
        phraseFreqs.merge(tokens.get(i - 1) + ' ' + tokens.get(i), 1, Integer::sum);
      }
    }
    lock.writeLock().lock();
    try {
      Integer existing = slots.get(key);
      if (existing != null) {
        unindex(existing);
      }
      int slot = takeSlot();
      String[] docTerms = termFreqs.keySet().toArray(String[]::new);
      String[] docPhrases = phraseFreqs.keySet().toArray(String[]::new);
      docs[slot] = new Doc<>(key, item, docTerms, docPhrases);
      lengths[slot] = tokens.size();
      for (Map.Entry<String, Integer> e : termFreqs.entrySet()) {
        terms.computeIfAbsent(e.getKey(), t -> new Postings()).add(slot, e.getValue());
      }
      for (Map.Entry<String, Integer> e : phraseFreqs.entrySet()) {
        phrases.computeIfAbsent(e.getKey(), t -> new Postings()).add(slot, e.getValue());
      }
      slots.put(key, slot);
      size++;
      totalLength += tokens.size();
    } finally {
      lock.writeLock().unlock();
    }
  }

  /**
   * Removes the document under the key.
   *
   * @return whether there was one
   */
  public boolean remove(String key) {
    lock.writeLock().lock();
    try {
      Integer slot = slots.get(key);
      if (slot == null) {
        return false;
      }
      unindex(slot);
      return true;
    } finally {
      lock.writeLock().unlock();
    }
  }

  /** The item under the key, if there is a document there. */
  public Optional<T> get(String key) {
    lock.readLock().lock();
    try {
      Integer slot = slots.get(key);
      return slot == null ? Optional.empty() : Optional.of(docs[slot].item);
    } finally {
      lock.readLock().unlock();
    }
  }

  /** Every item, in key order. */
  public List<T> items() {
    lock.readLock().lock();
    try {
      return slots.keySet().stream().sorted().map(key -> docs[slots.get(key)].item).toList();
    } finally {
      lock.readLock().unlock();
    }
  }

  /** The number of documents. */
  public int size() {
    lock.readLock().lock();
    try {
      return size;
    } finally {
      lock.readLock().unlock();
    }
  }

  /**
   * Returns up to {@code limit} documents that match the query, best first; none when the query has
   * no token of three or more characters.
   */
  public List<Hit<T>> search(String query, int limit) {
    return search(query, limit, item -> true);
  }

  /**
   * Returns up to {@code limit} documents whose item passes the filter and that match the query,
   * best first. The filter does not change the scores: {@code N}, {@code n} and {@code avgdl} are
   * those of the whole index.
   */
  public List<Hit<T>> search(String query, int limit, Predicate<? super T> filter) {
    if (limit <= 0) {
      return List.of();
    }
    List<String> tokens = tokenize(query);
    if (tokens.isEmpty()) {
      return List.of();
    }
    Set<String> queryTerms = new LinkedHashSet<>(tokens);
    Set<String> queryPhrases = new LinkedHashSet<>();
    for (int i = 1; i < tokens.size(); i++) {
      queryPhrases.add(tokens.get(i - 1) + ' ' + tokens.get(i));
    }
    lock.readLock().lock();
    try {
      if (size == 0) {
        return List.of();
      }
      List<Postings> postings = new ArrayList<>(queryTerms.size() + queryPhrases.size());
      long total = 0;
      for (String term : queryTerms) {
        Postings p = terms.get(term);
        if (p != null) {
          postings.add(p);
          total += p.size;
        }
      }
      int phrasesFrom = postings.size();
      for (String phrase : queryPhrases) {
        Postings p = phrases.get(phrase);
        if (p != null) {
          postings.add(p);
          total += p.size;
        }
      }
      // When the postings reach a good part of the index, scanning every slot for scores costs
      // less than keeping a list of the slots touched.
      boolean dense = total * 4 >= slotCount;
      Scratch scratch = takeScratch(slotCount);
      scratch.dense = dense;
      try {
        double avgdl = (double) totalLength / size;
        if (avgdl == 0) {
          avgdl = 1;
        }
        // k1 * (1 - b + b * len / avgdl) = base + perToken * len
        double base = K1 * (1 - B);
        double perToken = K1 * B / avgdl;
        for (int i = 0; i < postings.size(); i++) {
          double factor = i < phrasesFrom ? 1.0 : 2.0;
          if (dense) {
            accumulateDense(postings.get(i), factor, base, perToken, scratch.scores);
          } else {
            accumulate(postings.get(i), factor, base, perToken, scratch);
          }
        }
        return top(scratch, limit, filter);
      } finally {
        scratch.clear(slotCount);
        giveBack(scratch);
      }
    } finally {
      lock.readLock().unlock();
    }
  }

  private double weight(Postings postings, double factor) {
    int n = postings.size;
    double idf = Math.log((size - n + 0.5) / (n + 0.5) + 1.0);
    return factor * idf * (K1 + 1);
  }

  private void accumulate(
      Postings postings, double factor, double base, double perToken, Scratch scratch) {
    double weight = weight(postings, factor);
    int n = postings.size;
    int[] postingDocs = postings.docs;
    int[] freqs = postings.freqs;
    double[] scores = scratch.scores;
    int[] docLengths = lengths;
    for (int i = 0; i < n; i++) {
      int doc = postingDocs[i];
      int f = freqs[i];
      double score = weight * f / (f + base + perToken * docLengths[doc]);
      if (scores[doc] == 0) {
        scratch.touch(doc);
      }
      scores[doc] += score;
    }
  }

  private void accumulateDense(
      Postings postings, double factor, double base, double perToken, double[] scores) {
    double weight = weight(postings, factor);
    int n = postings.size;
    int[] postingDocs = postings.docs;
    int[] freqs = postings.freqs;
    int[] docLengths = lengths;
    for (int i = 0; i < n; i++) {
      int doc = postingDocs[i];
      int f = freqs[i];
      scores[doc] += weight * f / (f + base + perToken * docLengths[doc]);
    }
  }

  private List<Hit<T>> top(Scratch scratch, int limit, Predicate<? super T> filter) {
    double[] scores = scratch.scores;
    boolean dense = scratch.dense;
    int candidates = dense ? slotCount : scratch.touchedCount;
    int capacity = Math.min(limit, candidates);
    // A min-heap of the best slots seen so far, worst at the root: lower score, then greater key.
    int[] heap = new int[capacity];
    int count = 0;
    for (int i = 0; i < candidates; i++) {
      int doc = dense ? i : scratch.touched[i];
      double score = scores[doc];
      if (score <= 0) {
        continue;
      }
      if (count == capacity) {
        // Most documents stop here, on one comparison.
        double worst = scores[heap[0]];
        if (score < worst || (score == worst && docs[doc].key.compareTo(docs[heap[0]].key) > 0)) {
          continue;
        }
      }
      if (!filter.test(docs[doc].item)) {
        continue;
      }
      if (count < capacity) {
        heap[count] = doc;
        siftUp(heap, count++, scores);
      } else {
        heap[0] = doc;
        siftDown(heap, count, scores);
      }
    }
    if (count == 0) {
      return List.of();
    }
    @SuppressWarnings("unchecked")
    Hit<T>[] hits = (Hit<T>[]) new Hit<?>[count];
    // Pop the worst first, filling from the end: hits[0] is the best.
    for (int i = count - 1; i >= 0; i--) {
      int doc = heap[0];
      heap[0] = heap[i];
      siftDown(heap, i, scores);
      hits[i] = new Hit<>(docs[doc].key, docs[doc].item, scores[doc], 0);
    }
    double topScore = hits[0].score();
    for (int i = 0; i < count; i++) {
      Hit<T> hit = hits[i];
      hits[i] =
          new Hit<>(
              hit.key(), hit.item(), hit.score(), Math.round(hit.score() / topScore * 100) / 100.0);
    }
    return List.of(hits);
  }

  /** Whether slot a ranks below slot b: a lower score, or the same score and a greater key. */
  private boolean worse(int a, int b, double[] scores) {
    int byScore = Double.compare(scores[a], scores[b]);
    return byScore != 0 ? byScore < 0 : docs[a].key.compareTo(docs[b].key) > 0;
  }

  private void siftUp(int[] heap, int at, double[] scores) {
    int doc = heap[at];
    while (at > 0) {
      int parent = (at - 1) >>> 1;
      if (!worse(doc, heap[parent], scores)) {
        break;
      }
      heap[at] = heap[parent];
      at = parent;
    }
    heap[at] = doc;
  }

  private void siftDown(int[] heap, int size, double[] scores) {
    int at = 0;
    int doc = heap[0];
    while (true) {
      int child = 2 * at + 1;
      if (child >= size) {
        break;
      }
      if (child + 1 < size && worse(heap[child + 1], heap[child], scores)) {
        child++;
      }
      if (!worse(heap[child], doc, scores)) {
        break;
      }
      heap[at] = heap[child];
      at = child;
    }
    heap[at] = doc;
  }

  private void unindex(int slot) {
    Doc<T> doc = docs[slot];
    for (String term : doc.terms) {
      removePosting(terms, term, slot);
    }
    for (String phrase : doc.phrases) {
      removePosting(phrases, phrase, slot);
    }
    slots.remove(doc.key);
    totalLength -= lengths[slot];
    size--;
    docs[slot] = null;
    lengths[slot] = 0;
    if (freeCount == freeSlots.length) {
      freeSlots = Arrays.copyOf(freeSlots, freeCount * 2);
    }
    freeSlots[freeCount++] = slot;
  }

  private static void removePosting(Map<String, Postings> index, String key, int slot) {
    Postings postings = index.get(key);
    postings.remove(slot);
    if (postings.size == 0) {
      index.remove(key);
    }
  }

  private int takeSlot() {
    if (freeCount > 0) {
      return freeSlots[--freeCount];
    }
    if (slotCount == docs.length) {
      docs = Arrays.copyOf(docs, slotCount * 2);
      lengths = Arrays.copyOf(lengths, slotCount * 2);
    }
    return slotCount++;
  }

  private Scratch takeScratch(int capacity) {
    for (int i = 0; i < SCRATCH_POOL; i++) {
      Scratch scratch = scratchPool.getAndSet(i, null);
      if (scratch != null) {
        if (scratch.scores.length >= capacity) {
          return scratch;
        }
        break;
      }
    }
    return new Scratch(Math.max(capacity, 16));
  }

  private void giveBack(Scratch scratch) {
    for (int i = 0; i < SCRATCH_POOL; i++) {
      if (scratchPool.compareAndSet(i, null, scratch)) {
        return;
      }
    }
  }

  @SuppressWarnings("unchecked")
  private static <T> Doc<T>[] newDocs(int capacity) {
    return (Doc<T>[]) new Doc<?>[capacity];
  }

  /** One indexed document: what it was put with, and the terms and phrases it is posted under. */
  private record Doc<T>(String key, T item, String[] terms, String[] phrases) {}

  /** The documents holding one term or phrase, with how often each holds it; unordered. */
  private static final class Postings {
    int[] docs = new int[4];
    int[] freqs = new int[4];
    int size;

    void add(int doc, int freq) {
      if (size == docs.length) {
        docs = Arrays.copyOf(docs, size * 2);
        freqs = Arrays.copyOf(freqs, size * 2);
      }
      docs[size] = doc;
      freqs[size] = freq;
      size++;
    }

    void remove(int doc) {
      for (int i = 0; i < size; i++) {
        if (docs[i] == doc) {
          size--;
          docs[i] = docs[size];
          freqs[i] = freqs[size];
          return;
        }
      }
    }
  }

  /** Per-search score accumulators, indexed by slot; pooled, and all zero between searches. */
  private static final class Scratch {
    final double[] scores;
    int[] touched = new int[64];
    int touchedCount;
    boolean dense;

    Scratch(int capacity) {
      scores = new double[capacity];
    }

    void touch(int doc) {
      if (touchedCount == touched.length) {
        touched = Arrays.copyOf(touched, touchedCount * 2);
      }
      touched[touchedCount++] = doc;
    }

    void clear(int slots) {
      if (dense) {
        Arrays.fill(scores, 0, slots, 0);
      } else {
        for (int i = 0; i < touchedCount; i++) {
          scores[touched[i]] = 0;
        }
      }
      touchedCount = 0;
      dense = false;
    }
  }
}
