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
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Random;
import java.util.UUID;
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
 * time, each embedded and committed before the next. Usage: {@code MemoryRecallLoad [sizes]
 * [queries] [saves]}, defaults {@code 1000,10000,100000 200 300}.
 */
public final class MemoryRecallLoad {

  private static final String USER = "bench";
  private static final Owner OWNER = Owner.of(USER);
  private static final int DIMENSION = 384;

  private MemoryRecallLoad() {}

  /** Runs the load and prints a table. */
  public static void main(String[] args) throws Exception {
    int[] sizes =
        Arrays.stream((args.length > 0 ? args[0] : "1000,10000,100000").split(","))
            .mapToInt(Integer::parseInt)
            .toArray();
    int queries = args.length > 1 ? Integer.parseInt(args[1]) : 200;
    int saves = args.length > 2 ? Integer.parseInt(args[2]) : 300;
    Random random = new Random(42);
    String[] vocabulary = vocabulary(random);
    MiniLmEmbedder model = new MiniLmEmbedder();
    model.embed(List.of("warm up the model"));
    Embedder shared = new Unclosed(model);

    System.out.printf(
        Locale.ROOT,
        "%-8s %-9s | %-22s | %-18s | %-18s | %-18s%n",
        "memories",
        "build s",
        "hybrid recall p50/p99",
        "embed query p50/99",
        "Lucene BM25 p50/99",
        "Lucene KNN p50/99");
    for (int size : sizes) {
      Path directory = Files.createTempDirectory("memory-recall-load");
      try {
        long built = System.nanoTime();
        try (LuceneMemoryStore store = LuceneMemoryStore.open(directory)) {
          bulkLoad(store, size, vocabulary, random);
        }
        double buildSeconds = (System.nanoTime() - built) / 1e9;
        List<String> texts = new ArrayList<>();
        for (int i = 0; i < queries; i++) {
          texts.add(sentence(vocabulary, random, 3, 6));
        }
        long[] hybrid = new long[queries];
        long[] embed = new long[queries];
        List<float[]> vectors = new ArrayList<>();
        try (LongTermMemory memory =
            new LongTermMemory(
                LuceneMemoryStore.open(directory),
                shared,
                Duration.ofHours(1),
                Clock.systemUTC())) {
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
        System.out.printf(
            Locale.ROOT,
            "%-8d %-9.1f | %-22s | %-18s | %-18s | %-18s%n",
            size,
            buildSeconds,
            millis(hybrid),
            millis(embed),
            millis(bm25),
            millis(knn));
      } finally {
        delete(directory);
      }
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
