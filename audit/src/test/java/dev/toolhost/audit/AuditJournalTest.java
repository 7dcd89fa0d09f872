package dev.toolhost.audit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.toolhost.core.MethodTools;
import dev.toolhost.core.Param;
import dev.toolhost.core.Tool;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.spi.ConfigException;
import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.testing.TestHost;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The audit journal on a host: one entry per answered call, refused ones included, with a keyed
 * digest in place of the arguments; files rotated past their size and the oldest dropped; one host
 * per directory; a PostgreSQL journal shared by hosts with one key.
 */
class AuditJournalTest {

  private static final String POSTGRES = "jdbc:postgresql://127.0.0.1:5432/test";

  @TempDir Path directory;

  /** Tools to call. */
  public static final class Echo {
    @Tool(description = "Answers the text it is given.")
    public String echo(@Param(description = "The text to answer.") String text) {
      return text;
    }
  }

  private TestHost host(String section) {
    TestHost host =
        TestHost.builder()
            .config("audit:\n" + section.indent(2))
            .directory(directory)
            .extensions(List.<HostExtension<?>>of(new AuditExtension()))
            .start();
    host.runtime().registry().registerAll(MethodTools.of(new Echo(), "builtin:test"));
    return host;
  }

  private static ToolCall echo(String text) {
    return ToolCall.of("echo", "{\"text\": \"" + text + "\"}")
        .withUser("alice")
        .withPrincipal("alice-key")
        .withSessionId("s-1");
  }

  @Test
  void everyAnsweredCallIsOneEntryRefusedOnesIncludedAndNoneHoldsItsArguments() throws Exception {
    try (TestHost host = host("state_dir: journal")) {
      host.call("main", echo("persimmon-5521"));
      host.call("main", ToolCall.of("echo", "{\"text\": 7}").withPrincipal("alice-key"));
      host.call("main", ToolCall.of("nope", "{}"));

      Path file = directory.resolve("journal/audit.jsonl");
      await().atMost(Duration.ofSeconds(30)).until(() -> lines(file).size() == 3);
      List<AuditEntry> entries =
          FileJournal.read(directory.resolve("journal"), AuditQuery.latest(10));

      assertThat(Files.readString(file)).doesNotContain("persimmon");
      assertThat(entries)
          .extracting(AuditEntry::outcome)
          .containsExactly("ok", "invalid_arguments", "tool_not_found");
      AuditEntry first = entries.getFirst();
      assertThat(first.principal()).contains("alice-key");
      assertThat(first.user()).contains("alice");
      assertThat(first.session()).contains("s-1");
      assertThat(first.profile()).isEqualTo("main");
      assertThat(first.source()).contains("builtin:test");
      assertThat(first.argumentsDigest()).matches("hmac-sha256:[0-9a-f]{64}");
      assertThat(entries.get(2).source()).isEmpty();
      assertThat(Files.getPosixFilePermissions(file))
          .containsExactlyInAnyOrder(
              java.nio.file.attribute.PosixFilePermission.OWNER_READ,
              java.nio.file.attribute.PosixFilePermission.OWNER_WRITE);
    }
  }

  @Test
  void theDigestIsKeyedSoTheSameArgumentsOnAnotherJournalDigestOtherwise() throws Exception {
    List<String> digests = new ArrayList<>();
    for (String name : List.of("one", "two")) {
      try (TestHost host = host("state_dir: " + name)) {
        host.call("main", echo("fig"));
        host.call("main", echo("fig"));
      }
      List<AuditEntry> entries = FileJournal.read(directory.resolve(name), AuditQuery.latest(10));
      assertThat(entries).hasSize(2);
      assertThat(entries.get(0).argumentsDigest()).isEqualTo(entries.get(1).argumentsDigest());
      digests.add(entries.get(0).argumentsDigest());
    }
    assertThat(digests.get(0)).isNotEqualTo(digests.get(1));
  }

  @Test
  void aFilePastItsSizeIsRotatedAndTheOldestRotatedOnesAreDropped() throws Exception {
    try (FileJournal journal = FileJournal.open(directory, 4_096, 2)) {
      for (int i = 0; i < 100; i++) {
        journal.append(List.of(entry("call-" + i)));
      }
      List<Path> files;
      try (Stream<Path> listed = Files.list(directory)) {
        files = listed.filter(path -> path.toString().endsWith(".jsonl")).toList();
      }
      List<AuditEntry> latest = journal.query(AuditQuery.latest(10));

      // The current file and two rotated ones; the 100th call is the last entry.
      assertThat(files).hasSize(3);
      assertThat(latest).hasSize(10);
      assertThat(latest.getLast().callId()).isEqualTo("call-99");
      assertThat(latest.getFirst().callId()).isEqualTo("call-90");
    }
  }

  @Test
  void rotationsWithinOneMillisecondEachKeepTheirOwnFileInOrder() throws Exception {
    // A file of one byte rotates on every append: fifty appends take a few milliseconds at most.
    try (FileJournal journal = FileJournal.open(directory, 1, 100)) {
      for (int i = 0; i < 50; i++) {
        journal.append(List.of(entry("call-" + i)));
      }
      List<AuditEntry> latest = journal.query(AuditQuery.latest(100));

      assertThat(latest).extracting(AuditEntry::callId).hasSize(50).startsWith("call-0");
      assertThat(latest.getLast().callId()).isEqualTo("call-49");
    }
  }

  @Test
  void aClockSetBackStillRotatesToANameThatSortsAfterTheRotatedOnes() throws Exception {
    try (FileJournal journal = FileJournal.open(directory, 1, 100)) {
      journal.append(List.of(entry("before")));
    }
    Path rotated;
    try (Stream<Path> listed = Files.list(directory)) {
      rotated =
          listed
              .filter(path -> path.getFileName().toString().startsWith("audit-"))
              .findFirst()
              .orElseThrow();
    }
    // The earlier host's clock ran a year ahead of this one's.
    Files.move(rotated, directory.resolve("audit-20991231T235959999Z.jsonl"));

    try (FileJournal journal = FileJournal.open(directory, 1, 100)) {
      journal.append(List.of(entry("after")));

      assertThat(journal.query(AuditQuery.latest(10)))
          .extracting(AuditEntry::callId)
          .containsExactly("before", "after");
    }
  }

  @Test
  void aSecondHostOnTheSameDirectoryFailsToStartNamingIt() {
    try (TestHost first = host("state_dir: journal")) {
      assertThatThrownBy(() -> host("state_dir: journal"))
          .isInstanceOf(ConfigException.class)
          .hasMessageContaining("another host writes the audit journal in")
          .hasMessageContaining("journal");
    }
  }

  @Test
  void aLineThatDoesNotParseIsSkippedAndTheRestRead() throws Exception {
    try (FileJournal journal = FileJournal.open(directory, 1 << 20, 2)) {
      journal.append(List.of(entry("before")));
      Files.writeString(
          directory.resolve("audit.jsonl"),
          "{\"at\": \"cut short\n",
          java.nio.file.StandardOpenOption.APPEND);
      journal.append(List.of(entry("after")));

      assertThat(journal.query(AuditQuery.latest(10)))
          .extracting(AuditEntry::callId)
          .containsExactly("before", "after");
    }
  }

  @Test
  void hostsSharingAPostgresJournalShareItsKeyAndItsQueriesFilter() throws Exception {
    String marker = "user-" + UUID.randomUUID();
    try (TestHost one = host("store: " + POSTGRES + "\nuser: postgres");
        TestHost two = host("store: " + POSTGRES + "\nuser: postgres")) {
      one.call("main", echo("quince").withUser(marker));
      two.call("main", echo("quince").withUser(marker));
      two.call("main", ToolCall.of("nope", "{}").withUser(marker));
    }
    // Closed: every entry written.
    try (Journal journal =
        PostgresJournal.open(POSTGRES, Optional.of("postgres"), Optional.empty())) {
      List<AuditEntry> entries =
          journal.query(
              new AuditQuery(
                  Optional.of(marker),
                  Optional.empty(),
                  Optional.empty(),
                  Optional.of(Instant.now().minusSeconds(600)),
                  10));
      List<AuditEntry> echoes =
          journal.query(
              new AuditQuery(
                  Optional.of(marker),
                  Optional.empty(),
                  Optional.of("echo"),
                  Optional.empty(),
                  10));

      assertThat(entries)
          .extracting(AuditEntry::outcome)
          .containsExactly("ok", "ok", "tool_not_found");
      assertThat(echoes).hasSize(2);
      assertThat(echoes.get(0).argumentsDigest()).isEqualTo(echoes.get(1).argumentsDigest());
    }
    try (Connection connection = DriverManager.getConnection(POSTGRES, "postgres", null);
        Statement statement = connection.createStatement();
        ResultSet rows =
            statement.executeQuery(
                "SELECT count(*) FROM toolhost_audit WHERE user_name = '" + marker + "'")) {
      rows.next();
      assertThat(rows.getInt(1)).isEqualTo(3);
    }
  }

  @Test
  void aSharedPostgresJournalAnswersByTheCallsTimeNotByWhichHostWroteFirst() throws Exception {
    String marker = "user-" + UUID.randomUUID();
    Instant now = Instant.now();
    try (Journal journal =
        PostgresJournal.open(POSTGRES, Optional.of("postgres"), Optional.empty())) {
      // One host's writer woke first with the later call; the other's came after with the earlier.
      journal.append(List.of(entry("later", now, marker)));
      journal.append(List.of(entry("earlier", now.minusMillis(5), marker)));

      assertThat(
              journal.query(
                  new AuditQuery(
                      Optional.of(marker),
                      Optional.empty(),
                      Optional.empty(),
                      Optional.empty(),
                      10)))
          .extracting(AuditEntry::callId)
          .containsExactly("earlier", "later");
    }
  }

  private static AuditEntry entry(String callId) {
    return entry(callId, Instant.now(), "alice");
  }

  private static AuditEntry entry(String callId, Instant at, String user) {
    return new AuditEntry(
        at,
        callId,
        Optional.of("alice-key"),
        Optional.of(user),
        "main",
        Optional.empty(),
        Optional.empty(),
        "echo",
        Optional.of("builtin:test"),
        "ok",
        1_250,
        "hmac-sha256:" + "0".repeat(64));
  }

  private static List<String> lines(Path file) throws Exception {
    return Files.exists(file) ? Files.readAllLines(file) : List.of();
  }
}
