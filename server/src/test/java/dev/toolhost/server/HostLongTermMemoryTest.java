package dev.toolhost.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSpec;
import dev.toolhost.core.spi.ConfigException;
import dev.toolhost.host.HostConfig;
import dev.toolhost.longterm.LongTermMemory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code long_term_memory:} section through a real host: no section, no tools; an empty section
 * runs Lucene under the config file's directory with the bundled model; each built-in profile gets
 * the tools its role needs and none may delete, while a user profile can grant delete; memories
 * outlive the host on both stores and stay with their user.
 */
class HostLongTermMemoryTest {

  @TempDir Path directory;

  private static ToolResult call(Host host, String profile, String user, String tool, String json) {
    return host.dispatcher()
        .dispatch(host.toolSet(profile), ToolCall.of(tool, json).withUser(user));
  }

  private static java.util.List<String> tools(Host host, String profile) {
    return host.toolSet(profile).specs().stream()
        .filter(spec -> spec.source().equals("builtin:long_term_memory"))
        .map(ToolSpec::name)
        .sorted()
        .toList();
  }

  private Host host(String yaml) throws Exception {
    Path file = directory.resolve("toolhost.yaml");
    Files.writeString(file, yaml);
    return Host.builder(HostConfig.load(file)).environment(Map.of()).build();
  }

  @Test
  void aHostWithoutTheSectionHasNoMemoryToolAndNoStore() throws Exception {
    try (Host host = host("http: {port: 0}\n")) {
      assertThat(host.registry().specs())
          .extracting(ToolSpec::source)
          .doesNotContain("builtin:long_term_memory");
      assertThat(host.service(LongTermMemory.class)).isEmpty();
    }
  }

  @Test
  void anEmptySectionRunsLuceneBesideTheConfigWithTheBundledModelAndSurvivesARestart()
      throws Exception {
    String yaml = "long_term_memory: {}\n";
    try (Host host = host(yaml)) {
      assertThat(host.service(LongTermMemory.class).orElseThrow().model())
          .isEqualTo("all-minilm-l6-v2-q/384");
      assertThat(
              call(host, "main", "alice", "get_tool_guide", "{\"name\": \"long-term-memory\"}")
                  .text())
          .contains("When to save")
          .contains("updates");
      assertThat(
              call(
                      host,
                      "main",
                      "alice",
                      "memory_save",
                      "{\"content\": \"The user prefers dark mode in every editor.\","
                          + " \"memory_type\": \"preference\"}")
                  .isError())
          .isFalse();
    }
    assertThat(directory.resolve("state/long-term-memory")).isDirectory();

    try (Host host = host(yaml)) {
      assertThat(
              call(
                      host,
                      "main",
                      "alice",
                      "memory_recall",
                      "{\"query\": \"Which colour scheme does she like on screens?\"}")
                  .text())
          .contains("The user prefers dark mode in every editor.");
      assertThat(call(host, "main", "bob", "memory_recall", "{\"query\": \"dark mode\"}").text())
          .doesNotContain("dark mode in every editor");
    }
  }

  @Test
  void builtInProfilesSaveAndRecallAsTheirRoleNeedsAndOnlyAGrantingProfileDeletes()
      throws Exception {
    String yaml =
        """
        long_term_memory: {}
        profiles:
          curator:
            allow_sources: [builtin:long_term_memory]
          main_plus:
            extends: main
            allow_tools: [memory_delete]
        """;
    try (Host host = host(yaml)) {
      assertThat(tools(host, "main")).containsExactly("memory_recall", "memory_save");
      assertThat(tools(host, "subagent")).containsExactly("memory_recall", "memory_save");
      assertThat(tools(host, "scheduled")).containsExactly("memory_recall", "memory_save");
      assertThat(tools(host, "a2a_synthesis")).containsExactly("memory_recall");
      assertThat(tools(host, "curator"))
          .containsExactly("memory_delete", "memory_recall", "memory_save");
      // A deny always wins: a profile extending main cannot take back what main denies.
      assertThat(tools(host, "main_plus")).containsExactly("memory_recall", "memory_save");

      String saved =
          call(host, "main", "alice", "memory_save", "{\"content\": \"Locker code 4711.\"}").text();
      String id = saved.replaceAll(".*\"id\":\"([^\"]+)\".*", "$1");
      assertThat(call(host, "main", "alice", "memory_delete", "{\"id\": \"" + id + "\"}").text())
          .contains("memory_delete");
      assertThat(call(host, "curator", "alice", "memory_delete", "{\"id\": \"" + id + "\"}").text())
          .isEqualTo("{\"deleted\":\"" + id + "\"}");
    }
  }

  @Test
  void thePostgresStoreKeepsMemoriesAcrossARestart() throws Exception {
    String table = "toolhost_memory_host_test";
    drop(table);
    String yaml =
        "long_term_memory:\n"
            + "  store: postgres\n"
            + "  postgres:\n"
            + "    url: jdbc:postgresql://127.0.0.1:5432/test\n"
            + "    user: postgres\n"
            + "    table_prefix: "
            + table
            + "\n";
    try {
      try (Host host = host(yaml)) {
        call(
            host,
            "main",
            "alice",
            "memory_save",
            "{\"content\": \"Invoice INV-2291 was paid late.\", \"memory_type\": \"event\"}");
      }
      try (Host host = host(yaml)) {
        assertThat(call(host, "main", "alice", "memory_recall", "{\"query\": \"INV-2291\"}").text())
            .contains("Invoice INV-2291 was paid late.");
      }
    } finally {
      drop(table);
    }
  }

  @Test
  void aDatabaseThatCannotBeReachedFailsTheStartNamingIt() {
    assertThatThrownBy(
            () ->
                host(
                    "long_term_memory:\n"
                        + "  store: postgres\n"
                        + "  postgres: {url: 'jdbc:postgresql://127.0.0.1:1/test', user: postgres}\n"))
        .hasStackTraceContaining(
            "long-term memory's database failed (jdbc:postgresql://127.0.0.1:1/test)");
  }

  @Test
  void aWrongSectionIsRefusedWithItsPlace() {
    assertThatThrownBy(() -> host("long_term_memory:\n  store: redis\n"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("toolhost.yaml line 2")
        .hasMessageContaining("'long_term_memory.store' is 'redis' (expected lucene or postgres)");
  }

  private static void drop(String table) throws Exception {
    try (Connection connection =
            DriverManager.getConnection("jdbc:postgresql://127.0.0.1:5432/test", "postgres", "");
        Statement statement = connection.createStatement()) {
      statement.execute("DROP TABLE IF EXISTS " + table);
      statement.execute("DROP TABLE IF EXISTS " + table + "_meta");
      statement.execute("DROP TABLE IF EXISTS " + table + "_skill");
    }
  }
}
