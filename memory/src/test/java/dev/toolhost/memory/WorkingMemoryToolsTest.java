package dev.toolhost.memory;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import dev.toolhost.core.ToolSpec;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class WorkingMemoryToolsTest {

  @Test
  void theThreeToolsAreBuiltinMemoryAndReadOnly() {
    try (WorkingMemory memory = new InProcessWorkingMemory()) {
      assertThat(new WorkingMemoryTools(memory).tools())
          .extracting(ExecutableTool::spec)
          .allSatisfy(
              spec -> {
                assertThat(spec.source()).isEqualTo("builtin:memory");
                assertThat(spec.annotations().readOnly()).isTrue();
              })
          .extracting(ToolSpec::name)
          .containsExactly(
              "get_from_working_memory", "list_working_memory", "search_working_memory");
    }
  }

  @Test
  void aKeyWithASlashIsFullAndAnyOtherIsInTheSession() {
    assertThat(WorkingMemoryTools.resolve("notes", Optional.of("abc")))
        .contains("session/abc/notes");
    assertThat(WorkingMemoryTools.resolve("session/abc/tool-x-1-chunk0", Optional.of("abc")))
        .contains("session/abc/tool-x-1-chunk0");
  }

  @Test
  void aKeyOutsideTheCallersSessionDoesNotExistForIt() {
    assertThat(WorkingMemoryTools.resolve("session/xyz/tool-x-1-chunk0", Optional.of("abc")))
        .isEmpty();
    assertThat(WorkingMemoryTools.resolve("session/abcd/tool-x-1-chunk0", Optional.of("abc")))
        .isEmpty();
    assertThat(WorkingMemoryTools.resolve("patrol/alert", Optional.of("abc"))).isEmpty();
  }

  @Test
  void anotherSessionsChunkAnswersExactlyAsAMissingKey() {
    try (WorkingMemory memory = new InProcessWorkingMemory()) {
      memory.put(
          "session/victim/tool-x-1-chunk0",
          "the victim's secret",
          Duration.ofMinutes(5),
          "tool-result");
      ToolSet tools = toolsOver(memory);
      ToolDispatcher dispatcher = ToolDispatcher.create();

      ToolResult stolen =
          read(dispatcher, tools, "session/victim/tool-x-1-chunk0", Optional.of("attacker"));
      ToolResult missing =
          read(dispatcher, tools, "session/victim/tool-x-9-chunk0", Optional.of("attacker"));
      ToolResult sessionless =
          read(dispatcher, tools, "session/victim/tool-x-1-chunk0", Optional.empty());
      ToolResult own =
          read(dispatcher, tools, "session/victim/tool-x-1-chunk0", Optional.of("victim"));

      assertThat(stolen.isError()).isTrue();
      assertThat(stolen.text())
          .doesNotContain("the victim's secret")
          .isEqualTo(missing.text().replace("tool-x-9", "tool-x-1"));
      assertThat(sessionless.isError()).isTrue();
      assertThat(sessionless.text()).doesNotContain("the victim's secret").contains("no session");
      assertThat(own.text()).isEqualTo("the victim's secret");
    }
  }

  /** The three tools over the memory, as the main profile sees them. */
  private static ToolSet toolsOver(WorkingMemory memory) {
    ToolRegistry registry = new ToolRegistry();
    registry.registerAll(new WorkingMemoryTools(memory).tools());
    return ToolSet.of(registry, ToolProfiles.MAIN);
  }

  private static ToolResult read(
      ToolDispatcher dispatcher, ToolSet tools, String key, Optional<String> session) {
    ToolCall call = ToolCall.of("get_from_working_memory", "{\"key\": \"" + key + "\"}");
    return dispatcher.dispatch(tools, session.map(call::withSessionId).orElse(call));
  }

  @Test
  void aSessionNeverReachesTheEntriesOfASessionWhoseIdItsOwnStarts() {
    try (WorkingMemory memory = new InProcessWorkingMemory()) {
      memory.put(
          WorkingMemory.sessionNamespace("ten/ant") + "/tool-x-1-chunk0",
          "the ant's secret",
          Duration.ofMinutes(5),
          "tool-result");
      ToolSet tools = toolsOver(memory);
      ToolDispatcher dispatcher = ToolDispatcher.create();

      ToolResult listed =
          dispatcher.dispatch(tools, ToolCall.of("list_working_memory", "{}").withSessionId("ten"));
      ToolResult searched =
          dispatcher.dispatch(
              tools,
              ToolCall.of("search_working_memory", "{\"query\": \"secret\"}").withSessionId("ten"));
      ToolResult read =
          read(dispatcher, tools, "session/ten/ant/tool-x-1-chunk0", Optional.of("ten"));
      ToolResult own =
          read(
              dispatcher,
              tools,
              WorkingMemory.sessionNamespace("ten/ant") + "/tool-x-1-chunk0",
              Optional.of("ten/ant"));

      assertThat(WorkingMemory.sessionNamespace("ten/ant")).isEqualTo("session/ten%2Fant");
      assertThat(listed.text()).doesNotContain("ant");
      assertThat(searched.text()).doesNotContain("the ant's secret");
      assertThat(read.isError()).isTrue();
      assertThat(read.text()).doesNotContain("the ant's secret");
      assertThat(own.text()).isEqualTo("the ant's secret");
    }
  }

  @Test
  void theGuideShipsWithTheTools() {
    assertThat(WorkingMemoryTools.GUIDE.name()).isEqualTo("working-memory");
    assertThat(WorkingMemoryTools.GUIDE.document())
        .contains("get_from_working_memory", "BEFORE drawing conclusions", "(continued 1)");
  }
}
