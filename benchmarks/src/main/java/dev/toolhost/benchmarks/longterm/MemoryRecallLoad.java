package dev.toolhost.benchmarks.longterm;

import dev.toolhost.longterm.Embedder;
import dev.toolhost.longterm.LongTermMemory;
import dev.toolhost.longterm.LuceneMemoryStore;
import dev.toolhost.longterm.Memory;
import dev.toolhost.longterm.MemoryStore;
import dev.toolhost.longterm.MemoryType;
import dev.toolhost.longterm.MiniLmEmbedder;
import dev.toolhost.longterm.Owner;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.standard.StandardAnalyzer;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.Term;
import org.apache.lucene.search.BooleanClause.Occur;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.KnnFloatVectorQuery;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.store.FSDirectory;

/**
 * The memory recall load measures {@code memory_recall}'s hybrid recall on the embedded (Lucene)
 * store at several sizes, beside bare Lucene queries of the same index, and the save rate.
 *
 * <p>For each size it bulk-loads that many memories of one user into a fresh index on disk
 * (synthetic sentences of 8 to 20 words from a 5,000-word vocabulary with Zipf-like frequencies,
 * with random unit vectors: embedding 100,000 sentences with the model would take most of an hour
 * on this machine, and a random vector costs the HNSW search no less than a real one). It then asks
 * the same queries (3 to 6 words) four ways, one after another: hybrid recall through {@link
 * LongTermMemory} with the real bundled model (embedding the query, BM25, KNN, the association
 * walk, and recording the access with a commit); the model's embedding of the query alone; a bare
 * Lucene BM25 query (one SHOULD term per query word, filtered by user, top 50); and a bare Lucene
 * KNN query (the query's vector, filtered by user and model, top 50), both on a reader of the same
 * directory. The save rate is {@link LongTermMemory#save} with the real model, one memory at a
 * time, each embedded and committed before the next.
 *
 * <p>Then, for each size, <b>recall beside saves</b>: hybrid recall, one after another for a given
 * number of seconds (long enough to take in the store's once-a-minute write of recall counts),
 * while another thread saves memories with the real model at a fixed rate, after 20 s of the same
 * unmeasured while the JIT compiles both paths ({@code -Dmemory.beside.warmup=SECONDS}); it prints
 * recall's p50, p99, p99/p50, its longest, and how many recalls took over twice the p50, with the
 * saves' p50 and p99, and as a control the model's embedding of the same query alone, timed after
 * each recall (what the machine's load does to a few milliseconds of CPU with no index in it).
 * Usage: {@code MemoryRecallLoad [sizes] [queries] [saves] [beside-seconds]
 * [beside-saves-per-second]}, defaults {@code 1000,10000,100000 200 300 75 10}; a {@code queries}
 * of 0 skips the one-after-another table and the save rate. With {@code -Dmemory.index.cache=DIR},
 * each size's built index is kept in {@code DIR/SIZE} and copied for the next run instead of built
 * again (building 100,000 memories takes minutes).
 */
public final class MemoryRecallLoad {

  private static final String USER = "bench";
  private static final Owner OWNER = Owner.of(USER);
  private static final int DIMENSION = 384;
  // How long recalls and saves run together before the measured window.
  private static final Duration WARM_UP =
      Duration.ofSeconds(Long.getLong("memory.beside.warmup", 20));

  private MemoryRecallLoad() {}

  /** Runs the load and prints a table. */
  public static void main(String[] args) throws Exception {
    int[] sizes =
        Arrays.stream((args.length > 0 ? args[0] : "1000,10000,100000").split(","))
            .mapToInt(Integer::parseInt)
            .toArray();
    int queries = args.length > 1 ? Integer.parseInt(args[1]) : 200;
    int saves = args.length > 2 ? Integer.parseInt(args[2]) : 300;
    int besideSeconds = args.length > 3 ? Integer.parseInt(args[3]) : 75;
    double besideRate = args.length > 4 ? Double.parseDouble(args[4]) : 10;
    Optional<Path> cache =
        Optional.ofNullable(System.getProperty("memory.index.cache")).map(Path::of);
    Random random = new Random(42);
    String[] vocabulary = vocabulary(random);
    MiniLmEmbedder model = new MiniLmEmbedder();
    model.embed(List.of("warm up the model"));
    Embedder shared = new Unclosed(model);

    List<String> beside = new ArrayList<>();
    if (queries > 0) {
      System.out.printf(
          Locale.ROOT,
          "%-8s %-9s | %-22s | %-18s | %-18s | %-18s%n",
          "memories",
          "build s",
          "hybrid recall p50/p99",
          "embed query p50/99",
          "Lucene BM25 p50/99",
          "Lucene KNN p50/99");
    }
    for (int size : sizes) {
      Path directory = Files.createTempDirectory("memory-recall-load");
      try {
        long built = System.nanoTime();
        build(directory, size, vocabulary, new Random(42L + size), cache);
        double buildSeconds = (System.nanoTime() - built) / 1e9;
        List<String> texts = new ArrayList<>();
        for (int i = 0; i < Math.max(queries, 200); i++) {
          texts.add(sentence(vocabulary, random, 3, 6));
        }
        if (queries > 0) {
          System.out.println(
              oneAfterAnother(directory, size, buildSeconds, texts, queries, model, shared));
        }
        beside.add(
            besideSaves(
                directory, size, texts, besideSeconds, besideRate, shared, vocabulary, random));
      } finally {
        delete(directory);
      }
    }
    System.out.printf(
        Locale.ROOT,
        "%nrecall beside %.0f saves/s for %d s:%n%-8s | %-7s | %-9s | %-9s | %-7s | %-9s | %-8s"
            + " | %-6s | %-9s | %-9s | %s%n",
        besideRate,
        besideSeconds,
        "memories",
        "recalls",
        "p50 ms",
        "p99 ms",
        "p99/p50",
        "max ms",
        ">2x p50",
        "saves",
        "save p50",
        "save p99",
        "embed alone p50 / p99");
    beside.forEach(System.out::println);
    if (queries == 0) {
      model.close();
      return;
    }

    Path directory = Files.createTempDirectory("memory-save-load");
    try (LongTermMemory memory =
        new LongTermMemory(
            LuceneMemoryStore.open(directory), shared, Duration.ofHours(1), Clock.systemUTC())) {
      for (int i = 0; i < 20; i++) {
        save(memory, sentence(vocabulary, random, 8, 20));
      }
      long start = System.nanoTime();
      for (int i = 0; i < saves; i++) {
        save(memory, sentence(vocabulary, random, 8, 20));
      }
      double seconds = (System.nanoTime() - start) / 1e9;
      System.out.printf(
          Locale.ROOT,
          "save: %d memories in %.1f s: %.0f saves/s (%.2f ms each, embedding and commit included)%n",
          saves,
          seconds,
          saves / seconds,
          seconds * 1000 / saves);
    } finally {
      delete(directory);
    }
    model.close();
  }

  /** Recall, embedding, BM25 and KNN, one query after another: a row of the first table. */
  private static String oneAfterAnother(
      Path directory,
      int size,
      double buildSeconds,
      List<String> texts,
      int queries,
      MiniLmEmbedder model,
      Embedder shared)
      throws IOException {
    long[] hybrid = new long[queries];
    long[] embed = new long[queries];
    List<float[]> vectors = new ArrayList<>();
    try (LongTermMemory memory =
        new LongTermMemory(
            LuceneMemoryStore.open(directory), shared, Duration.ofHours(1), Clock.systemUTC())) {
      // Warm-up: a quarter of the queries (at least 50), not measured.
      for (int i = 0; i < Math.max(50, queries / 4); i++) {
        memory.recall(
            OWNER, texts.get(i % queries), 10, Optional.empty(), LongTermMemory.Mode.HYBRID);
      }
      for (int i = 0; i < queries; i++) {
        long start = System.nanoTime();
        memory.recall(OWNER, texts.get(i), 10, Optional.empty(), LongTermMemory.Mode.HYBRID);
        hybrid[i] = System.nanoTime() - start;
      }
      for (int i = 0; i < queries; i++) {
        long start = System.nanoTime();
        vectors.add(model.embed(List.of(texts.get(i))).getFirst());
        embed[i] = System.nanoTime() - start;
      }
    }
    long[] bm25 = new long[queries];
    long[] knn = new long[queries];
    try (FSDirectory index = FSDirectory.open(directory);
        DirectoryReader reader = DirectoryReader.open(index);
        StandardAnalyzer analyzer = new StandardAnalyzer()) {
      IndexSearcher searcher = new IndexSearcher(reader);
      Query user = new TermQuery(new Term("user", USER));
      Query model384 =
          new BooleanQuery.Builder()
              .add(user, Occur.FILTER)
              .add(
                  new TermQuery(new Term("embedded_with", MiniLmEmbedder.MODEL + "/384")),
                  Occur.FILTER)
              .build();
      for (int round = 0; round < 2; round++) {
        for (int i = 0; i < queries; i++) {
          BooleanQuery.Builder words = new BooleanQuery.Builder();
          for (String term : terms(analyzer, texts.get(i))) {
            words.add(new TermQuery(new Term("content", term)), Occur.SHOULD);
          }
          Query query =
              new BooleanQuery.Builder()
                  .add(user, Occur.FILTER)
                  .add(words.build(), Occur.MUST)
                  .build();
          long start = System.nanoTime();
          searcher.search(query, 50);
          bm25[i] = System.nanoTime() - start;
          start = System.nanoTime();
          searcher.search(
              new KnnFloatVectorQuery("vector_384", unit(vectors.get(i)), 50, model384), 50);
          knn[i] = System.nanoTime() - start;
        }
      }
    }
    return String.format(
        Locale.ROOT,
        "%-8d %-9.1f | %-22s | %-18s | %-18s | %-18s",
        size,
        buildSeconds,
        millis(hybrid),
        millis(embed),
        millis(bm25),
        millis(knn));
  }

  /**
   * Hybrid recall one after another for the given seconds while another thread saves at the given
   * rate, after {@link #WARM_UP} of the same unmeasured: a row of the second table.
   */
  private static String besideSaves(
      Path directory,
      int size,
      List<String> texts,
      int seconds,
      double rate,
      Embedder shared,
      String[] vocabulary,
      Random random)
      throws InterruptedException {
    List<String> contents = new ArrayList<>();
    for (int i = 0; i < 2_000; i++) {
      contents.add(sentence(vocabulary, random, 8, 20));
    }
    try (LongTermMemory memory =
        new LongTermMemory(
            LuceneMemoryStore.open(directory), shared, Duration.ofHours(1), Clock.systemUTC())) {
      for (int i = 0; i < 50; i++) {
        memory.recall(
            OWNER, texts.get(i % texts.size()), 10, Optional.empty(), LongTermMemory.Mode.HYBRID);
      }
      // Recalls and saves run together unmeasured first, until the JIT has compiled both paths
      // (its compiler threads take most of a core for the first several seconds): the figures are
      // of the steady state a long-running host is in.
      long measureFrom = System.nanoTime() + WARM_UP.toNanos();
      long end = measureFrom + seconds * 1_000_000_000L;
      List<Long> saveTimes = Collections.synchronizedList(new ArrayList<>());
      Thread saver =
          Thread.ofPlatform()
              .name("memory-saver")
              .start(
                  () -> {
                    long every = (long) (1e9 / rate);
                    long next = System.nanoTime();
                    for (int i = 0; System.nanoTime() < end; i++) {
                      long start = System.nanoTime();
                      save(memory, contents.get(i % contents.size()));
                      if (start >= measureFrom) {
                        saveTimes.add(System.nanoTime() - start);
                      }
                      next += every;
                      LockSupport.parkNanos(next - System.nanoTime());
                    }
                  });
      List<Long> recallTimes = new ArrayList<>();
      List<Long> embedTimes = new ArrayList<>();
      for (int i = 0; System.nanoTime() < end; i++) {
        long start = System.nanoTime();
        memory.recall(
            OWNER, texts.get(i % texts.size()), 10, Optional.empty(), LongTermMemory.Mode.HYBRID);
        long recalled = System.nanoTime();
        // The control: the model's embedding of the same query alone, in the same conditions.
        shared.embed(List.of(texts.get(i % texts.size())));
        if (start >= measureFrom) {
          recallTimes.add(recalled - start);
          embedTimes.add(System.nanoTime() - recalled);
        }
      }
      saver.join();
      long[] recalls = recallTimes.stream().mapToLong(Long::longValue).sorted().toArray();
      long[] saves = saveTimes.stream().mapToLong(Long::longValue).sorted().toArray();
      long[] embeds = embedTimes.stream().mapToLong(Long::longValue).sorted().toArray();
      double p50 = percentile(recalls, 0.5) / 1e6;
      double p99 = percentile(recalls, 0.99) / 1e6;
      long over = Arrays.stream(recalls).filter(t -> t / 1e6 > 2 * p50).count();
      return String.format(
          Locale.ROOT,
          "%-8d | %-7d | %-9.2f | %-9.2f | %-7.2f | %-9.2f | %-8d | %-6d | %-9.2f | %-9.2f"
              + " | %.2f / %.2f",
          size,
          recalls.length,
          p50,
          p99,
          p99 / p50,
          recalls[recalls.length - 1] / 1e6,
          over,
          saves.length,
          percentile(saves, 0.5) / 1e6,
          percentile(saves, 0.99) / 1e6,
          percentile(embeds, 0.5) / 1e6,
          percentile(embeds, 0.99) / 1e6);
    }
  }

  private static long percentile(long[] sorted, double fraction) {
    return sorted[Math.min(sorted.length - 1, (int) Math.ceil(sorted.length * fraction) - 1)];
  }

  /** Builds the index of the size in the directory, or copies it from the cache. */
  private static void build(
      Path directory, int size, String[] vocabulary, Random random, Optional<Path> cache)
      throws IOException {
    Optional<Path> cached = cache.map(c -> c.resolve(Integer.toString(size)));
    if (cached.isPresent() && Files.isDirectory(cached.get())) {
      copy(cached.get(), directory);
      return;
    }
    try (LuceneMemoryStore store = LuceneMemoryStore.open(directory)) {
      bulkLoad(store, size, vocabulary, random);
    }
    if (cached.isPresent()) {
      Path partial = Files.createTempDirectory(cache.get(), "partial");
      copy(directory, partial);
      Files.move(partial, cached.get());
    }
  }

  private static void copy(Path from, Path to) throws IOException {
    try (Stream<Path> files = Files.list(from)) {
      for (Path file : files.toList()) {
        Files.copy(file, to.resolve(file.getFileName()));
      }
    }
  }

  private static void save(LongTermMemory memory, String content) {
    memory.save(OWNER, MemoryType.FACT, content, 0.6, Optional.empty(), List.of());
  }

  private static void bulkLoad(
      LuceneMemoryStore store, int size, String[] vocabulary, Random random) {
    store.indexModel(MiniLmEmbedder.MODEL + "/" + DIMENSION);
    Instant now = Instant.now();
    int batch = 5_000;
    for (int from = 0; from < size; from += batch) {
      List<Memory> memories = new ArrayList<>();
      List<Optional<MemoryStore.Vector>> vectors = new ArrayList<>();
      for (int i = from; i < Math.min(size, from + batch); i++) {
        Instant at = now.minusSeconds(size - i);
        memories.add(
            new Memory(
                UUID.randomUUID().toString(),
                USER,
                Optional.empty(),
                MemoryType.values()[i % MemoryType.values().length],
                sentence(vocabulary, random, 8, 20),
                0.5,
                Optional.empty(),
                at,
                at,
                0,
                List.of()));
        float[] vector = new float[DIMENSION];
        for (int d = 0; d < DIMENSION; d++) {
          vector[d] = (float) random.nextGaussian();
        }
        vectors.add(
            Optional.of(new MemoryStore.Vector(MiniLmEmbedder.MODEL + "/" + DIMENSION, vector)));
      }
      store.saveAll(memories, vectors);
    }
  }

  private static String[] vocabulary(Random random) {
    String[] words = new String[5_000];
    for (int i = 0; i < words.length; i++) {
      StringBuilder word = new StringBuilder();
      int length = 3 + random.nextInt(7);
      for (int c = 0; c < length; c++) {
        word.append((char) ('a' + random.nextInt(26)));
      }
      words[i] = word.toString();
    }
    return words;
  }

  /** A sentence of Zipf-like words: rank r drawn with probability about 1/(r + 10). */
  private static String sentence(String[] vocabulary, Random random, int min, int max) {
    int length = min + random.nextInt(max - min + 1);
    StringBuilder sentence = new StringBuilder();
    double total = Math.log(vocabulary.length + 10.0) - Math.log(10.0);
    for (int i = 0; i < length; i++) {
      int rank = (int) (Math.exp(Math.log(10.0) + random.nextDouble() * total) - 10);
      sentence.append(i == 0 ? "" : " ").append(vocabulary[Math.min(rank, vocabulary.length - 1)]);
    }
    return sentence.append('.').toString();
  }

  private static List<String> terms(StandardAnalyzer analyzer, String text) throws IOException {
    List<String> terms = new ArrayList<>();
    try (TokenStream tokens = analyzer.tokenStream("content", text)) {
      CharTermAttribute term = tokens.addAttribute(CharTermAttribute.class);
      tokens.reset();
      while (tokens.incrementToken()) {
        terms.add(term.toString());
      }
      tokens.end();
    }
    return terms;
  }

  private static float[] unit(float[] vector) {
    double sum = 0;
    for (float v : vector) {
      sum += v * v;
    }
    float[] unit = new float[vector.length];
    for (int i = 0; i < vector.length; i++) {
      unit[i] = (float) (vector[i] / Math.sqrt(sum));
    }
    return unit;
  }

  private static String millis(long[] nanos) {
    long[] sorted = nanos.clone();
    Arrays.sort(sorted);
    return String.format(
        Locale.ROOT,
        "%.2f / %.2f ms",
        sorted[sorted.length / 2] / 1e6,
        sorted[Math.min(sorted.length - 1, (int) Math.ceil(sorted.length * 0.99) - 1)] / 1e6);
  }

  private static void delete(Path directory) throws IOException {
    try (Stream<Path> paths = Files.walk(directory)) {
      paths.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
    }
  }

  /** The shared model, kept open across the stores that would close it. */
  private record Unclosed(Embedder inner) implements Embedder {
    @Override
    public String model() {
      return inner.model();
    }

    @Override
    public int dimension() {
      return inner.dimension();
    }

    @Override
    public List<float[]> embed(List<String> texts) {
      return inner.embed(texts);
    }

    @Override
    public void close() {}
  }
}
