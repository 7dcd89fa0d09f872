package dev.toolhost.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSpec;
import dev.toolhost.host.HostConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Skills through a real host: a skill saved in one session is listed and read in another after the
 * host restarts, on both stores, and appears in {@code list_tool_guides}; the built-in profiles
 * save and read skills, none deletes, and {@code a2a_synthesis} cannot save.
 */
class HostSkillsTest {

  @TempDir Path directory;

  private Host host(String yaml) throws Exception {
    Path file = directory.resolve("toolhost.yaml");
    Files.writeString(file, yaml);
    return Host.builder(HostConfig.load(file)).environment(Map.of()).build();
  }

  private static ToolResult call(Host host, String session, String user, String tool, String json) {
    return host.dispatcher()
        .dispatch(
            host.toolSet("main"), ToolCall.of(tool, json).withUser(user).withSessionId(session));
  }

  private static List<String> skillTools(Host host, String profile) {
    return host.toolSet(profile).specs().stream()
        .filter(spec -> spec.source().equals("builtin:skills"))
        .map(ToolSpec::name)
        .sorted()
        .toList();
  }

  private static final String SAVE =
      "{\"name\": \"release-notes\", \"description\": \"Writes release notes from the merged"
          + " PRs.\", \"content\": \"1. list merged PRs\\n2. group by label\\n3. write\"}";

  private void savedInOneSessionIsReadInAnotherAfterARestart(String yaml) throws Exception {
    try (Host host = host(yaml)) {
      ToolResult saved = call(host, "session-1", "alice", "save_skill", SAVE);
      assertThat(saved.isError()).as(saved.text()).isFalse();
    }
    try (Host host = host(yaml)) {
      assertThat(call(host, "session-2", "alice", "list_skills", "{}").text())
          .contains("\"name\":\"release-notes\"");
      assertThat(
              call(host, "session-2", "alice", "get_skill", "{\"name\": \"release-notes\"}").text())
          .isEqualTo("1. list merged PRs\n2. group by label\n3. write");
      assertThat(call(host, "session-2", "alice", "list_tool_guides", "{}").text())
          .contains("- tool-calls: ")
          .contains("- release-notes (saved): Writes release notes from the merged PRs.");
      assertThat(
              call(host, "session-2", "alice", "get_tool_guide", "{\"name\": \"release-notes\"}")
                  .text())
          .startsWith("1. list merged PRs");
      assertThat(call(host, "session-3", "bob", "list_tool_guides", "{}").text())
          .doesNotContain("release-notes");
    }
  }

  @Test
  void aSkillSavedInOneSessionIsReadInAnotherAfterARestartOnLucene() throws Exception {
    savedInOneSessionIsReadInAnotherAfterARestart("long_term_memory: {}\n");
  }

  @Test
  void aSkillSavedInOneSessionIsReadInAnotherAfterARestartOnPostgres() throws Exception {
    String table = "toolhost_memory_skills_test";
    drop(table);
    try {
      savedInOneSessionIsReadInAnotherAfterARestart(
          "long_term_memory:\n"
              + "  store: postgres\n"
              + "  postgres:\n"
              + "    url: jdbc:postgresql://127.0.0.1:5432/test\n"
              + "    user: postgres\n"
              + "    table_prefix: "
              + table
              + "\n");
    } finally {
      drop(table);
    }
  }

  @Test
  void builtInProfilesSaveAndReadSkillsNoneDeletesAndAGrantingProfileDoes() throws Exception {
    String yaml =
        """
        long_term_memory:
          skills: {scope: shared}
        profiles:
          librarian:
            allow_sources: [builtin:skills]
        """;
    try (Host host = host(yaml)) {
      List<String> readAndSave = List.of("get_skill", "list_skills", "save_skill");
      assertThat(skillTools(host, "main")).isEqualTo(readAndSave);
      assertThat(skillTools(host, "subagent")).isEqualTo(readAndSave);
      assertThat(skillTools(host, "scheduled")).isEqualTo(readAndSave);
      assertThat(skillTools(host, "a2a_synthesis")).containsExactly("get_skill", "list_skills");
      assertThat(skillTools(host, "librarian"))
          .containsExactly("delete_skill", "get_skill", "list_skills", "save_skill");

      call(host, "s1", "alice", "save_skill", SAVE);
      // Shared: bob reads alice's skill.
      assertThat(call(host, "s2", "bob", "get_skill", "{\"name\": \"release-notes\"}").isError())
          .isFalse();
      ToolResult deleted =
          host.dispatcher()
              .dispatch(
                  host.toolSet("librarian"),
                  ToolCall.of("delete_skill", "{\"name\": \"release-notes\"}").withUser("bob"));
      assertThat(deleted.text()).isEqualTo("{\"deleted\":\"release-notes\"}");
    }
  }

  private static void drop(String table) throws Exception {
    try (Connection connection =
            DriverManager.getConnection("jdbc:postgresql://127.0.0.1:5432/test", "postgres", "");
        Statement statement = connection.createStatement()) {
      for (String suffix : List.of("", "_meta", "_skill")) {
        statement.execute("DROP TABLE IF EXISTS " + table + suffix);
      }
    }
  }
}
