package dev.toolhost.benchmarks;

import dev.toolhost.search.Bm25Index;
import dev.toolhost.search.KnownService;
import dev.toolhost.search.ServiceIndex;
import dev.toolhost.search.ServiceKind;
import dev.toolhost.search.ServiceMatch;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.apache.lucene.analysis.standard.StandardAnalyzer;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.TextField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.Term;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.search.similarities.BM25Similarity;
import org.apache.lucene.store.ByteBuffersDirectory;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Service search over 10,000 short service descriptions: Toolhost's BM25 index, the service index
 * on top of it (which also ranks each hit's skills), and a Lucene BM25 index of the same documents
 * as the peer, all asked the same queries for their top five.
 *
 * <p>Documents are synthetic but shaped like real entries: an id, a one-sentence summary, a few
 * tags and three to six capabilities with a short description, about 40 tokens, drawn from a
 * 3,000-word vocabulary. With {@code vocabulary=zipf} word frequencies are skewed (word of rank r
 * drawn with probability about 1/(r+10)): a handful of words act like "the" and "for" and appear in
 * most documents, as they do in natural-language requests such as the ones context hints are
 * computed from. With {@code vocabulary=uniform} every word is equally likely (about 130 documents
 * per word): keyword queries over a varied catalogue. Queries are two or three words drawn from the
 * same distribution. Both engines see the same tokens: Lucene indexes the text as tokenized by
 * {@link Bm25Index#tokenize} (space-joined, through its {@code StandardAnalyzer}) and gets one
 * {@code SHOULD} term query per distinct query token. Lucene uses {@code BM25Similarity(1.5f,
 * 0.75f)} in a {@code ByteBuffersDirectory}; it has no phrase bonus, Toolhost's index does (and
 * pays for it).
 *
 * <p>Sample time, so that JMH reports percentiles (p0.50 is the median query).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(
    value = 1,
    jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class SearchBenchmark {

  static final int SERVICES = 10_000;
  static final int QUERIES = 256;

  /** How word frequencies are distributed: {@code zipf} (skewed) or {@code uniform}. */
  @Param({"zipf", "uniform"})
  public String vocabulary;

  private Bm25Index<KnownService> bm25;
  private ServiceIndex services;
  private KnownService[] byLuceneDoc;
  private ByteBuffersDirectory directory;
  private DirectoryReader reader;
  private IndexSearcher lucene;
  private String[] queries;

  /** The position in the query list; one per thread. */
  @State(Scope.Thread)
  public static class Cursor {
    int next;
  }

  @Setup(Level.Trial)
  public void setUp() throws IOException {
    Corpus corpus = new Corpus(new Random(20260101), vocabulary.equals("zipf"));
    List<KnownService> all = corpus.services(SERVICES);
    bm25 = new Bm25Index<>();
    services = new ServiceIndex();
    byLuceneDoc = all.toArray(KnownService[]::new);
    directory = new ByteBuffersDirectory();
    IndexWriterConfig config = new IndexWriterConfig(new StandardAnalyzer());
    config.setSimilarity(new BM25Similarity(1.5f, 0.75f));
    try (IndexWriter writer = new IndexWriter(directory, config)) {
      for (KnownService service : all) {
        String text = Corpus.text(service);
        bm25.put(service.kind().wireName() + ":" + service.id(), service, text);
        services.put(service);
        Document doc = new Document();
        doc.add(new TextField("text", String.join(" ", Bm25Index.tokenize(text)), Field.Store.NO));
        writer.addDocument(doc);
      }
      // One segment, as a long-lived index would be after merging.
      writer.forceMerge(1);
    }
    reader = DirectoryReader.open(directory);
    lucene = new IndexSearcher(reader);
    lucene.setSimilarity(new BM25Similarity(1.5f, 0.75f));
    queries = corpus.queries(QUERIES);
  }

  @TearDown(Level.Trial)
  public void tearDown() throws IOException {
    reader.close();
    directory.close();
  }

  /** Toolhost's BM25 index: tokenize the query, score the postings, take the top five. */
  @Benchmark
  public List<Bm25Index.Hit<KnownService>> toolhostBm25(Cursor cursor) {
    return bm25.search(queries[cursor.next++ & (QUERIES - 1)], 5);
  }

  /** The service index: the same search, plus the top three capabilities of each hit. */
  @Benchmark
  public List<ServiceMatch> toolhostServiceIndex(Cursor cursor) {
    return services.search(queries[cursor.next++ & (QUERIES - 1)], 5);
  }

  /** Lucene: tokenize the query the same way, one SHOULD clause per term, top five services. */
  @Benchmark
  public KnownService[] lucene(Cursor cursor) throws IOException {
    int i = cursor.next++ & (QUERIES - 1);
    // Tokenizing is part of the query's cost, as it is for Toolhost.
    List<String> tokens = List.copyOf(new LinkedHashSet<>(Bm25Index.tokenize(queries[i])));
    BooleanQuery.Builder query = new BooleanQuery.Builder();
    for (String token : tokens) {
      query.add(new TermQuery(new Term("text", token)), BooleanClause.Occur.SHOULD);
    }
    TopDocs top = lucene.search(query.build(), 5);
    KnownService[] found = new KnownService[top.scoreDocs.length];
    for (int j = 0; j < found.length; j++) {
      found[j] = byLuceneDoc[top.scoreDocs[j].doc];
    }
    return found;
  }

  /** Synthetic services and queries over a skewed vocabulary. */
  static final class Corpus {
    private static final String[] SYLLABLES = {
      "ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "be", "da", "fi", "go", "hu", "ja", "pe",
      "qu", "ri", "so", "tu", "wa", "xe", "yo", "ze", "bri", "cla", "dro", "fle", "gri", "pla",
      "tro"
    };

    private final Random random;
    private final boolean skewed;
    private final String[] vocabulary = new String[3000];

    Corpus(Random random, boolean skewed) {
      this.random = random;
      this.skewed = skewed;
      LinkedHashSet<String> words = new LinkedHashSet<>();
      while (words.size() < vocabulary.length) {
        StringBuilder word = new StringBuilder();
        int parts = 2 + random.nextInt(2);
        for (int i = 0; i < parts; i++) {
          word.append(SYLLABLES[random.nextInt(SYLLABLES.length)]);
        }
        if (word.length() >= 4) {
          words.add(word.toString());
        }
      }
      words.toArray(vocabulary);
    }

    /**
     * A word: skewed, rank r drawn with probability about 1/(r+10) (a few common words, a long
     * tail); else any word alike.
     */
    String word() {
      if (!skewed) {
        return vocabulary[random.nextInt(vocabulary.length)];
      }
      double u = random.nextDouble();
      int rank = (int) (Math.pow(vocabulary.length + 10, u) - 10);
      return vocabulary[Math.clamp(rank, 0, vocabulary.length - 1)];
    }

    String words(int count) {
      StringBuilder text = new StringBuilder();
      for (int i = 0; i < count; i++) {
        if (i > 0) {
          text.append(' ');
        }
        text.append(word());
      }
      return text.toString();
    }

    List<KnownService> services(int count) {
      ServiceKind[] kinds = ServiceKind.values();
      List<KnownService> all = new ArrayList<>(count);
      for (int i = 0; i < count; i++) {
        List<KnownService.Capability> capabilities = new ArrayList<>();
        int n = 3 + random.nextInt(4);
        for (int c = 0; c < n; c++) {
          capabilities.add(
              new KnownService.Capability(word() + "_" + word(), words(3 + random.nextInt(3))));
        }
        all.add(
            new KnownService(
                "svc-" + i,
                kinds[i % kinds.length],
                words(8 + random.nextInt(8)) + ".",
                capabilities,
                List.of(word(), word())));
      }
      return all;
    }

    String[] queries(int count) {
      String[] queries = new String[count];
      for (int i = 0; i < count; i++) {
        queries[i] = words(2 + random.nextInt(2));
      }
      return queries;
    }

    /** The text both engines index: what {@code ServiceIndex} indexes for a service. */
    static String text(KnownService service) {
      StringBuilder text = new StringBuilder(service.id()).append('\n').append(service.summary());
      service.tags().forEach(tag -> text.append('\n').append(tag));
      service
          .capabilities()
          .forEach(c -> text.append('\n').append(c.name()).append(": ").append(c.description()));
      return text.toString();
    }
  }
}
