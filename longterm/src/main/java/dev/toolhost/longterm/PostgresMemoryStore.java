package dev.toolhost.longterm;

import dev.toolhost.database.Database;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.PriorityQueue;
import java.util.Set;

/**
 * The PostgreSQL memory store is the shared store: several hosts keep one user's memories in one
 * table, full text ranked by PostgreSQL ({@code tsvector}, English stemming, {@code ts_rank_cd})
 * and vectors kept as {@code real[]} and ranked by cosine in the host.
 *
 * <p>Ranking vectors in the host reads every vector of the user, which is fine for the thousands of
 * memories one person's assistant gathers and slow for hundreds of thousands; the pgvector
 * extension would rank them in the database, but this machine's PostgreSQL (Debian 12) ships none,
 * so it is not used yet. The tables ({@code {prefix}}, {@code {prefix}_meta} and the skills' {@code
 * {prefix}_skill}) are created on first use, under an advisory lock so that hosts starting together
 * do not race. Each call takes a connection from the {@link Database}'s pool and gives it back, so
 * calls of several agents run at once; a broken connection is replaced by the pool.
 */
public final class PostgresMemoryStore implements MemoryStore {

  // What the database is for, in its pool's name and PostgreSQL's list of connections.
  private static final String NAME = "long-term memory";

  private static final String COLUMNS =
      "id, user_id, memory_type, content, importance, source, created_at, accessed_at,"
          + " access_count, associations, agent_id";

  /**
   * The rows an {@link Owner} sees, with two parameters (see {@link #bind}): its user's, kept by no
   * agent or by its agent ({@code agent_id = NULL} is never true, so an owner with no agent sees
   * only the rows with none).
   */
  private static final String OWNER = "user_id = ? AND (agent_id IS NULL OR agent_id = ?)";

  private final LongTermMemoryConfig.Postgres config;
  private final String table;
  private final Database database;

  private PostgresMemoryStore(LongTermMemoryConfig.Postgres config, Database database) {
    this.config = config;
    this.table = config.tablePrefix();
    this.database = database;
  }

  /**
   * Connects and creates the tables if they are not there.
   *
   * @throws IllegalStateException when the database cannot be reached
   */
  public static PostgresMemoryStore open(LongTermMemoryConfig.Postgres config) {
    Database database;
    try {
      database = Database.open(config.url(), Optional.of(config.user()), config.password(), NAME);
    } catch (SQLException e) {
      throw failed(config, e);
    }
    PostgresMemoryStore store = new PostgresMemoryStore(config, database);
    try {
      store.run(
          connection -> {
            connection.setAutoCommit(false);
            try (Statement statement = connection.createStatement()) {
              statement.execute("SELECT pg_advisory_xact_lock(hashtext('" + store.table + "'))");
              statement.execute(
                  "CREATE TABLE IF NOT EXISTS "
                      + store.table
                      + " (id text PRIMARY KEY, user_id text NOT NULL, memory_type text NOT NULL,"
                      + " content text NOT NULL, importance double precision NOT NULL, source text,"
                      + " created_at bigint NOT NULL, accessed_at bigint NOT NULL, access_count int"
                      + " NOT NULL DEFAULT 0, associations text NOT NULL DEFAULT '', links_to"
                      + " text[] NOT NULL DEFAULT '{}', embedded_with text, embedding real[], tsv"
                      + " tsvector GENERATED ALWAYS AS (to_tsvector('english', content)) STORED)");
              // A table made before memories had agents gains the column; its rows are the users'.
              statement.execute(
                  "ALTER TABLE " + store.table + " ADD COLUMN IF NOT EXISTS agent_id text");
              statement.execute(
                  "CREATE INDEX IF NOT EXISTS "
                      + store.table
                      + "_user ON "
                      + store.table
                      + " (user_id, created_at)");
              statement.execute(
                  "CREATE INDEX IF NOT EXISTS "
                      + store.table
                      + "_tsv ON "
                      + store.table
                      + " USING gin (tsv)");
              statement.execute(
                  "CREATE INDEX IF NOT EXISTS "
                      + store.table
                      + "_links ON "
                      + store.table
                      + " USING gin (links_to)");
              statement.execute(
                  "CREATE TABLE IF NOT EXISTS "
                      + store.table
                      + "_meta (key text PRIMARY KEY, value text NOT NULL)");
              statement.execute(
                  "CREATE TABLE IF NOT EXISTS "
                      + store.table
                      + "_skill (owner text NOT NULL, name text NOT NULL, description text NOT"
                      + " NULL, content text NOT NULL, saved_at bigint NOT NULL, PRIMARY KEY (owner,"
                      + " name))");
              connection.commit();
            } catch (SQLException e) {
              connection.rollback();
              throw e;
            } finally {
              connection.setAutoCommit(true);
            }
            return null;
          });
    } catch (RuntimeException e) {
      store.close(); // the pool's connections, with the tables not made
      throw e;
    }
    return store;
  }

  @Override
  public void save(Memory memory, Optional<Vector> vector) {
    prepared(
        "INSERT INTO "
            + table
            + " ("
            + COLUMNS
            + ", links_to, embedded_with, embedding) VALUES"
            + " (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (connection, insert) -> {
          insert.setString(1, memory.id());
          insert.setString(2, memory.user());
          insert.setString(3, memory.type().wireName());
          insert.setString(4, memory.content());
          insert.setDouble(5, memory.importance());
          insert.setString(6, memory.source().orElse(null));
          insert.setLong(7, memory.createdAt().toEpochMilli());
          insert.setLong(8, memory.accessedAt().toEpochMilli());
          insert.setInt(9, memory.accessCount());
          insert.setString(10, associations(memory.associations()));
          insert.setString(11, memory.agent().orElse(null));
          insert.setArray(
              12,
              connection.createArrayOf(
                  "text", memory.associations().stream().map(Association::target).toArray()));
          insert.setString(13, vector.map(Vector::model).orElse(null));
          insert.setArray(14, vector.isPresent() ? array(connection, vector.get().values()) : null);
          insert.executeUpdate();
          return null;
        });
  }

  @Override
  public List<Memory> get(Owner owner, Collection<String> ids) {
    if (ids.isEmpty()) {
      return List.of();
    }
    return select(
        owner,
        " AND id = ANY (?)",
        (connection, select, next) -> texts(connection, select, next, ids));
  }

  @Override
  public boolean delete(Owner owner, String id) {
    return prepared(
        "DELETE FROM " + table + " WHERE " + OWNER + " AND id = ?",
        (connection, delete) -> {
          bind(delete, 1, owner);
          delete.setString(3, id);
          return delete.executeUpdate() > 0;
        });
  }

  @Override
  public List<String> fullText(Owner owner, String query, int limit, Optional<MemoryType> type) {
    if (query.isBlank()) {
      return List.of();
    }
    return prepared(
        // Any word may match, as in BM25: the query's own lexemes (stemmed, stop words
        // dropped, by the parser the content went through) joined by |.
        "WITH words AS (SELECT to_tsquery('simple', coalesce(string_agg(quote_literal(w),"
            + " ' | '), '')) AS q FROM unnest(tsvector_to_array(to_tsvector('english',"
            + " ?))) w) SELECT id FROM "
            + table
            + ", words WHERE "
            + OWNER
            + " AND tsv @@ q"
            + typed(type)
            + " ORDER BY ts_rank_cd(tsv, q) DESC, created_at DESC LIMIT ?",
        (connection, select) -> {
          select.setString(1, query);
          select.setInt(type(select, bind(select, 2, owner), type), limit);
          List<String> ids = new ArrayList<>();
          try (ResultSet rows = select.executeQuery()) {
            while (rows.next()) {
              ids.add(rows.getString(1));
            }
          }
          return ids;
        });
  }

  @Override
  public List<String> nearest(Owner owner, Vector query, int limit, Optional<MemoryType> type) {
    float[] target = LuceneMemoryStore.normalised(query.values());
    record Scored(String id, double score) {}
    PriorityQueue<Scored> best = new PriorityQueue<>(Comparator.comparingDouble(Scored::score));
    prepared(
        "SELECT id, embedding FROM "
            + table
            + " WHERE "
            + OWNER
            + " AND embedded_with = ?"
            + typed(type),
        (connection, select) -> {
          bind(select, 1, owner);
          select.setString(3, query.model());
          type(select, 4, type);
          select.setFetchSize(1000);
          try (ResultSet rows = select.executeQuery()) {
            while (rows.next()) {
              Object[] values = (Object[]) rows.getArray(2).getArray();
              if (values.length != target.length) {
                continue;
              }
              double dot = 0;
              double norm = 0;
              for (int i = 0; i < values.length; i++) {
                double v = ((Number) values[i]).doubleValue();
                dot += v * target[i];
                norm += v * v;
              }
              best.add(new Scored(rows.getString(1), norm == 0 ? 0 : dot / Math.sqrt(norm)));
              if (best.size() > limit) {
                best.poll();
              }
            }
          }
          return null;
        });
    List<String> ids = new ArrayList<>();
    while (!best.isEmpty()) {
      ids.addFirst(best.poll().id());
    }
    return ids;
  }

  @Override
  public List<Memory> linkingTo(Owner owner, Collection<String> ids) {
    if (ids.isEmpty()) {
      return List.of();
    }
    return select(
        owner,
        " AND links_to && ?",
        (connection, select, next) -> texts(connection, select, next, ids));
  }

  @Override
  public List<Memory> recent(Owner owner, int limit, Optional<MemoryType> type) {
    return select(
        owner,
        typed(type) + " ORDER BY created_at DESC LIMIT ?",
        (connection, select, next) -> select.setInt(type(select, next, type), limit));
  }

  @Override
  public List<Memory> all(Owner owner, Optional<MemoryType> type) {
    return select(owner, typed(type), (connection, select, next) -> type(select, next, type));
  }

  @Override
  public void accessed(Owner owner, Collection<String> ids, Instant at) {
    prepared(
        "UPDATE "
            + table
            + " SET accessed_at = ?, access_count = access_count + 1"
            + " WHERE "
            + OWNER
            + " AND id = ANY (?)",
        (connection, update) -> {
          update.setLong(1, at.toEpochMilli());
          bind(update, 2, owner);
          update.setArray(4, connection.createArrayOf("text", Set.copyOf(ids).toArray()));
          update.executeUpdate();
          return null;
        });
  }

  @Override
  public List<Memory> unembedded(String model, int limit) {
    return prepared(
        "SELECT "
            + COLUMNS
            + " FROM "
            + table
            + " WHERE embedded_with IS DISTINCT FROM ? ORDER BY created_at LIMIT ?",
        (connection, select) -> {
          select.setString(1, model);
          select.setInt(2, limit);
          return memories(select);
        });
  }

  @Override
  public long unembeddedCount(Owner owner, String model) {
    return prepared(
        "SELECT count(*) FROM "
            + table
            + " WHERE "
            + OWNER
            + " AND embedded_with IS DISTINCT FROM ?",
        (connection, select) -> {
          bind(select, 1, owner);
          select.setString(3, model);
          try (ResultSet rows = select.executeQuery()) {
            rows.next();
            return rows.getLong(1);
          }
        });
  }

  @Override
  public void embedded(String id, Vector vector) {
    prepared(
        "UPDATE " + table + " SET embedded_with = ?, embedding = ? WHERE id = ?",
        (connection, update) -> {
          update.setString(1, vector.model());
          update.setArray(2, array(connection, vector.values()));
          update.setString(3, id);
          update.executeUpdate();
          return null;
        });
  }

  @Override
  public Optional<String> indexModel() {
    return prepared(
        "SELECT value FROM " + table + "_meta WHERE key = 'model'",
        (connection, select) -> {
          try (ResultSet rows = select.executeQuery()) {
            return rows.next() ? Optional.of(rows.getString(1)) : Optional.<String>empty();
          }
        });
  }

  @Override
  public void indexModel(String model) {
    prepared(
        "INSERT INTO "
            + table
            + "_meta (key, value) VALUES ('model', ?)"
            + " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (connection, upsert) -> {
          upsert.setString(1, model);
          upsert.executeUpdate();
          return null;
        });
  }

  @Override
  public void saveSkill(Skill skill) {
    prepared(
        "INSERT INTO "
            + table
            + "_skill (owner, name, description, content, saved_at) VALUES (?, ?, ?, ?,"
            + " ?) ON CONFLICT (owner, name) DO UPDATE SET description ="
            + " excluded.description, content = excluded.content, saved_at ="
            + " excluded.saved_at",
        (connection, upsert) -> {
          upsert.setString(1, skill.owner());
          upsert.setString(2, skill.name());
          upsert.setString(3, skill.description());
          upsert.setString(4, skill.content());
          upsert.setLong(5, skill.savedAt().toEpochMilli());
          upsert.executeUpdate();
          return null;
        });
  }

  @Override
  public Optional<Skill> skill(String owner, String name) {
    return prepared(
        "SELECT owner, name, description, content, saved_at FROM "
            + table
            + "_skill WHERE owner = ? AND name = ?",
        (connection, select) -> {
          select.setString(1, owner);
          select.setString(2, name);
          return skills(select).stream().findFirst();
        });
  }

  @Override
  public List<Skill> skills(String owner) {
    return prepared(
        "SELECT owner, name, description, content, saved_at FROM "
            + table
            + "_skill WHERE owner = ? ORDER BY name COLLATE \"C\"",
        (connection, select) -> {
          select.setString(1, owner);
          return skills(select);
        });
  }

  @Override
  public boolean deleteSkill(String owner, String name) {
    return prepared(
        "DELETE FROM " + table + "_skill WHERE owner = ? AND name = ?",
        (connection, delete) -> {
          delete.setString(1, owner);
          delete.setString(2, name);
          return delete.executeUpdate() > 0;
        });
  }

  private static List<Skill> skills(PreparedStatement select) throws SQLException {
    List<Skill> skills = new ArrayList<>();
    try (ResultSet rows = select.executeQuery()) {
      while (rows.next()) {
        skills.add(
            new Skill(
                rows.getString(1),
                rows.getString(2),
                rows.getString(3),
                rows.getString(4),
                Instant.ofEpochMilli(rows.getLong(5))));
      }
    }
    return skills;
  }

  @Override
  public void close() {
    database.close();
  }

  // ---- rows ----

  private static String associations(List<Association> associations) {
    StringBuilder text = new StringBuilder();
    for (Association a : associations) {
      text.append(a.target())
          .append(' ')
          .append(a.relation().wireName())
          .append(' ')
          .append(a.weight())
          .append('\n');
    }
    return text.toString();
  }

  /** Sets the parameters after the owner's in a statement, from the given index. */
  @FunctionalInterface
  private interface Parameters {
    void set(Connection connection, PreparedStatement statement, int next) throws SQLException;
  }

  /**
   * The memories the owner sees that also meet the rest of the query (conditions starting with
   * {@code AND}, then any {@code ORDER BY} and {@code LIMIT}), whose parameters the given
   * parameters set.
   */
  private List<Memory> select(Owner owner, String rest, Parameters parameters) {
    return prepared(
        "SELECT " + COLUMNS + " FROM " + table + " WHERE " + OWNER + rest,
        (connection, select) -> {
          parameters.set(connection, select, bind(select, 1, owner));
          return memories(select);
        });
  }

  /** The condition on the memory type, if one is given. */
  private static String typed(Optional<MemoryType> type) {
    return type.isPresent() ? " AND memory_type = ?" : "";
  }

  /** Sets the type's parameter of {@link #typed}, if one is given; the next index. */
  private static int type(PreparedStatement statement, int index, Optional<MemoryType> type)
      throws SQLException {
    if (type.isPresent()) {
      statement.setString(index, type.get().wireName());
      return index + 1;
    }
    return index;
  }

  private static void texts(
      Connection connection, PreparedStatement statement, int index, Collection<String> values)
      throws SQLException {
    statement.setArray(index, connection.createArrayOf("text", Set.copyOf(values).toArray()));
  }

  /** Sets the owner's two parameters of {@link #OWNER} from the given index; the next index. */
  private static int bind(PreparedStatement statement, int index, Owner owner) throws SQLException {
    statement.setString(index, owner.user());
    statement.setString(index + 1, owner.agent().orElse(null));
    return index + 2;
  }

  private static List<Memory> memories(PreparedStatement select) throws SQLException {
    List<Memory> memories = new ArrayList<>();
    try (ResultSet rows = select.executeQuery()) {
      while (rows.next()) {
        List<Association> associations = new ArrayList<>();
        for (String line : rows.getString(10).split("\n")) {
          if (!line.isBlank()) {
            String[] parts = line.split(" ");
            associations.add(
                new Association(
                    parts[0], Relation.of(parts[1]).orElseThrow(), Double.parseDouble(parts[2])));
          }
        }
        memories.add(
            new Memory(
                rows.getString(1),
                rows.getString(2),
                Optional.ofNullable(rows.getString(11)),
                MemoryType.of(rows.getString(3)).orElseThrow(),
                rows.getString(4),
                rows.getDouble(5),
                Optional.ofNullable(rows.getString(6)),
                Instant.ofEpochMilli(rows.getLong(7)),
                Instant.ofEpochMilli(rows.getLong(8)),
                rows.getInt(9),
                associations));
      }
    }
    return memories;
  }

  private static Array array(Connection connection, float[] values) throws SQLException {
    Float[] boxed = new Float[values.length];
    for (int i = 0; i < values.length; i++) {
      boxed[i] = values[i];
    }
    return connection.createArrayOf("real", boxed);
  }

  /** Work on one prepared statement of the store's connection. */
  private interface Prepared<T> {
    T apply(Connection connection, PreparedStatement statement) throws SQLException;
  }

  /** Prepares the query on the store's connection, does the work with it, and closes it. */
  private <T> T prepared(String sql, Prepared<T> work) {
    return run(
        connection -> {
          try (PreparedStatement statement = connection.prepareStatement(sql)) {
            return work.apply(connection, statement);
          }
        });
  }

  private interface Work<T> {
    T apply(Connection connection) throws SQLException;
  }

  private <T> T run(Work<T> work) {
    try (Connection connection = database.connection()) {
      return work.apply(connection);
    } catch (SQLException e) {
      throw failed(config, e);
    }
  }

  private static IllegalStateException failed(
      LongTermMemoryConfig.Postgres config, SQLException e) {
    return new IllegalStateException(
        "long-term memory's database failed ("
            + Database.redacted(config.url())
            + "): "
            + e.getMessage(),
        e);
  }
}
