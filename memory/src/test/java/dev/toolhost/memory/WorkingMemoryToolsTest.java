package dev.toolhost.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.ToolSpec;
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
  void aKeyWithASlashIsAbsoluteAndAnyOtherIsInTheSession() {
    assertThat(WorkingMemoryTools.resolve("notes", Optional.of("abc")))
        .isEqualTo("session/abc/notes");
    assertThat(WorkingMemoryTools.resolve("session/xyz/tool-x-1-chunk0", Optional.of("abc")))
        .isEqualTo("session/xyz/tool-x-1-chunk0");
    assertThat(WorkingMemoryTools.resolve("patrol/alert", Optional.empty()))
        .isEqualTo("patrol/alert");
    assertThatThrownBy(() -> WorkingMemoryTools.resolve("notes", Optional.empty()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("relative");
  }

  @Test
  void theGuideShipsWithTheTools() {
    assertThat(WorkingMemoryTools.GUIDE.name()).isEqualTo("working-memory");
    assertThat(WorkingMemoryTools.GUIDE.document())
        .contains("get_from_working_memory", "BEFORE drawing conclusions", "(continued 1)");
  }
}
