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
      ToolRegistry registry = new ToolRegistry();
      registry.registerAll(new WorkingMemoryTools(memory).tools());
      ToolSet tools = ToolSet.of(registry, ToolProfiles.MAIN);
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

  private static ToolResult read(
      ToolDispatcher dispatcher, ToolSet tools, String key, Optional<String> session) {
    ToolCall call = ToolCall.of("get_from_working_memory", "{\"key\": \"" + key + "\"}");
    return dispatcher.dispatch(tools, session.map(call::withSessionId).orElse(call));
  }

  @Test
  void theGuideShipsWithTheTools() {
    assertThat(WorkingMemoryTools.GUIDE.name()).isEqualTo("working-memory");
    assertThat(WorkingMemoryTools.GUIDE.document())
        .contains("get_from_working_memory", "BEFORE drawing conclusions", "(continued 1)");
  }
}
