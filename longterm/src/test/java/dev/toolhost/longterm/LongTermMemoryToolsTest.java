package dev.toolhost.longterm;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import dev.toolhost.core.ToolSpec;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

class LongTermMemoryToolsTest {

  private static final JsonMapper JSON = JsonMapper.builder().build();

  @TempDir Path directory;

  private LongTermMemory memory;
  private ToolSet tools;
  private final ToolDispatcher dispatcher = ToolDispatcher.create();

  @BeforeEach
  void start() {
    memory =
        new LongTermMemory(
            LuceneMemoryStore.open(directory),
            new SwitchableEmbedder(),
            Duration.ofSeconds(30),
            Clock.systemUTC());
    ToolRegistry registry = new ToolRegistry();
    registry.registerAll(
        new LongTermMemoryTools(memory, LongTermMemoryConfig.embedded(directory)).tools());
    tools = ToolSet.of(registry, ToolProfiles.MAIN);
  }

  @AfterEach
  void stop() {
    memory.close();
  }

  private ToolResult call(String tool, String arguments, String user) {
    ToolCall call = ToolCall.of(tool, arguments);
    return dispatcher.dispatch(tools, user == null ? call : call.withUser(user));
  }

  private JsonNode json(ToolResult result) {
    assertThat(result.isError()).as(result.text()).isFalse();
    return JSON.readTree(result.text());
  }

  @Test
  void theThreeToolsAreBuiltinLongTermMemoryAndOnlyDeleteIsDestructive() {
    assertThat(new LongTermMemoryTools(memory, LongTermMemoryConfig.embedded(directory)).tools())
        .extracting(ExecutableTool::spec)
        .allSatisfy(spec -> assertThat(spec.source()).isEqualTo("builtin:long_term_memory"))
        .filteredOn(spec -> spec.annotations().destructive())
        .extracting(ToolSpec::name)
        .containsExactly("memory_delete");
  }

  @Test
  void aSaveAnswersTheIdThatRecallThenShowsWithEveryField() {
    JsonNode saved =
        json(
            call(
                "memory_save",
                "{\"content\": \"The user prefers dark mode.\", \"memory_type\": \"preference\","
                    + " \"source\": \"chat\"}",
                "alice"));

    JsonNode recalled =
        json(call("memory_recall", "{\"query\": \"what theme does she like?\"}", "alice"));

    assertThat(saved.path("importance").asDouble()).isEqualTo(0.7);
    JsonNode first = recalled.path("memories").get(0);
    assertThat(first.path("id").asString()).isEqualTo(saved.path("id").asString());
    assertThat(first.path("content").asString()).isEqualTo("The user prefers dark mode.");
    assertThat(first.path("memory_type").asString()).isEqualTo("preference");
    assertThat(first.path("importance").asDouble()).isEqualTo(0.7);
    assertThat(first.path("created_at").asString()).endsWith("Z");
    assertThat(first.path("score").asDouble()).isPositive();
    assertThat(recalled.path("total_found").asInt()).isEqualTo(1);
    assertThat(recalled.path("mode").asString()).isEqualTo("hybrid");
  }

  @Test
  void anUnknownModeListsTheValidOnes() {
    ToolResult result = call("memory_recall", "{\"query\": \"x\", \"mode\": \"x\"}", "alice");

    assertThat(result.isError()).isTrue();
    assertThat(result.text())
        .isEqualTo("unknown mode \"x\". Valid modes: hybrid, recent, important, typed");
  }

  @Test
  void typedWithoutATypeIsRefusedWithTheTypes() {
    ToolResult result = call("memory_recall", "{\"query\": \"\", \"mode\": \"typed\"}", "alice");

    assertThat(result.isError()).isTrue();
    assertThat(result.text()).contains("needs a memory_type").contains("identity, goal");
  }

  @Test
  void contentOverFiftyKilobytesIsRefusedAndNothingIsSaved() {
    String big = "x".repeat(51_201);

    ToolResult result =
        call("memory_save", JSON.createObjectNode().put("content", big).toString(), "alice");

    assertThat(result.isError()).isTrue();
    assertThat(result.text()).contains("51201 bytes").contains("at most 51200");
    assertThat(
            json(call("memory_recall", "{\"query\": \"\", \"mode\": \"recent\"}", "alice"))
                .path("memories"))
        .isEmpty();
  }

  @Test
  void anUnknownTypeOrRelationIsRefusedWithTheValidOnes() {
    assertThat(
            call("memory_save", "{\"content\": \"a\", \"memory_type\": \"human\"}", "alice").text())
        .contains("unknown memory_type \"human\"")
        .contains("identity, goal, decision, todo, preference, fact, event, observation");
    String id = json(call("memory_save", "{\"content\": \"a\"}", "alice")).path("id").asString();
    assertThat(
            call(
                    "memory_save",
                    "{\"content\": \"b\", \"associations\": [{\"target_id\": \""
                        + id
                        + "\", \"relation_type\": \"replaces\"}]}",
                    "alice")
                .text())
        .contains("unknown relation_type \"replaces\"")
        .contains("related_to, updates");
  }

  @Test
  void callsWithoutAUserShareTheDefaultUserAndNoOneElse() {
    json(call("memory_save", "{\"content\": \"The default user's note about INV-2291.\"}", null));

    assertThat(
            json(call("memory_recall", "{\"query\": \"INV-2291\"}", null)).path("memories").size())
        .isEqualTo(1);
    assertThat(
            json(call("memory_recall", "{\"query\": \"INV-2291\"}", "default"))
                .path("memories")
                .size())
        .isEqualTo(1);
    assertThat(json(call("memory_recall", "{\"query\": \"INV-2291\"}", "bob")).path("memories"))
        .isEmpty();
  }

  @Test
  void anotherUsersMemoryCannotBeDeletedOrLinkedAndLooksMissing() {
    String bobs =
        json(call("memory_save", "{\"content\": \"Bob's locker code is 4711.\"}", "bob"))
            .path("id")
            .asString();

    ToolResult delete = call("memory_delete", "{\"id\": \"" + bobs + "\"}", "alice");
    ToolResult missing = call("memory_delete", "{\"id\": \"no-such-id\"}", "alice");
    ToolResult link =
        call(
            "memory_save",
            "{\"content\": \"x\", \"associations\": [{\"target_id\": \"" + bobs + "\"}]}",
            "alice");

    assertThat(delete.isError()).isTrue();
    assertThat(delete.text()).isEqualTo(missing.text().replace("no-such-id", bobs));
    assertThat(link.isError()).isTrue();
    assertThat(link.text()).contains("no memory has the id");
    assertThat(
            json(call("memory_delete", "{\"id\": \"" + bobs + "\"}", "bob"))
                .path("deleted")
                .asString())
        .isEqualTo(bobs);
  }

  private int recalled(ToolSet over, String query, String agent) {
    ToolCall call = ToolCall.of("memory_recall", "{\"query\": \"" + query + "\"}");
    return json(dispatcher.dispatch(over, agent == null ? call : call.withAgent(agent)))
        .path("memories")
        .size();
  }

  private void saved(ToolSet over, String content, String agent) {
    ToolCall call = ToolCall.of("memory_save", "{\"content\": \"" + content + "\"}");
    json(dispatcher.dispatch(over, agent == null ? call : call.withAgent(agent)));
  }

  @Test
  void anAgentsRunKeepsItsOwnMemoriesAndSeesTheUsersOwn() {
    saved(tools, "The planner's note on INV-2291.", "planner");
    saved(tools, "The user's own note on INV-2291.", null);

    assertThat(recalled(tools, "INV-2291", "planner")).isEqualTo(2);
    assertThat(recalled(tools, "INV-2291", "coder")).isEqualTo(1);
    assertThat(recalled(tools, "INV-2291", null)).isEqualTo(1);
  }

  @Test
  void withPerAgentOffTheUsersAgentsShareTheirMemories() {
    ToolRegistry registry = new ToolRegistry();
    registry.registerAll(
        new LongTermMemoryTools(
                memory, LongTermMemoryConfig.embedded(directory).withPerAgent(false))
            .tools());
    ToolSet shared = ToolSet.of(registry, ToolProfiles.MAIN);

    saved(shared, "The planner's note on INV-2291.", "planner");

    assertThat(recalled(shared, "INV-2291", "coder")).isEqualTo(1);
    assertThat(recalled(shared, "INV-2291", null)).isEqualTo(1);
  }
}
