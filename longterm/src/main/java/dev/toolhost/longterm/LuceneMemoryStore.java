package dev.toolhost.longterm;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.CharArraySet;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.standard.StandardAnalyzer;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.KnnFloatVectorField;
import org.apache.lucene.document.NumericDocValuesField;
import org.apache.lucene.document.StoredField;
import org.apache.lucene.document.StringField;
import org.apache.lucene.document.TextField;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.NumericDocValues;
import org.apache.lucene.index.ReaderUtil;
import org.apache.lucene.index.Term;
import org.apache.lucene.index.VectorSimilarityFunction;
import org.apache.lucene.search.BooleanClause.Occur;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.KnnFloatVectorQuery;
import org.apache.lucene.search.MatchAllDocsQuery;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.SearcherManager;
import org.apache.lucene.search.Sort;
import org.apache.lucene.search.SortField;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.FSDirectory;

/**
 * The Lucene memory store is the embedded store: one Lucene index in a directory (under the host's
 * state directory), each memory a document with its text under BM25 and its vector in a vector
 * field, so that one index answers both rankings.
 *
 * <p>Every write is committed before it returns, so a memory survives the host's end, whatever way
 * it ends. Recall counts and times are doc-values updated in place. The vector field is named by
 * its dimension ({@code vector_384}), since Lucene fixes a field's dimension; which model made a
 * memory's vector is the {@code embedded_with} field, so vectors of an older model are never
 * compared with a query of the new one. Vectors are normalised and compared by dot product, which
 * is their cosine. Holds the index's write lock until closed: one host per directory.
 */
public final class LuceneMemoryStore implements MemoryStore {

  private static final String ID = "id";
  private static final String USER = "user";
  private static final String TYPE = "type";
  private static final String CONTENT = "content";
  private static final String IMPORTANCE = "importance";
  private static final String SOURCE = "source";
  private static final String CREATED = "created";
  private static final String ACCESSED = "accessed";
  private static final String ACCESS_COUNT = "access_count";
  private static final String ASSOCIATIONS = "associations";
  private static final String LINKS_TO = "links_to";
  private static final String EMBEDDED_WITH = "embedded_with";
  private static final String MODEL_KEY = "toolhost.model";

  /** Words too common to say anything about which memory is meant. */
  static final CharArraySet STOP_WORDS =
      new CharArraySet(
          List.of(
              "a", "an", "and", "are", "as", "at", "be", "but", "by", "did", "do", "does", "for",
              "from", "had", "has", "have", "i", "if", "in", "into", "is", "it", "its", "me", "my",
              "no", "not", "of", "on", "or", "our", "so", "such", "that", "the", "their", "then",
              "there", "these", "they", "this", "to", "was", "we", "were", "what", "when", "which",
              "who", "will", "with", "you", "your"),
          true);

  private final Directory directory;
  private final Analyzer analyzer = new StandardAnalyzer(STOP_WORDS);
  private final IndexWriter writer;
  private final SearcherManager searchers;

  private LuceneMemoryStore(Directory directory, IndexWriter writer, SearcherManager searchers) {
    this.directory = directory;
    this.writer = writer;
    this.searchers = searchers;
  }

  /**
   * Opens (or creates) the index in the given directory.
   *
   * @throws UncheckedIOException when the directory cannot be opened, or another store holds it
   */
  public static LuceneMemoryStore open(Path path) {
    Directory directory = null;
    try {
      directory = FSDirectory.open(path);
      IndexWriterConfig config = new IndexWriterConfig(new StandardAnalyzer(STOP_WORDS));
      config.setOpenMode(IndexWriterConfig.OpenMode.CREATE_OR_APPEND);
      IndexWriter writer = new IndexWriter(directory, config);
      try {
        writer.commit();
        return new LuceneMemoryStore(directory, writer, new SearcherManager(writer, null));
      } catch (IOException | RuntimeException e) {
        writer.close();
        throw e;
      }
    } catch (IOException e) {
      closeQuietly(directory);
      throw new UncheckedIOException("cannot open the memory index in " + path, e);
    }
  }

  @Override
  public synchronized void save(Memory memory, Optional<Vector> vector) {
    write(() -> writer.addDocument(document(memory, vector)));
  }

  @Override
  public List<Memory> get(String user, Collection<String> ids) {
    if (ids.isEmpty()) {
      return List.of();
    }
    BooleanQuery.Builder anyId = new BooleanQuery.Builder();
    Set.copyOf(ids).forEach(id -> anyId.add(new TermQuery(new Term(ID, id)), Occur.SHOULD));
    return search(
        userQuery(user, Optional.empty()).add(anyId.build(), Occur.FILTER).build(), ids.size());
  }

  @Override
  public synchronized boolean delete(String user, String id) {
    Query query =
        new BooleanQuery.Builder()
            .add(new TermQuery(new Term(USER, user)), Occur.FILTER)
            .add(new TermQuery(new Term(ID, id)), Occur.FILTER)
            .build();
    if (get(user, List.of(id)).isEmpty()) {
      return false;
    }
    write(() -> writer.deleteDocuments(query));
    return true;
  }

  @Override
  public List<String> fullText(String user, String query, int limit, Optional<MemoryType> type) {
    Set<String> terms = terms(query);
    if (terms.isEmpty()) {
      return List.of();
    }
    BooleanQuery.Builder words = new BooleanQuery.Builder();
    terms.forEach(term -> words.add(new TermQuery(new Term(CONTENT, term)), Occur.SHOULD));
    Query full = userQuery(user, type).add(words.build(), Occur.MUST).build();
    return ids(full, limit);
  }

  @Override
  public List<String> nearest(String user, Vector query, int limit, Optional<MemoryType> type) {
    Query filter =
        userQuery(user, type)
            .add(new TermQuery(new Term(EMBEDDED_WITH, query.model())), Occur.FILTER)
            .build();
    return ids(
        new KnnFloatVectorQuery(
            vectorField(query.values().length), normalised(query.values()), limit, filter),
        limit);
  }

  @Override
  public List<Memory> linkingTo(String user, Collection<String> ids) {
    if (ids.isEmpty()) {
      return List.of();
    }
    BooleanQuery.Builder anyTarget = new BooleanQuery.Builder();
    Set.copyOf(ids)
        .forEach(id -> anyTarget.add(new TermQuery(new Term(LINKS_TO, id)), Occur.SHOULD));
    return search(
        userQuery(user, Optional.empty()).add(anyTarget.build(), Occur.FILTER).build(),
        Integer.MAX_VALUE);
  }

  @Override
  public List<Memory> recent(String user, int limit, Optional<MemoryType> type) {
    return withSearcher(
        searcher -> {
          TopDocs top =
              searcher.search(
                  userQuery(user, type).build(),
                  limit,
                  new Sort(new SortField(CREATED, SortField.Type.LONG, true)));
          return memories(searcher, top);
        });
  }

  @Override
  public List<Memory> all(String user, Optional<MemoryType> type) {
    return search(userQuery(user, type).build(), Integer.MAX_VALUE);
  }

  @Override
  public synchronized void accessed(String user, Collection<String> ids, Instant at) {
    List<Memory> found = get(user, ids);
    write(
        () -> {
          for (Memory memory : found) {
            Term id = new Term(ID, memory.id());
            writer.updateNumericDocValue(id, ACCESSED, at.toEpochMilli());
            writer.updateNumericDocValue(id, ACCESS_COUNT, memory.accessCount() + 1L);
          }
        });
  }

  @Override
  public List<Memory> unembedded(String model, int limit) {
    return search(unembeddedQuery(Optional.empty(), model), limit);
  }

  @Override
  public long unembeddedCount(String user, String model) {
    return withSearcher(
        searcher -> (long) searcher.count(unembeddedQuery(Optional.of(user), model)));
  }

  @Override
  public synchronized void embedded(String id, Vector vector) {
    List<Memory> found = search(new TermQuery(new Term(ID, id)), 1);
    if (found.isEmpty()) {
      // Deleted while it waited for its vector.
      return;
    }
    write(
        () ->
            writer.updateDocument(
                new Term(ID, id), document(found.getFirst(), Optional.of(vector))));
  }

  @Override
  public Optional<String> indexModel() {
    Iterable<Map.Entry<String, String>> data = writer.getLiveCommitData();
    if (data != null) {
      for (Map.Entry<String, String> entry : data) {
        if (entry.getKey().equals(MODEL_KEY)) {
          return Optional.of(entry.getValue());
        }
      }
    }
    return Optional.empty();
  }

  @Override
  public synchronized void indexModel(String model) {
    write(() -> writer.setLiveCommitData(Map.of(MODEL_KEY, model).entrySet()));
  }

  @Override
  public synchronized void close() {
    try {
      searchers.close();
      writer.close();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot close the memory index", e);
    } finally {
      closeQuietly(directory);
    }
  }

  /** The normalised terms of a text, as its content is indexed. */
  Set<String> terms(String text) {
    Set<String> terms = new LinkedHashSet<>();
    try (TokenStream tokens = analyzer.tokenStream(CONTENT, text)) {
      CharTermAttribute term = tokens.addAttribute(CharTermAttribute.class);
      tokens.reset();
      while (tokens.incrementToken()) {
        terms.add(term.toString());
      }
      tokens.end();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return terms;
  }

  // ---- documents ----

  private Document document(Memory memory, Optional<Vector> vector) {
    Document doc = new Document();
    doc.add(new StringField(ID, memory.id(), Field.Store.YES));
    doc.add(new StringField(USER, memory.user(), Field.Store.YES));
    doc.add(new StringField(TYPE, memory.type().wireName(), Field.Store.YES));
    doc.add(new TextField(CONTENT, memory.content(), Field.Store.YES));
    doc.add(new StoredField(IMPORTANCE, memory.importance()));
    memory.source().ifPresent(source -> doc.add(new StoredField(SOURCE, source)));
    doc.add(new StoredField(CREATED, memory.createdAt().toEpochMilli()));
    doc.add(new NumericDocValuesField(CREATED, memory.createdAt().toEpochMilli()));
    doc.add(new NumericDocValuesField(ACCESSED, memory.accessedAt().toEpochMilli()));
    doc.add(new NumericDocValuesField(ACCESS_COUNT, memory.accessCount()));
    StringBuilder links = new StringBuilder();
    for (Association association : memory.associations()) {
      links
          .append(association.target())
          .append(' ')
          .append(association.relation().wireName())
          .append(' ')
          .append(association.weight())
          .append('\n');
      doc.add(new StringField(LINKS_TO, association.target(), Field.Store.NO));
    }
    doc.add(new StoredField(ASSOCIATIONS, links.toString()));
    vector.ifPresent(
        v -> {
          doc.add(new StringField(EMBEDDED_WITH, v.model(), Field.Store.YES));
          doc.add(
              new KnnFloatVectorField(
                  vectorField(v.values().length),
                  normalised(v.values()),
                  VectorSimilarityFunction.DOT_PRODUCT));
        });
    return doc;
  }

  private static Memory memory(Document doc, long accessed, long accessCount) {
    List<Association> associations = new ArrayList<>();
    for (String line : doc.get(ASSOCIATIONS).split("\n")) {
      if (!line.isBlank()) {
        String[] parts = line.split(" ");
        associations.add(
            new Association(
                parts[0], Relation.of(parts[1]).orElseThrow(), Double.parseDouble(parts[2])));
      }
    }
    return new Memory(
        doc.get(ID),
        doc.get(USER),
        MemoryType.of(doc.get(TYPE)).orElseThrow(),
        doc.get(CONTENT),
        doc.getField(IMPORTANCE).numericValue().doubleValue(),
        Optional.ofNullable(doc.get(SOURCE)),
        Instant.ofEpochMilli(doc.getField(CREATED).numericValue().longValue()),
        Instant.ofEpochMilli(accessed),
        (int) accessCount,
        associations);
  }

  private static String vectorField(int dimension) {
    return "vector_" + dimension;
  }

  static float[] normalised(float[] vector) {
    double sum = 0;
    for (float value : vector) {
      sum += value * value;
    }
    float norm = (float) Math.sqrt(sum);
    float[] unit = new float[vector.length];
    for (int i = 0; i < vector.length; i++) {
      unit[i] = norm == 0 ? 0 : vector[i] / norm;
    }
    return unit;
  }

  // ---- queries ----

  private static BooleanQuery.Builder userQuery(String user, Optional<MemoryType> type) {
    BooleanQuery.Builder query = new BooleanQuery.Builder();
    query.add(new TermQuery(new Term(USER, user)), Occur.FILTER);
    type.ifPresent(t -> query.add(new TermQuery(new Term(TYPE, t.wireName())), Occur.FILTER));
    return query;
  }

  private static Query unembeddedQuery(Optional<String> user, String model) {
    BooleanQuery.Builder query = new BooleanQuery.Builder();
    query.add(MatchAllDocsQuery.INSTANCE, Occur.FILTER);
    user.ifPresent(u -> query.add(new TermQuery(new Term(USER, u)), Occur.FILTER));
    query.add(new TermQuery(new Term(EMBEDDED_WITH, model)), Occur.MUST_NOT);
    return query.build();
  }

  private List<String> ids(Query query, int limit) {
    return withSearcher(
        searcher -> {
          List<String> ids = new ArrayList<>();
          var stored = searcher.storedFields();
          for (ScoreDoc hit : searcher.search(query, limit).scoreDocs) {
            ids.add(stored.document(hit.doc, Set.of(ID)).get(ID));
          }
          return ids;
        });
  }

  private List<Memory> search(Query query, int limit) {
    return withSearcher(
        searcher -> {
          int n = Math.max(1, Math.min(limit, Math.max(1, searcher.getIndexReader().maxDoc())));
          return memories(searcher, searcher.search(query, n));
        });
  }

  private static List<Memory> memories(IndexSearcher searcher, TopDocs top) throws IOException {
    List<Memory> memories = new ArrayList<>();
    var stored = searcher.storedFields();
    List<LeafReaderContext> leaves = searcher.getIndexReader().leaves();
    for (ScoreDoc hit : top.scoreDocs) {
      LeafReaderContext leaf = leaves.get(ReaderUtil.subIndex(hit.doc, leaves));
      int doc = hit.doc - leaf.docBase;
      memories.add(
          memory(
              stored.document(hit.doc),
              value(leaf.reader().getNumericDocValues(ACCESSED), doc),
              value(leaf.reader().getNumericDocValues(ACCESS_COUNT), doc)));
    }
    return memories;
  }

  private static long value(NumericDocValues values, int doc) throws IOException {
    return values != null && values.advanceExact(doc) ? values.longValue() : 0;
  }

  private interface Read<T> {
    T apply(IndexSearcher searcher) throws IOException;
  }

  private interface Write {
    void run() throws IOException;
  }

  private <T> T withSearcher(Read<T> read) {
    try {
      IndexSearcher searcher = searchers.acquire();
      try {
        return read.apply(searcher);
      } finally {
        searchers.release(searcher);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the memory index", e);
    }
  }

  private void write(Write change) {
    try {
      change.run();
      writer.commit();
      searchers.maybeRefreshBlocking();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the memory index", e);
    }
  }

  private static void closeQuietly(Directory directory) {
    if (directory != null) {
      try {
        directory.close();
      } catch (IOException e) {
        // Nothing more to release.
      }
    }
  }
}
