package dev.toolhost.longterm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSpec;
import dev.toolhost.core.spi.ConfigException;
import dev.toolhost.testing.TestHost;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code long_term_memory:} section through a host of the long-term memory extension: no
 * section, no tools; an empty section runs Lucene under the config file's directory with the
 * bundled model; each built-in profile gets the memory and skill tools its role needs and none may
 * delete, while a user profile can grant delete; memories and skills outlive the host on both
 * stores and stay with their user, and a saved skill is listed among the tool guides.
 */
class HostLongTermMemoryTest {

  private static final String SAVE_SKILL =
      "{\"name\": \"release-notes\", \"description\": \"Writes release notes from the merged"
          + " PRs.\", \"content\": \"1. list merged PRs\\n2. group by label\\n3. write\"}";

  @TempDir Path directory;

  /** A host of the class path's extensions, its config file in the test's directory. */
  private TestHost host(String yaml) {
    return TestHost.builder().config(yaml).directory(directory).start();
  }

  private static ToolResult call(
      TestHost host, String profile, String user, String tool, String json) {
    return call(host, profile, ToolCall.of(tool, json).withUser(user));
  }

  private static ToolResult call(TestHost host, String profile, ToolCall call) {
    return host.runtime().dispatcher().dispatch(host.runtime().toolSet(profile), call);
  }

  /** The names of the tools of that source the profile offers, sorted. */
  private static List<String> tools(TestHost host, String profile, String source) {
    return host.runtime().toolSet(profile).specs().stream()
        .filter(spec -> spec.source().equals(source))
        .map(ToolSpec::name)
        .sorted()
        .toList();
  }

  /** A section of the PostgreSQL store on this machine, in tables of that prefix. */
  private static String postgres(String table) {
    return "long_term_memory:\n"
        + "  store: postgres\n"
        + "  postgres:\n"
        + "    url: "
        + PostgresMemoryStoreTest.URL
        + "\n"
        + "    user: postgres\n"
        + "    table_prefix: "
        + table
        + "\n";
  }

  @Test
  void aHostWithoutTheSectionHasNoMemoryToolAndNoStore() {
    try (TestHost host = host("")) {
      assertThat(host.runtime().registry().specs())
          .extracting(ToolSpec::source)
          .doesNotContain("builtin:long_term_memory");
      assertThat(host.runtime().service(LongTermMemory.class)).isEmpty();
    }
  }

  @Test
  void anEmptySectionRunsLuceneBesideTheConfigWithTheBundledModelAndSurvivesARestart() {
    String yaml = "long_term_memory: {}\n";
    try (TestHost host = host(yaml)) {
      assertThat(host.runtime().service(LongTermMemory.class).orElseThrow().model())
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

    try (TestHost host = host(yaml)) {
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
  void builtInProfilesSaveAndRecallAsTheirRoleNeedsAndOnlyAGrantingProfileDeletes() {
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
    try (TestHost host = host(yaml)) {
      String source = "builtin:long_term_memory";
      assertThat(tools(host, "main", source)).containsExactly("memory_recall", "memory_save");
      assertThat(tools(host, "subagent", source)).containsExactly("memory_recall", "memory_save");
      assertThat(tools(host, "scheduled", source)).containsExactly("memory_recall", "memory_save");
      assertThat(tools(host, "a2a_synthesis", source)).containsExactly("memory_recall");
      assertThat(tools(host, "curator", source))
          .containsExactly("memory_delete", "memory_recall", "memory_save");
      // A deny always wins: a profile extending main cannot take back what main denies.
      assertThat(tools(host, "main_plus", source)).containsExactly("memory_recall", "memory_save");

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
  void thePostgresStoreKeepsMemoriesAcrossARestart() {
    String table = PostgresMemoryStoreTest.table("toolhost_memory_host_test");
    PostgresMemoryStoreTest.drop(table);
    try {
      try (TestHost host = host(postgres(table))) {
        call(
            host,
            "main",
            "alice",
            "memory_save",
            "{\"content\": \"Invoice INV-2291 was paid late.\", \"memory_type\": \"event\"}");
      }
      try (TestHost host = host(postgres(table))) {
        assertThat(call(host, "main", "alice", "memory_recall", "{\"query\": \"INV-2291\"}").text())
            .contains("Invoice INV-2291 was paid late.");
      }
    } finally {
      PostgresMemoryStoreTest.drop(table);
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

  private void aSkillSavedInOneSessionIsReadInAnotherAfterARestart(String yaml) {
    try (TestHost host = host(yaml)) {
      ToolResult saved = skill(host, "session-1", "alice", "save_skill", SAVE_SKILL);
      assertThat(saved.isError()).as(saved.text()).isFalse();
    }
    try (TestHost host = host(yaml)) {
      assertThat(skill(host, "session-2", "alice", "list_skills", "{}").text())
          .contains("\"name\":\"release-notes\"");
      assertThat(
              skill(host, "session-2", "alice", "get_skill", "{\"name\": \"release-notes\"}")
                  .text())
          .isEqualTo("1. list merged PRs\n2. group by label\n3. write");
      assertThat(skill(host, "session-2", "alice", "list_tool_guides", "{}").text())
          .contains("- tool-calls: ")
          .contains("- release-notes (saved): Writes release notes from the merged PRs.");
      assertThat(
              skill(host, "session-2", "alice", "get_tool_guide", "{\"name\": \"release-notes\"}")
                  .text())
          .startsWith("1. list merged PRs");
      assertThat(skill(host, "session-3", "bob", "list_tool_guides", "{}").text())
          .doesNotContain("release-notes");
    }
  }

  /** A call of a skill tool under the main profile, in a session of a user. */
  private static ToolResult skill(
      TestHost host, String session, String user, String tool, String json) {
    return call(host, "main", ToolCall.of(tool, json).withUser(user).withSessionId(session));
  }

  @Test
  void aSkillSavedInOneSessionIsReadInAnotherAfterARestartOnLucene() {
    aSkillSavedInOneSessionIsReadInAnotherAfterARestart("long_term_memory: {}\n");
  }

  @Test
  void aSkillSavedInOneSessionIsReadInAnotherAfterARestartOnPostgres() {
    String table = PostgresMemoryStoreTest.table("toolhost_memory_skills_test");
    PostgresMemoryStoreTest.drop(table);
    try {
      aSkillSavedInOneSessionIsReadInAnotherAfterARestart(postgres(table));
    } finally {
      PostgresMemoryStoreTest.drop(table);
    }
  }

  @Test
  void builtInProfilesSaveAndReadSkillsNoneDeletesAndAGrantingProfileDoes() {
    String yaml =
        """
        long_term_memory:
          skills: {scope: shared}
        profiles:
          librarian:
            allow_sources: [builtin:skills]
        """;
    try (TestHost host = host(yaml)) {
      String source = "builtin:skills";
      List<String> readAndSave = List.of("get_skill", "list_skills", "save_skill");
      assertThat(tools(host, "main", source)).isEqualTo(readAndSave);
      assertThat(tools(host, "subagent", source)).isEqualTo(readAndSave);
      assertThat(tools(host, "scheduled", source)).isEqualTo(readAndSave);
      assertThat(tools(host, "a2a_synthesis", source)).containsExactly("get_skill", "list_skills");
      assertThat(tools(host, "librarian", source))
          .containsExactly("delete_skill", "get_skill", "list_skills", "save_skill");

      skill(host, "s1", "alice", "save_skill", SAVE_SKILL);
      // Shared: bob reads alice's skill.
      assertThat(skill(host, "s2", "bob", "get_skill", "{\"name\": \"release-notes\"}").isError())
          .isFalse();
      ToolResult deleted =
          call(host, "librarian", "bob", "delete_skill", "{\"name\": \"release-notes\"}");
      assertThat(deleted.text()).isEqualTo("{\"deleted\":\"release-notes\"}");
    }
  }
}
