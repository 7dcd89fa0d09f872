package dev.toolhost.longterm;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.FloatBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
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
import org.apache.lucene.index.IndexReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.NumericDocValues;
import org.apache.lucene.index.ReaderUtil;
import org.apache.lucene.index.StoredFields;
import org.apache.lucene.index.Term;
import org.apache.lucene.index.TieredMergePolicy;
import org.apache.lucene.index.VectorSimilarityFunction;
import org.apache.lucene.search.BooleanClause.Occur;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.KnnFloatVectorQuery;
import org.apache.lucene.search.MatchAllDocsQuery;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.SearcherFactory;
import org.apache.lucene.search.SearcherManager;
import org.apache.lucene.search.Sort;
import org.apache.lucene.search.SortField;
import org.apache.lucene.search.TermInSetQuery;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.search.TermRangeQuery;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.FSDirectory;
import org.apache.lucene.util.BytesRef;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * The Lucene memory store is the embedded store: one Lucene index in a directory (under the host's
 * state directory), each memory a document with its text under BM25 and its vector in a vector
 * field, so that one index answers both rankings.
 *
 * <p><b>Durability.</b> A save, a delete and a new vector are appended to a journal in the index's
 * directory and synced to disk before the method returns; Lucene's own commit, which syncs several
 * files and costs tens of milliseconds, follows in the background within a second and empties the
 * journal. Opening the store applies whatever the journal still holds (a host that ended between
 * the two), so a memory whose save returned survives any end of the host. Recall counts and times
 * are kept aside (and shown on every read) and written as doc values in place once a minute and
 * when the store closes: a crash may lose the last minute of them, never a memory.
 *
 * <p><b>Reads never wait for writes.</b> Every change is made by one thread of the store's own,
 * which reopens the reader before the change's method returns: a search that starts after a save
 * returned finds the memory, and a search runs on the caller's thread with the reader of the
 * moment, never waiting for a save, a commit, a reopen or the minute's write of recall counts.
 *
 * <p>The vector field is named by its dimension ({@code vector_384}), since Lucene fixes a field's
 * dimension; which model made a memory's vector is the {@code embedded_with} field, so vectors of
 * an older model are never compared with a query of the new one. Vectors are normalised and
 * compared by dot product, which is their cosine. Holds the index's write lock until closed: one
 * host per directory.
 */
public final class LuceneMemoryStore implements MemoryStore {

  private static final String ID = "id";
  private static final String USER = "user";
  private static final String AGENT = "agent";
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

  // A skill is a document of its own kind, with none of a memory's fields: no memory query (each
  // filters by user, or excludes the kind) ever finds one.
  private static final String KIND = "kind";
  private static final String SKILL = "skill";
  private static final String SKILL_KEY = "skill_key";
  private static final String SKILL_OWNER = "skill_owner";
  private static final String SKILL_NAME = "skill_name";
  private static final String SKILL_DESCRIPTION = "skill_description";
  private static final String SKILL_CONTENT = "skill_content";
  private static final String SKILL_SAVED = "skill_saved";

  /** The journal of changes not yet in Lucene's last commit, in the index's directory. */
  static final String JOURNAL = "toolhost-journal.jsonl";

  /** How long a change may wait for Lucene's commit; the journal holds it meanwhile. */
  static final Duration COMMIT_EVERY = Duration.ofSeconds(1);

  /**
   * The size below which the merge policy counts segments as equal, in MB. Each save makes a
   * segment of a few KB; with Lucene's default (16 MB) a few of them were merged into the memories'
   * large segment over and over, and merging its vector graph took more CPU than recall itself
   * (MemoryRecallLoad under JFR). At 1 MB the small ones merge among themselves.
   */
  static final double FLOOR_SEGMENT_MB = 1;

  /** How long recall counts and times may wait to be written (they are shown meanwhile). */
  static final Duration ACCESS_EVERY = Duration.ofMinutes(1);

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

  private static final Logger LOG = LoggerFactory.getLogger(LuceneMemoryStore.class);
  private static final JsonMapper JSON = JsonMapper.builder().build();

  private final Directory directory;
  private final Analyzer analyzer = new StandardAnalyzer(STOP_WORDS);
  private final IndexWriter writer;
  private final SearcherManager searchers;
  private final FileChannel journal;

  /**
   * The one thread that writes the index and its journal, and reopens readers: Lucene's files are
   * channels that an interrupt closes for good, and a tool call's thread is interrupted when its
   * deadline passes, so no caller's thread ever touches them.
   */
  private final ScheduledExecutorService io;

  private volatile Thread ioThread;

  /**
   * Recalls not yet in the reader a search holds, by memory id: overlaid on every read, so that a
   * recall never waits for them to be written (see {@link Access}).
   */
  private final Map<String, Access> recalls = new ConcurrentHashMap<>();

  private final java.util.concurrent.atomic.AtomicBoolean closed =
      new java.util.concurrent.atomic.AtomicBoolean();

  // Owned by the index's thread.
  private boolean dirty;
  private boolean unrefreshed;
  private Instant accessWritten = Instant.now();

  /**
   * The number of the last batch of recall counts written into the index; a searcher opened after
   * it carries it (set and read on the index's thread, and by the opener before that thread runs).
   */
  private long accessBatch;

  private LuceneMemoryStore(
      Directory directory, IndexWriter writer, FileChannel journal, Duration commitEvery)
      throws IOException {
    this.directory = directory;
    this.writer = writer;
    this.searchers =
        new SearcherManager(
            writer,
            new SearcherFactory() {
              @Override
              public IndexSearcher newSearcher(IndexReader reader, IndexReader previous) {
                return new Searcher(reader, accessBatch);
              }
            });
    this.journal = journal;
    this.io =
        Executors.newSingleThreadScheduledExecutor(
            runnable -> {
              Thread thread =
                  Thread.ofPlatform().daemon().name("memory-index-io").unstarted(runnable);
              ioThread = thread;
              return thread;
            });
    io.scheduleWithFixedDelay(
        this::commitQuietly, commitEvery.toMillis(), commitEvery.toMillis(), TimeUnit.MILLISECONDS);
  }

  /**
   * Opens (or creates) the index in the given directory, first applying what its journal holds from
   * a host that ended before the index's commit.
   *
   * @throws UncheckedIOException when the directory cannot be opened, or another store holds it
   */
  public static LuceneMemoryStore open(Path path) {
    return open(path, COMMIT_EVERY);
  }

  /** Opens the index, committing at the given interval (tests take Lucene's commit away). */
  static LuceneMemoryStore open(Path path, Duration commitEvery) {
    Directory directory = null;
    IndexWriter writer = null;
    FileChannel journal = null;
    try {
      directory = FSDirectory.open(path);
      IndexWriterConfig config = new IndexWriterConfig(new StandardAnalyzer(STOP_WORDS));
      config.setOpenMode(IndexWriterConfig.OpenMode.CREATE_OR_APPEND);
      config.setMergePolicy(new TieredMergePolicy().setFloorSegmentMB(FLOOR_SEGMENT_MB));
      writer = new IndexWriter(directory, config);
      writer.commit();
      journal =
          FileChannel.open(
              path.resolve(JOURNAL),
              StandardOpenOption.CREATE,
              StandardOpenOption.READ,
              StandardOpenOption.WRITE);
      LuceneMemoryStore store = new LuceneMemoryStore(directory, writer, journal, commitEvery);
      try {
        store.onIo(
            () -> {
              store.replay(path.resolve(JOURNAL));
              return null;
            });
      } catch (RuntimeException e) {
        store.io.shutdown();
        throw e;
      }
      return store;
    } catch (IOException e) {
      closeQuietly(journal);
      closeQuietly(writer);
      closeQuietly(directory);
      throw new UncheckedIOException("cannot open the memory index in " + path, e);
    } catch (RuntimeException e) {
      closeQuietly(journal);
      closeQuietly(writer);
      closeQuietly(directory);
      throw e;
    }
  }

  @Override
  public void save(Memory memory, Optional<Vector> vector) {
    ObjectNode entry = JSON.createObjectNode().put("op", "save");
    entry.set("memory", toJson(memory));
    vector.ifPresent(v -> entry.put("model", v.model()).put("vector", encode(v.values())));
    write(Optional.of(entry), () -> add(memory, vector));
  }

  private void add(Memory memory, Optional<Vector> vector) throws IOException {
    // Idempotent, for the journal's replay: a memory indexed already is replaced by itself.
    writer.updateDocument(new Term(ID, memory.id()), document(memory, vector));
  }

  /**
   * Saves many memories and commits them at once, for imports and benchmarks: durable once it
   * returns, as {@link #save} is for one.
   */
  public void saveAll(List<Memory> memories, List<Optional<Vector>> vectors) {
    if (memories.size() != vectors.size()) {
      throw new IllegalArgumentException("one vector (or none) per memory");
    }
    write(
        Optional.empty(),
        () -> {
          for (int i = 0; i < memories.size(); i++) {
            writer.addDocument(document(memories.get(i), vectors.get(i)));
          }
        });
    commit();
  }

  @Override
  public List<Memory> get(Owner owner, Collection<String> ids) {
    if (ids.isEmpty()) {
      return List.of();
    }
    BooleanQuery.Builder anyId = new BooleanQuery.Builder();
    Set.copyOf(ids).forEach(id -> anyId.add(new TermQuery(new Term(ID, id)), Occur.SHOULD));
    return search(
        ownerQuery(owner, Optional.empty()).add(anyId.build(), Occur.FILTER).build(), ids.size());
  }

  @Override
  public boolean delete(Owner owner, String id) {
    if (get(owner, List.of(id)).isEmpty()) {
      return false;
    }
    write(
        Optional.of(
            JSON.createObjectNode().put("op", "delete").put("user", owner.user()).put("id", id)),
        () -> writer.deleteDocuments(new Term(ID, id)));
    return true;
  }

  @Override
  public List<String> fullText(Owner owner, String query, int limit, Optional<MemoryType> type) {
    Set<String> terms = terms(query);
    if (terms.isEmpty()) {
      return List.of();
    }
    BooleanQuery.Builder words = new BooleanQuery.Builder();
    terms.forEach(term -> words.add(new TermQuery(new Term(CONTENT, term)), Occur.SHOULD));
    Query full = ownerQuery(owner, type).add(words.build(), Occur.MUST).build();
    return ids(full, limit);
  }

  @Override
  public List<String> nearest(Owner owner, Vector query, int limit, Optional<MemoryType> type) {
    Query filter =
        ownerQuery(owner, type)
            .add(new TermQuery(new Term(EMBEDDED_WITH, query.model())), Occur.FILTER)
            .build();
    return ids(
        new KnnFloatVectorQuery(
            vectorField(query.values().length), normalised(query.values()), limit, filter),
        limit);
  }

  @Override
  public List<Memory> linkingTo(Owner owner, Collection<String> ids) {
    if (ids.isEmpty()) {
      return List.of();
    }
    BooleanQuery.Builder anyTarget = new BooleanQuery.Builder();
    Set.copyOf(ids)
        .forEach(id -> anyTarget.add(new TermQuery(new Term(LINKS_TO, id)), Occur.SHOULD));
    return search(
        ownerQuery(owner, Optional.empty()).add(anyTarget.build(), Occur.FILTER).build(),
        Integer.MAX_VALUE);
  }

  @Override
  public List<Memory> recent(Owner owner, int limit, Optional<MemoryType> type) {
    return withSearcher(
        searcher -> {
          TopDocs top =
              searcher.search(
                  ownerQuery(owner, type).build(),
                  limit,
                  new Sort(new SortField(CREATED, SortField.Type.LONG, true)));
          return memories(searcher, top);
        });
  }

  @Override
  public List<Memory> all(Owner owner, Optional<MemoryType> type) {
    return search(ownerQuery(owner, type).build(), Integer.MAX_VALUE);
  }

  @Override
  public void accessed(Owner owner, Collection<String> ids, Instant at) {
    // Kept aside and overlaid on reads, and written once a minute by the index's thread: a
    // doc-values update rewrites the field for a whole segment, and the reader must reopen to see
    // it. Nothing here waits for that thread.
    for (String id : ids) {
      recalls.merge(
          id,
          new Access(owner.user(), at, 1, 0, 0),
          (a, b) ->
              new Access(a.user(), later(a.at(), b.at()), a.pending() + 1, a.written(), a.batch()));
    }
  }

  /**
   * The recalls of one memory that a reader may not hold yet.
   *
   * @param user the memory's user
   * @param at the last recall
   * @param pending recalls not yet written into the index
   * @param written recalls written into the index in the given batch, which only searchers opened
   *     after that batch hold
   * @param batch the batch that wrote {@code written}
   */
  private record Access(String user, Instant at, int pending, int written, long batch) {}

  private static Instant later(Instant a, Instant b) {
    return a.isAfter(b) ? a : b;
  }

  /** The memory as the searcher read it, with the recalls that searcher does not hold yet. */
  private Memory withRecalls(Memory memory, long searcherBatch) {
    Access access = recalls.get(memory.id());
    if (access == null || !access.user().equals(memory.user())) {
      return memory;
    }
    int count = access.pending() + (searcherBatch < access.batch() ? access.written() : 0);
    return new Memory(
        memory.id(),
        memory.user(),
        memory.agent(),
        memory.type(),
        memory.content(),
        memory.importance(),
        memory.source(),
        memory.createdAt(),
        later(access.at(), memory.accessedAt()),
        memory.accessCount() + count,
        memory.associations());
  }

  /**
   * Writes the recalls kept aside into the index's doc values, when the last write is a minute old
   * or the store closes, and reopens the reader: an update rewrites the field for a whole segment.
   * Searches meanwhile keep the reader they hold, and add the batch being written from {@link
   * #recalls} until they hold a reader opened after it.
   */
  private void writeRecalls(boolean now) throws IOException {
    if (recalls.isEmpty() || !now && Instant.now().isBefore(accessWritten.plus(ACCESS_EVERY))) {
      return;
    }
    accessWritten = Instant.now();
    // The current reader holds every earlier batch: what it reads is what the index has.
    refreshNow();
    long batch = accessBatch + 1;
    Map<String, Access> moving = new java.util.HashMap<>();
    for (String id : List.copyOf(recalls.keySet())) {
      recalls.compute(
          id,
          (key, access) -> {
            if (access == null || access.pending() == 0) {
              // Its last batch is in the reader; a search still on an older one is a minute old.
              return null;
            }
            moving.put(key, access);
            return new Access(access.user(), access.at(), 0, access.pending(), batch);
          });
    }
    if (moving.isEmpty()) {
      return;
    }
    // One search for the whole batch (a search per memory would cost a reopen each once the
    // first update is made), then one update of both fields per memory.
    for (Memory stored : raw(new TermInSetQuery(ID, ids(moving.keySet())), moving.size())) {
      Access access = moving.get(stored.id());
      if (access != null && stored.user().equals(access.user())) {
        writer.updateDocValues(
            new Term(ID, stored.id()),
            new NumericDocValuesField(
                ACCESSED, later(stored.accessedAt(), access.at()).toEpochMilli()),
            new NumericDocValuesField(ACCESS_COUNT, stored.accessCount() + access.pending()));
        dirty = true;
      }
    }
    accessBatch = batch;
    unrefreshed = true;
    refreshNow();
  }

  /** Writes the recalls kept aside now, as the minute's write does (for tests). */
  void writeRecalls() {
    onIo(
        () -> {
          writeRecalls(true);
          return null;
        });
  }

  private static List<BytesRef> ids(Collection<String> ids) {
    return ids.stream().map(BytesRef::new).toList();
  }

  /** On the index's thread: opens a reader holding every change so far, if one is missing. */
  private void refreshNow() throws IOException {
    if (unrefreshed) {
      searchers.maybeRefreshBlocking();
      unrefreshed = false;
    }
  }

  /**
   * On the index's thread: the memories the query finds as the index has them, no recalls added.
   */
  private List<Memory> raw(Query query, int limit) throws IOException {
    refreshNow();
    IndexSearcher searcher = searchers.acquire();
    try {
      TopDocs top = searcher.search(query, limit);
      List<Memory> memories = new ArrayList<>();
      var stored = searcher.storedFields();
      List<LeafReaderContext> leaves = searcher.getIndexReader().leaves();
      for (ScoreDoc hit : top.scoreDocs) {
        memories.add(read(stored, leaves, hit.doc));
      }
      return memories;
    } finally {
      searchers.release(searcher);
    }
  }

  @Override
  public List<Memory> unembedded(String model, int limit) {
    return search(unembeddedQuery(Optional.empty(), model), limit);
  }

  @Override
  public long unembeddedCount(Owner owner, String model) {
    return withSearcher(
        searcher -> (long) searcher.count(unembeddedQuery(Optional.of(owner), model)));
  }

  @Override
  public void embedded(String id, Vector vector) {
    ObjectNode entry =
        JSON.createObjectNode()
            .put("op", "embedded")
            .put("id", id)
            .put("model", vector.model())
            .put("vector", encode(vector.values()));
    write(Optional.of(entry), () -> replaceVector(id, Optional.of(vector)));
  }

  private void replaceVector(String id, Optional<Vector> vector) throws IOException {
    // As the index has it: the recalls kept aside stay aside.
    List<Memory> found = raw(new TermQuery(new Term(ID, id)), 1);
    // None when it was deleted while it waited for its vector.
    if (!found.isEmpty()) {
      writer.updateDocument(new Term(ID, id), document(found.getFirst(), vector));
    }
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
  public void indexModel(String model) {
    write(Optional.empty(), () -> writer.setLiveCommitData(Map.of(MODEL_KEY, model).entrySet()));
    commit();
  }

  @Override
  public void saveSkill(Skill skill) {
    ObjectNode entry = JSON.createObjectNode().put("op", "skill_save");
    entry
        .putObject("skill")
        .put("owner", skill.owner())
        .put("name", skill.name())
        .put("description", skill.description())
        .put("content", skill.content())
        .put("saved", skill.savedAt().toEpochMilli());
    write(Optional.of(entry), () -> addSkill(skill));
  }

  private void addSkill(Skill skill) throws IOException {
    Document doc = new Document();
    doc.add(new StringField(KIND, SKILL, Field.Store.NO));
    doc.add(new StringField(SKILL_KEY, skillKey(skill.owner(), skill.name()), Field.Store.NO));
    doc.add(new StringField(SKILL_OWNER, skill.owner(), Field.Store.NO));
    doc.add(new StoredField(SKILL_NAME, skill.name()));
    doc.add(new StoredField(SKILL_DESCRIPTION, skill.description()));
    doc.add(new StoredField(SKILL_CONTENT, skill.content()));
    doc.add(new StoredField(SKILL_SAVED, skill.savedAt().toEpochMilli()));
    // Replaces the owner's skill of that name; idempotent for the journal's replay.
    writer.updateDocument(new Term(SKILL_KEY, skillKey(skill.owner(), skill.name())), doc);
  }

  @Override
  public Optional<Skill> skill(String owner, String name) {
    return skillsMatching(new TermQuery(new Term(SKILL_KEY, skillKey(owner, name))), owner).stream()
        .findFirst();
  }

  @Override
  public List<Skill> skills(String owner) {
    List<Skill> skills =
        new ArrayList<>(skillsMatching(new TermQuery(new Term(SKILL_OWNER, owner)), owner));
    skills.sort(java.util.Comparator.comparing(Skill::name));
    return skills;
  }

  @Override
  public boolean deleteSkill(String owner, String name) {
    if (skill(owner, name).isEmpty()) {
      return false;
    }
    write(
        Optional.of(
            JSON.createObjectNode()
                .put("op", "skill_delete")
                .put("owner", owner)
                .put("name", name)),
        () -> writer.deleteDocuments(new Term(SKILL_KEY, skillKey(owner, name))));
    return true;
  }

  private List<Skill> skillsMatching(Query query, String owner) {
    return withSearcher(
        searcher -> {
          int n = searcher.count(query);
          if (n == 0) {
            return List.of();
          }
          List<Skill> skills = new ArrayList<>();
          var stored = searcher.storedFields();
          for (ScoreDoc hit : searcher.search(query, n).scoreDocs) {
            Document doc = stored.document(hit.doc);
            skills.add(
                new Skill(
                    owner,
                    doc.get(SKILL_NAME),
                    doc.get(SKILL_DESCRIPTION),
                    doc.get(SKILL_CONTENT),
                    Instant.ofEpochMilli(doc.getField(SKILL_SAVED).numericValue().longValue())));
          }
          return skills;
        });
  }

  /** One term for owner and name: a name cannot hold a newline, so no two pairs share a key. */
  private static String skillKey(String owner, String name) {
    return owner + "\n" + name;
  }

  private static Skill skillFromJson(JsonNode json) {
    return new Skill(
        json.path("owner").asString(),
        json.path("name").asString(),
        json.path("description").asString(),
        json.path("content").asString(),
        Instant.ofEpochMilli(json.path("saved").asLong()));
  }

  @Override
  public void close() {
    // Closing twice is closing once: the second finds the index thread gone.
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    try {
      onIo(
          () -> {
            try {
              commitNow(true);
              searchers.close();
              writer.close();
            } finally {
              closeQuietly(writer);
              closeQuietly(journal);
              closeQuietly(directory);
            }
            return null;
          });
    } finally {
      io.shutdown();
      try {
        io.awaitTermination(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
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
    memory.agent().ifPresent(agent -> doc.add(new StringField(AGENT, agent, Field.Store.YES)));
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
        Optional.ofNullable(doc.get(AGENT)),
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

  private static BooleanQuery.Builder ownerQuery(Owner owner, Optional<MemoryType> type) {
    BooleanQuery.Builder query = new BooleanQuery.Builder();
    query.add(new TermQuery(new Term(USER, owner.user())), Occur.FILTER);
    query.add(agentQuery(owner), Occur.FILTER);
    type.ifPresent(t -> query.add(new TermQuery(new Term(TYPE, t.wireName())), Occur.FILTER));
    return query;
  }

  /**
   * The memories the owner's agent may see: kept by no agent (a memory saved before memories had
   * agents has no agent field, and is the user's), or by the owner's agent.
   */
  private static Query agentQuery(Owner owner) {
    BooleanQuery.Builder noAgent = new BooleanQuery.Builder();
    noAgent.add(MatchAllDocsQuery.INSTANCE, Occur.FILTER);
    noAgent.add(TermRangeQuery.newStringRange(AGENT, null, null, true, true), Occur.MUST_NOT);
    if (owner.agent().isEmpty()) {
      return noAgent.build();
    }
    return new BooleanQuery.Builder()
        .add(noAgent.build(), Occur.SHOULD)
        .add(new TermQuery(new Term(AGENT, owner.agent().get())), Occur.SHOULD)
        .setMinimumNumberShouldMatch(1)
        .build();
  }

  private static Query unembeddedQuery(Optional<Owner> owner, String model) {
    BooleanQuery.Builder query = new BooleanQuery.Builder();
    query.add(MatchAllDocsQuery.INSTANCE, Occur.FILTER);
    owner.ifPresent(
        o -> {
          query.add(new TermQuery(new Term(USER, o.user())), Occur.FILTER);
          query.add(agentQuery(o), Occur.FILTER);
        });
    query.add(new TermQuery(new Term(EMBEDDED_WITH, model)), Occur.MUST_NOT);
    query.add(new TermQuery(new Term(KIND, SKILL)), Occur.MUST_NOT);
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
          // Sized by what matches, not by the limit: "all" must not allocate for the whole index.
          int n = limit <= 64 ? limit : Math.min(limit, searcher.count(query));
          return n == 0 ? List.of() : memories(searcher, searcher.search(query, n));
        });
  }

  private List<Memory> memories(IndexSearcher searcher, TopDocs top) throws IOException {
    List<Memory> memories = new ArrayList<>();
    var stored = searcher.storedFields();
    List<LeafReaderContext> leaves = searcher.getIndexReader().leaves();
    long batch = ((Searcher) searcher).accessBatch;
    for (ScoreDoc hit : top.scoreDocs) {
      memories.add(withRecalls(read(stored, leaves, hit.doc), batch));
    }
    return memories;
  }

  private static Memory read(StoredFields stored, List<LeafReaderContext> leaves, int hit)
      throws IOException {
    LeafReaderContext leaf = leaves.get(ReaderUtil.subIndex(hit, leaves));
    int doc = hit - leaf.docBase;
    return memory(
        stored.document(hit),
        value(leaf.reader().getNumericDocValues(ACCESSED), doc),
        value(leaf.reader().getNumericDocValues(ACCESS_COUNT), doc));
  }

  /** A searcher that knows the last batch of recall counts its reader holds. */
  private static final class Searcher extends IndexSearcher {
    final long accessBatch;

    Searcher(IndexReader reader, long accessBatch) {
      super(reader);
      this.accessBatch = accessBatch;
    }
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

  /**
   * Runs a read on the current searcher, on the caller's thread. It never waits for the index's
   * thread: every write reopens the reader before it returns, so the current searcher already holds
   * every change whose method returned.
   */
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

  /**
   * Applies a change: journaled and synced first when it is one that must outlive a crash, then
   * made visible to searches; Lucene's own commit follows within {@link #COMMIT_EVERY}.
   */
  private void write(Optional<ObjectNode> entry, Write change) {
    onIo(
        () -> {
          writeNow(entry, change);
          return null;
        });
  }

  private void writeNow(Optional<ObjectNode> entry, Write change) {
    try {
      if (entry.isPresent()) {
        ByteBuffer line = ByteBuffer.wrap((entry.get() + "\n").getBytes(StandardCharsets.UTF_8));
        while (line.hasRemaining()) {
          journal.write(line, journal.size());
        }
        journal.force(false);
      }
      change.run();
      dirty = true;
      unrefreshed = true;
      // Before the change's method returns, so that a search after it sees it; here, so that no
      // search ever waits for a reopen (or for a commit queued on this thread before it).
      refreshNow();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the memory index", e);
    }
  }

  /** Commits the index and empties the journal, whose changes the commit now holds. */
  private void commit() {
    onIo(
        () -> {
          commitNow();
          return null;
        });
  }

  private void commitNow() {
    commitNow(false);
  }

  private void commitNow(boolean closing) {
    try {
      writeRecalls(closing);
      if (!dirty) {
        return;
      }
      writer.commit();
      journal.truncate(0);
      journal.force(true);
      dirty = false;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot commit the memory index", e);
    }
  }

  private void commitQuietly() {
    try {
      commit();
    } catch (RuntimeException e) {
      // The journal still holds every change; the next commit, or the next start, applies it.
      LOG.warn("Cannot commit the memory index; its journal keeps the changes", e);
    }
  }

  /** Applies the changes a journal holds, in order, then commits them. */
  private void replay(Path file) throws IOException {
    int applied = 0;
    for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
      JsonNode entry;
      try {
        entry = JSON.readTree(line);
      } catch (JacksonException e) {
        // A line cut short by a crash: its save never returned.
        continue;
      }
      Optional<Vector> vector =
          entry.has("vector")
              ? Optional.of(
                  new Vector(
                      entry.path("model").asString(), decode(entry.path("vector").asString())))
              : Optional.empty();
      switch (entry.path("op").asString()) {
        case "save" -> add(fromJson(entry.path("memory")), vector);
        case "delete" -> writer.deleteDocuments(new Term(ID, entry.path("id").asString()));
        case "skill_save" -> addSkill(skillFromJson(entry.path("skill")));
        case "skill_delete" ->
            writer.deleteDocuments(
                new Term(
                    SKILL_KEY,
                    skillKey(entry.path("owner").asString(), entry.path("name").asString())));
        case "embedded" -> replaceVector(entry.path("id").asString(), vector);
        default -> LOG.warn("Skipped an unknown change in the memory index's journal: {}", line);
      }
      applied++;
      unrefreshed = true;
    }
    if (applied > 0) {
      LOG.info("Applied {} changes from the memory index's journal", applied);
      dirty = true;
      refreshNow();
      commit();
    }
  }

  private static ObjectNode toJson(Memory memory) {
    ObjectNode json =
        JSON.createObjectNode()
            .put("id", memory.id())
            .put("user", memory.user())
            .put("type", memory.type().wireName())
            .put("content", memory.content())
            .put("importance", memory.importance())
            .put("created", memory.createdAt().toEpochMilli())
            .put("accessed", memory.accessedAt().toEpochMilli())
            .put("access_count", memory.accessCount());
    memory.agent().ifPresent(agent -> json.put("agent", agent));
    memory.source().ifPresent(source -> json.put("source", source));
    var links = json.putArray("associations");
    for (Association a : memory.associations()) {
      links
          .addObject()
          .put("target", a.target())
          .put("relation", a.relation().wireName())
          .put("weight", a.weight());
    }
    return json;
  }

  private static Memory fromJson(JsonNode json) {
    List<Association> associations = new ArrayList<>();
    for (JsonNode a : json.path("associations")) {
      associations.add(
          new Association(
              a.path("target").asString(),
              Relation.of(a.path("relation").asString()).orElseThrow(),
              a.path("weight").asDouble()));
    }
    return new Memory(
        json.path("id").asString(),
        json.path("user").asString(),
        json.has("agent") ? Optional.of(json.path("agent").asString()) : Optional.empty(),
        MemoryType.of(json.path("type").asString()).orElseThrow(),
        json.path("content").asString(),
        json.path("importance").asDouble(),
        json.has("source") ? Optional.of(json.path("source").asString()) : Optional.empty(),
        Instant.ofEpochMilli(json.path("created").asLong()),
        Instant.ofEpochMilli(json.path("accessed").asLong()),
        json.path("access_count").asInt(),
        associations);
  }

  private static String encode(float[] values) {
    ByteBuffer bytes = ByteBuffer.allocate(values.length * Float.BYTES);
    bytes.asFloatBuffer().put(values);
    return Base64.getEncoder().encodeToString(bytes.array());
  }

  private static float[] decode(String text) {
    FloatBuffer floats = ByteBuffer.wrap(Base64.getDecoder().decode(text)).asFloatBuffer();
    float[] values = new float[floats.remaining()];
    floats.get(values);
    return values;
  }

  interface IoWork<T> {
    T run() throws IOException;
  }

  /**
   * Runs the work on the index's thread and waits for it, uninterruptibly (it takes milliseconds),
   * so that an interrupted caller still learns whether its write happened; the interrupt is kept.
   */
  <T> T onIo(IoWork<T> work) {
    if (Thread.currentThread() == ioThread) {
      try {
        return work.run();
      } catch (IOException e) {
        throw new UncheckedIOException("cannot write the memory index", e);
      }
    }
    Future<T> done =
        io.submit(
            () -> {
              try {
                return work.run();
              } catch (IOException e) {
                throw new UncheckedIOException("cannot write the memory index", e);
              }
            });
    boolean interrupted = false;
    try {
      while (true) {
        try {
          return done.get();
        } catch (InterruptedException e) {
          interrupted = true;
        } catch (ExecutionException e) {
          if (e.getCause() instanceof RuntimeException failure) {
            throw failure;
          }
          if (e.getCause() instanceof Error error) {
            throw error;
          }
          throw new IllegalStateException(e.getCause());
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private static void closeQuietly(AutoCloseable closeable) {
    if (closeable != null) {
      try {
        closeable.close();
      } catch (Exception e) {
        // Nothing more to release.
      }
    }
  }
}
