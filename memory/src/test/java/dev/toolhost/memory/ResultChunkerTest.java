package dev.toolhost.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.toolhost.core.DispatchStage;
import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import dev.toolhost.core.ToolSpec;
import java.net.URI;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

@Timeout(30)
class ResultChunkerTest {

  private final InProcessWorkingMemory memory = new InProcessWorkingMemory();
  private final ToolRegistry registry = new ToolRegistry();

  @AfterEach
  void close() {
    memory.close();
  }

  private void register(String name, String source, Supplier<ToolResult> result) {
    registry.register(
        new ToolSpec(
            name,
            "A test tool.",
            (ObjectNode) JsonMapper.shared().readTree("{\"type\": \"object\"}"),
            source),
        (c, a) -> result.get());
  }

  private ToolResult dispatch(ResultChunker.Config config, ToolCall call) {
    ToolDispatcher dispatcher =
        ToolDispatcher.builder()
            .interceptor(DispatchStage.RESULT_SHAPING, new ResultChunker(memory, config))
            .build();
    return dispatcher.dispatch(ToolSet.of(registry, ToolProfiles.MAIN), call);
  }

  private ToolResult dispatch(ToolCall call) {
    return dispatch(ResultChunker.Config.builder().build(), call);
  }

  @Test
  void aResultAtTheThresholdPassesThroughWhole() {
    String content = "x".repeat(64_000);
    register("exact", "builtin:test", () -> ToolResult.success(content));

    assertThat(dispatch(ToolCall.of("exact", "{}").withSessionId("s")).text()).isEqualTo(content);
    assertThat(memory.list("")).isEmpty();
  }

  @Test
  void eachModelHasItsOwnThresholdAndChunksAreAtLeastTwentyThousandLong() {
    String content = ("word ".repeat(20) + "\n\n").repeat(500); // 51,000 characters
    register("medium", "mcp:docs", () -> ToolResult.success(content));
    ResultChunker.Config config =
        ResultChunker.Config.builder().threshold("small-model", 8_000).build();

    ToolResult big = dispatch(config, ToolCall.of("medium", "{}").withSessionId("s"));
    ToolResult small =
        dispatch(config, ToolCall.of("medium", "{}").withSessionId("s").withModel("small-model"));

    assertThat(big.text()).isEqualTo(content);
    assertThat(small.text())
        .startsWith(
            "Tool result for 'medium' is large (51 000 chars) and has been split into 3 chunk(s)");
    assertThat(memory.list("session/s/"))
        .filteredOn(e -> e.key().contains("-chunk"))
        .allSatisfy(e -> assertThat(e.value().length()).isBetween(1, 20_000));
    assertThat(config.chunkLengthFor(Optional.of("small-model"))).isEqualTo(20_000);
    assertThat(config.chunkLengthFor(Optional.empty())).isEqualTo(64_000);
  }

  @Test
  void withoutASessionTheResultIsCutAtTheThreshold() {
    String content = "a".repeat(70_000);
    register("big", "builtin:test", () -> ToolResult.success(content));

    String text = dispatch(ToolCall.of("big", "{}")).text();

    assertThat(text).isEqualTo("a".repeat(64_000) + "\n[result truncated — 6 000 chars omitted]");
    assertThat(memory.list("")).isEmpty();
  }

  @Test
  void truncationNeverSplitsASurrogatePair() {
    assertThat(ResultChunker.truncate("ab😀cd", 3))
        .isEqualTo("ab\n[result truncated — 4 chars omitted]");
  }

  @Test
  void failuresAndWorkingMemoryResultsPassThroughUntouched() {
    String huge = "z".repeat(100_000);
    register("broken", "builtin:test", () -> ToolResult.failure(ErrorCode.EXECUTION_FAILED, huge));
    register("memory_dump", WorkingMemoryTools.SOURCE, () -> ToolResult.success(huge));

    ToolResult failure = dispatch(ToolCall.of("broken", "{}").withSessionId("s"));
    ToolResult memoryResult = dispatch(ToolCall.of("memory_dump", "{}").withSessionId("s"));

    assertThat(failure.text()).isEqualTo(huge);
    assertThat(memoryResult.text()).isEqualTo(huge);
    assertThat(memory.list("")).isEmpty();
  }

  @Test
  void aStoreThatFailsFallsBackToTruncation() {
    String content = "b".repeat(70_000);
    register("big", "builtin:test", () -> ToolResult.success(content));
    // A real Redis client, pointed at a port where nothing listens.
    try (RedisWorkingMemory unreachable =
        RedisWorkingMemory.connect(URI.create("redis://127.0.0.1:1"))) {
      ToolDispatcher dispatcher =
          ToolDispatcher.builder()
              .interceptor(DispatchStage.RESULT_SHAPING, new ResultChunker(unreachable))
              .build();

      ToolResult result =
          dispatcher.dispatch(
              ToolSet.of(registry, ToolProfiles.MAIN), ToolCall.of("big", "{}").withSessionId("s"));

      assertThat(result.text()).endsWith("b\n[result truncated — 6 000 chars omitted]");
    }
  }

  @Test
  void theIndexTableIsLaidOutAsTheSeedShowsIt() {
    List<ContentChunker.Chunk> chunks =
        List.of(
            new ContentChunker.Chunk("", 0, "x"),
            new ContentChunker.Chunk("Pricing | tiers", 2, "x"));
    List<String> keys =
        List.of(
            "session/abc123/tool-list_models-a1b2c3d4-chunk0",
            "session/abc123/tool-list_models-a1b2c3d4-chunk1");

    String index =
        ResultChunker.index(
            "list_models", 462_000, chunks, keys, "session/abc123/tool-list_models-a1b2c3d4-index");

    assertThat(index)
        .isEqualTo(
            """
            Tool result for 'list_models' is large (462 000 chars) and has been split into 2 chunk(s) stored in working memory.
            A document outline is stored at key `session/abc123/tool-list_models-a1b2c3d4-index` — retrieve it with get_from_working_memory to navigate the content by section heading.
            Call get_from_working_memory(key) for each relevant chunk BEFORE drawing conclusions.

            | # | Heading          | Key                                               |
            |---|------------------|---------------------------------------------------|
            | 0 | Part 0           | `session/abc123/tool-list_models-a1b2c3d4-chunk0` |
            | 1 | Pricing \\| tiers | `session/abc123/tool-list_models-a1b2c3d4-chunk1` |\
            """);
  }

  @Test
  void charactersAreCountedInGroupsOfThousands() {
    assertThat(ResultChunker.chars(0)).isEqualTo("0");
    assertThat(ResultChunker.chars(999)).isEqualTo("999");
    assertThat(ResultChunker.chars(1_000)).isEqualTo("1 000");
    assertThat(ResultChunker.chars(1_234_567)).isEqualTo("1 234 567");
  }

  @Test
  void badConfigurationIsRefused() {
    assertThatThrownBy(() -> ResultChunker.Config.builder().threshold("m", 0).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'m'");
    assertThatThrownBy(() -> ResultChunker.Config.builder().defaultThreshold(0).build())
        .isInstanceOf(IllegalArgumentException.class);
  }
}
