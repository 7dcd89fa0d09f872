package dev.toolhost.agent;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.sql.Types;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;
import org.postgresql.ds.PGSimpleDataSource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * A conversation store is the database the conversation API's conversations outlive their host in:
 * an embedded H2 file under the state directory (one host) or PostgreSQL (several hosts). Each
 * conversation is one row of {@value #CONVERSATIONS}, keyed by its principal, agent and session id,
 * with its user, how many messages it has, what its model is sent in place of its oldest turns (the
 * summary, where it ends, the window a refusal taught) and which host's turn runs it until when;
 * its messages, in the Chat Completions wire format, one row each in {@value #MESSAGES}; the digest
 * each moved tool result is sent as, in {@value #DIGESTS}; each compaction, in {@value
 * #COMPACTIONS}. Tables are created when missing.
 *
 * <p>A turn's messages are appended after it, never the whole history rewritten, in one transaction
 * that also moves the count on, and only when the count is still what the turn started from: two
 * hosts never both append to one conversation. A write it acknowledges is in the database (H2 with
 * {@code WRITE_DELAY=0}, as {@code ScheduleStore} does it). Thread-safe; connections are opened per
 * operation, and the embedded store keeps one open for its life, so that a second process is
 * refused its file at once.
 */
public final class ConversationStore implements AutoCloseable {

  /** The conversations table. */
  public static final String CONVERSATIONS = "toolhost_conversations";

  /** The messages table. */
  public static final String MESSAGES = "toolhost_conversation_messages";

  /** The digests table. */
  public static final String DIGESTS = "toolhost_conversation_digests";

  /** The compactions table. */
  public static final String COMPACTIONS = "toolhost_conversation_compactions";

  private static final JsonMapper MAPPER = JsonMapper.shared();

  private final DataSource dataSource;
  private final boolean postgres;
  private final String description;
  private final Optional<Connection> keeper;

  private ConversationStore(
      DataSource dataSource, boolean postgres, String description, Optional<Connection> keeper) {
    this.dataSource = dataSource;
    this.postgres = postgres;
    this.description = description;
    this.keeper = keeper;
  }

  /**
   * The embedded store: an H2 database file {@code conversations.mv.db} in the directory, created
   * with its tables when missing.
   *
   * @throws SQLException when the file cannot be opened (another process has it open, say)
   */
  public static ConversationStore embedded(Path directory) throws SQLException {
    Path file = directory.toAbsolutePath().resolve("conversations");
    JdbcDataSource h2 = new JdbcDataSource();
    h2.setURL(durable("jdbc:h2:file:" + file));
    Connection keeper = h2.getConnection();
    return withTables(new ConversationStore(h2, false, file + ".mv.db", Optional.of(keeper)));
  }

  /**
   * A store on a database by JDBC URL ({@code jdbc:postgresql://...} or {@code jdbc:h2:...}), its
   * tables created when missing.
   *
   * @param password empty for none (trust authentication)
   * @throws SQLException when the database cannot be reached
   * @throws IllegalArgumentException for a URL of another database
   */
  public static ConversationStore jdbc(String url, Optional<String> user, Optional<String> password)
      throws SQLException {
    ConversationStore store;
    if (url.startsWith("jdbc:postgresql:")) {
      PGSimpleDataSource pg = new PGSimpleDataSource();
      pg.setURL(url);
      user.ifPresent(pg::setUser);
      password.ifPresent(pg::setPassword);
      store = new ConversationStore(pg, true, redacted(url), Optional.empty());
    } else if (url.startsWith("jdbc:h2:")) {
      JdbcDataSource h2 = new JdbcDataSource();
      h2.setURL(durable(url));
      user.ifPresent(h2::setUser);
      password.ifPresent(h2::setPassword);
      store = new ConversationStore(h2, false, redacted(url), Optional.of(h2.getConnection()));
    } else {
      throw new IllegalArgumentException(
          "A conversation store is jdbc:postgresql:... or jdbc:h2:..., not '"
              + redacted(url)
              + "'");
    }
    return withTables(store);
  }

  private static ConversationStore withTables(ConversationStore store) throws SQLException {
    try {
      store.createTables();
    } catch (SQLException | RuntimeException e) {
      store.close();
      throw e;
    }
    return store;
  }

  private static String durable(String url) {
    return url.toUpperCase(Locale.ROOT).contains(";WRITE_DELAY=") ? url : url + ";WRITE_DELAY=0";
  }

  private static String redacted(String url) {
    int query = url.indexOf('?');
    return query < 0 ? url : url.substring(0, query);
  }

  /** The database file or URL (without its query), for messages. */
  public String description() {
    return description;
  }

  private void createTables() throws SQLException {
    String text = postgres ? "text" : "clob";
    String time = "timestamp(6) with time zone";
    try (Connection connection = dataSource.getConnection();
        Statement statement = connection.createStatement()) {
      statement.execute(
          "create table if not exists "
              + CONVERSATIONS
              + " (id bigint generated by default as identity primary key, principal varchar(256)"
              + " not null, agent varchar(256) not null, session_id varchar(128) not null,"
              + " owner_user varchar(256), messages int not null, summary "
              + text
              + " not null, summary_cut int not null, learned_window int, running_until "
              + time
              + ", created "
              + time
              + " not null, updated "
              + time
              + " not null, constraint "
              + CONVERSATIONS
              + "_one_per_key unique (principal, agent, session_id))");
      statement.execute(
          "create index if not exists "
              + CONVERSATIONS
              + "_session on "
              + CONVERSATIONS
              + " (session_id)");
      statement.execute(
          "create table if not exists "
              + MESSAGES
              + " (conversation_id bigint not null references "
              + CONVERSATIONS
              + " (id) on delete cascade, seq int not null, message "
              + text
              + " not null, primary key (conversation_id, seq))");
      statement.execute(
          "create table if not exists "
              + DIGESTS
              + " (conversation_id bigint not null references "
              + CONVERSATIONS
              + " (id) on delete cascade, tool_call_id varchar(256) not null, digest "
              + text
              + " not null, primary key (conversation_id, tool_call_id))");
      statement.execute(
          "create table if not exists "
              + COMPACTIONS
              + " (conversation_id bigint not null references "
              + CONVERSATIONS
              + " (id) on delete cascade, seq int not null, compaction "
              + text
              + " not null, primary key (conversation_id, seq))");
    }
  }

  /**
   * Which conversation: its principal, agent and session id. A conversation is its principal's:
   * another principal's key is another conversation.
   */
  public record Key(String principal, String agent, String sessionId) {
    public Key {
      Objects.requireNonNull(principal, "principal");
      Objects.requireNonNull(agent, "agent");
      Objects.requireNonNull(sessionId, "sessionId");
    }
  }

  /**
   * A stored conversation as it is read back.
   *
   * @param id its row
   * @param user the user its calls were made as when it started; empty for the host's default
   * @param messages its history, oldest first
   * @param context what its model is sent in place of its oldest turns and moved results
   * @param compactions its compactions as the transcript shows them, oldest first
   */
  record Stored(
      long id,
      Optional<String> user,
      List<ChatMessage> messages,
      ContextState.Saved context,
      List<ObjectNode> compactions) {
    public Stored {
      Objects.requireNonNull(user, "user");
      messages = List.copyOf(messages);
      Objects.requireNonNull(context, "context");
      compactions = List.copyOf(compactions);
    }
  }

  /**
   * What a turn adds to a conversation, written after it in one transaction.
   *
   * @param from how many messages the conversation had when the turn started: the turn's first
   *     message's index
   * @param messages the turn's messages
   * @param context the context state after the turn
   * @param digests the digests made during the turn, by tool call id
   * @param compactionsFrom how many compactions the conversation had when the turn started
   * @param compactions the turn's compactions
   */
  record Appended(
      int from,
      List<ChatMessage> messages,
      ContextState.Saved context,
      Map<String, String> digests,
      int compactionsFrom,
      List<ObjectNode> compactions) {
    public Appended {
      messages = List.copyOf(messages);
      Objects.requireNonNull(context, "context");
      digests = Map.copyOf(digests);
      compactions = List.copyOf(compactions);
    }
  }

  /** What a claim of a conversation for one turn found. */
  enum Claim {
    /** The turn may run: the conversation is as the caller has it, and no other turn runs it. */
    CLAIMED,
    /** The store has messages the caller's copy lacks (another host ran a turn): read it again. */
    STALE,
    /** Another host's turn runs it now. */
    RUNNING
  }

  /**
   * Creates a conversation, its turn claimed until the given instant.
   *
   * @return its row
   * @throws SQLException also when the key exists already
   */
  long create(Key key, Optional<String> user, Instant until) throws SQLException {
    Instant now = Instant.now();
    try (Connection connection = dataSource.getConnection();
        PreparedStatement insert =
            connection.prepareStatement(
                "insert into "
                    + CONVERSATIONS
                    + " (principal, agent, session_id, owner_user, messages, summary, summary_cut,"
                    + " running_until, created, updated) values (?, ?, ?, ?, 0, '', 0, ?, ?, ?)",
                Statement.RETURN_GENERATED_KEYS)) {
      insert.setString(1, key.principal());
      insert.setString(2, key.agent());
      insert.setString(3, key.sessionId());
      insert.setString(4, user.orElse(null));
      insert.setTimestamp(5, Timestamp.from(until));
      insert.setTimestamp(6, Timestamp.from(now));
      insert.setTimestamp(7, Timestamp.from(now));
      insert.executeUpdate();
      try (ResultSet keys = insert.getGeneratedKeys()) {
        keys.next();
        return keys.getLong(1);
      }
    }
  }

  /** The conversation of that key, whole; empty when the store has none. */
  Optional<Stored> load(Key key) throws SQLException {
    try (Connection connection = dataSource.getConnection()) {
      long id;
      Optional<String> user;
      String summary;
      int cut;
      Optional<Integer> learned;
      try (PreparedStatement query =
          connection.prepareStatement(
              "select id, owner_user, summary, summary_cut, learned_window from "
                  + CONVERSATIONS
                  + " where principal = ? and agent = ? and session_id = ?")) {
        query.setString(1, key.principal());
        query.setString(2, key.agent());
        query.setString(3, key.sessionId());
        try (ResultSet row = query.executeQuery()) {
          if (!row.next()) {
            return Optional.empty();
          }
          id = row.getLong(1);
          user = Optional.ofNullable(row.getString(2));
          summary = row.getString(3);
          cut = row.getInt(4);
          int window = row.getInt(5);
          learned = row.wasNull() ? Optional.empty() : Optional.of(window);
        }
      }
      List<ChatMessage> messages = new ArrayList<>();
      for (String text : column(connection, "message", MESSAGES, id)) {
        messages.add(message(MAPPER.readTree(text)));
      }
      Map<String, String> digests = new LinkedHashMap<>();
      try (PreparedStatement query =
          connection.prepareStatement(
              "select tool_call_id, digest from " + DIGESTS + " where conversation_id = ?")) {
        query.setLong(1, id);
        try (ResultSet rows = query.executeQuery()) {
          while (rows.next()) {
            digests.put(rows.getString(1), rows.getString(2));
          }
        }
      }
      List<ObjectNode> compactions = new ArrayList<>();
      for (String text : column(connection, "compaction", COMPACTIONS, id)) {
        compactions.add((ObjectNode) MAPPER.readTree(text));
      }
      return Optional.of(
          new Stored(
              id,
              user,
              messages,
              new ContextState.Saved(summary, cut, digests, learned),
              compactions));
    }
  }

  private static List<String> column(Connection connection, String column, String table, long id)
      throws SQLException {
    try (PreparedStatement query =
        connection.prepareStatement(
            "select " + column + " from " + table + " where conversation_id = ? order by seq")) {
      query.setLong(1, id);
      List<String> values = new ArrayList<>();
      try (ResultSet rows = query.executeQuery()) {
        while (rows.next()) {
          values.add(rows.getString(1));
        }
      }
      return values;
    }
  }

  /**
   * Claims the conversation for one turn until the given instant, when it has the given number of
   * messages and no other turn runs it.
   */
  Claim claim(long id, int messages, Instant until) throws SQLException {
    Instant now = Instant.now();
    try (Connection connection = dataSource.getConnection()) {
      try (PreparedStatement update =
          connection.prepareStatement(
              "update "
                  + CONVERSATIONS
                  + " set running_until = ? where id = ? and messages = ? and (running_until is"
                  + " null or running_until < ?)")) {
        update.setTimestamp(1, Timestamp.from(until));
        update.setLong(2, id);
        update.setInt(3, messages);
        update.setTimestamp(4, Timestamp.from(now));
        if (update.executeUpdate() == 1) {
          return Claim.CLAIMED;
        }
      }
      try (PreparedStatement query =
          connection.prepareStatement(
              "select messages, running_until from " + CONVERSATIONS + " where id = ?")) {
        query.setLong(1, id);
        try (ResultSet row = query.executeQuery()) {
          if (!row.next()) {
            // Gone from the store (dropped by its operator): the caller's copy is all there is.
            return Claim.STALE;
          }
          Timestamp running = row.getTimestamp(2);
          if (running != null && running.toInstant().isAfter(now)) {
            return Claim.RUNNING;
          }
          return Claim.STALE;
        }
      }
    }
  }

  /** Releases a claim without appending (the turn did not run). */
  void release(long id) throws SQLException {
    try (Connection connection = dataSource.getConnection();
        PreparedStatement update =
            connection.prepareStatement(
                "update " + CONVERSATIONS + " set running_until = null where id = ?")) {
      update.setLong(1, id);
      update.executeUpdate();
    }
  }

  /**
   * Appends a turn and releases the conversation's claim, in one transaction.
   *
   * @return false, with nothing written, when the conversation no longer has {@code from} messages
   *     (another host appended meanwhile, after its claim lapsed)
   */
  boolean append(long id, Appended turn) throws SQLException {
    try (Connection connection = dataSource.getConnection()) {
      connection.setAutoCommit(false);
      try {
        boolean moved;
        try (PreparedStatement update =
            connection.prepareStatement(
                "update "
                    + CONVERSATIONS
                    + " set messages = ?, summary = ?, summary_cut = ?, learned_window = ?,"
                    + " running_until = null, updated = ? where id = ? and messages = ?")) {
          update.setInt(1, turn.from() + turn.messages().size());
          update.setString(2, turn.context().summary());
          update.setInt(3, turn.context().cut());
          if (turn.context().learnedWindow().isPresent()) {
            update.setInt(4, turn.context().learnedWindow().get());
          } else {
            update.setNull(4, Types.INTEGER);
          }
          update.setTimestamp(5, Timestamp.from(Instant.now()));
          update.setLong(6, id);
          update.setInt(7, turn.from());
          moved = update.executeUpdate() == 1;
        }
        if (!moved) {
          connection.rollback();
          return false;
        }
        insertAll(
            connection,
            "insert into " + MESSAGES + " (conversation_id, seq, message) values (?, ?, ?)",
            id,
            turn.from(),
            turn.messages().stream().map(message -> message.toWire().toString()).toList());
        insertAll(
            connection,
            "insert into " + COMPACTIONS + " (conversation_id, seq, compaction) values (?, ?, ?)",
            id,
            turn.compactionsFrom(),
            turn.compactions().stream().map(ObjectNode::toString).toList());
        if (!turn.digests().isEmpty()) {
          try (PreparedStatement insert =
              connection.prepareStatement(
                  "insert into "
                      + DIGESTS
                      + " (conversation_id, tool_call_id, digest) values (?, ?, ?)")) {
            for (Map.Entry<String, String> digest : turn.digests().entrySet()) {
              insert.setLong(1, id);
              insert.setString(2, digest.getKey());
              insert.setString(3, digest.getValue());
              insert.addBatch();
            }
            insert.executeBatch();
          }
        }
        connection.commit();
        return true;
      } catch (SQLException | RuntimeException e) {
        connection.rollback();
        throw e;
      }
    }
  }

  private static void insertAll(
      Connection connection, String sql, long id, int from, List<String> values)
      throws SQLException {
    if (values.isEmpty()) {
      return;
    }
    try (PreparedStatement insert = connection.prepareStatement(sql)) {
      for (int i = 0; i < values.size(); i++) {
        insert.setLong(1, id);
        insert.setInt(2, from + i);
        insert.setString(3, values.get(i));
        insert.addBatch();
      }
      insert.executeBatch();
    }
  }

  /**
   * The keys of the conversations in that session made as that user: where a scheduled task's
   * result goes when its conversation is not in memory.
   */
  List<Key> keys(String sessionId, Optional<String> user) throws SQLException {
    try (Connection connection = dataSource.getConnection();
        PreparedStatement query =
            connection.prepareStatement(
                "select principal, agent, session_id, owner_user from "
                    + CONVERSATIONS
                    + " where session_id = ?")) {
      query.setString(1, sessionId);
      List<Key> keys = new ArrayList<>();
      try (ResultSet rows = query.executeQuery()) {
        while (rows.next()) {
          if (Optional.ofNullable(rows.getString(4)).equals(user)) {
            keys.add(new Key(rows.getString(1), rows.getString(2), rows.getString(3)));
          }
        }
      }
      return keys;
    }
  }

  /** A message of the wire format, as {@link ChatMessage#toWire} wrote it. */
  static ChatMessage message(JsonNode wire) {
    String role = wire.path("role").asString("");
    return switch (role) {
      case "system" -> new ChatMessage.SystemMessage(wire.path("content").asString(""));
      case "user" -> new ChatMessage.UserMessage(wire.path("content").asString(""));
      case "tool" ->
          new ChatMessage.ToolMessage(
              wire.path("tool_call_id").asString(""), wire.path("content").asString(""));
      case "assistant" -> {
        JsonNode content = wire.path("content");
        List<ModelToolCall> calls = new ArrayList<>();
        for (JsonNode call : wire.path("tool_calls")) {
          calls.add(
              new ModelToolCall(
                  call.path("id").asString(""),
                  call.path("function").path("name").asString(""),
                  call.path("function").path("arguments").asString("")));
        }
        yield new ChatMessage.AssistantMessage(
            content.isString() ? Optional.of(content.asString()) : Optional.empty(), calls);
      }
      default -> throw new IllegalStateException("A stored message has no known role: " + role);
    };
  }

  /** Closes the embedded database (and its file); a shared one has nothing to close. */
  @Override
  public void close() {
    keeper.ifPresent(
        connection -> {
          try {
            connection.close();
          } catch (SQLException e) {
            // Closing: nothing left to do with it.
          }
        });
  }
}
