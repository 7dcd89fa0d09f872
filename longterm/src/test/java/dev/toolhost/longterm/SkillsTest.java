package dev.toolhost.longterm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolException;
import dev.toolhost.core.ToolGuide;
import dev.toolhost.core.ToolGuides;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The skill tools over a real Lucene store, served beside the published guides. */
class SkillsTest {

  @TempDir Path directory;

  private final ToolDispatcher dispatcher = ToolDispatcher.create();
  private MemoryStore store;
  private ToolSet tools;

  private void start(LongTermMemoryConfig.SkillsConfig config) {
    store = LuceneMemoryStore.open(directory);
    ToolGuides guides = new ToolGuides();
    guides.add(new ToolGuide("web", "How to browse.", "# Web"));
    Skills skills =
        new Skills(
            store,
            LongTermMemoryConfig.embedded(directory).withSkills(config),
            Optional.of(guides),
            Clock.systemUTC());
    guides.shelve(skills);
    ToolRegistry registry = new ToolRegistry();
    registry.registerAll(skills.tools());
    registry.registerAll(guides.tools());
    tools = ToolSet.of(registry, ToolProfiles.MAIN);
  }

  @AfterEach
  void stop() {
    if (store != null) {
      store.close();
    }
  }

  private ToolResult call(String user, String tool, String arguments) {
    ToolCall call = ToolCall.of(tool, arguments);
    return dispatcher.dispatch(tools, user == null ? call : call.withUser(user));
  }

  private static String save(String name, String description, String content) {
    return "{\"name\": \""
        + name
        + "\", \"description\": \""
        + description
        + "\", \"content\": \""
        + content
        + "\"}";
  }

  @Test
  void aSavedSkillIsListedAmongTheGuidesMarkedSavedAndReadByBothReaders() {
    start(LongTermMemoryConfig.SkillsConfig.defaults());

    ToolResult saved = call("alice", "save_skill", save("mcp-setup", "Sets up MCP.", "1. list"));

    assertThat(saved.text()).isEqualTo("{\"saved\":\"mcp-setup\",\"replaced\":false}");
    assertThat(call("alice", "list_tool_guides", "{}").text())
        .contains("- web: How to browse.")
        .contains("- mcp-setup (saved): Sets up MCP.");
    assertThat(call("alice", "get_tool_guide", "{\"name\": \"mcp-setup\"}").text())
        .isEqualTo("1. list");
    assertThat(call("alice", "get_skill", "{\"name\": \"mcp-setup\"}").text()).isEqualTo("1. list");
    assertThat(call("alice", "get_tool_guide", "{\"name\": \"nope\"}").text())
        .contains("Available guides: tool-calls, web, mcp-setup (saved).");
    assertThat(call("alice", "list_skills", "{}").text())
        .contains("\"name\":\"mcp-setup\"", "\"description\":\"Sets up MCP.\"");
    assertThat(call("alice", "save_skill", save("mcp-setup", "Sets up MCP.", "1. v2")).text())
        .contains("\"replaced\":true");
    assertThat(call("alice", "get_skill", "{\"name\": \"mcp-setup\"}").text()).isEqualTo("1. v2");
  }

  @Test
  void eachUserSeesOnlyTheirOwnSkillsAndACallWithoutAUserIsTheDefaultUser() {
    start(LongTermMemoryConfig.SkillsConfig.defaults());
    call("alice", "save_skill", save("alices", "Alice's.", "1. a"));
    call(null, "save_skill", save("defaults", "Default's.", "1. d"));

    assertThat(call("bob", "list_tool_guides", "{}").text()).doesNotContain("alices", "defaults");
    ToolResult missing = call("bob", "get_skill", "{\"name\": \"alices\"}");
    assertThat(((ToolResult.Failure) missing).error().code())
        .isEqualTo(ErrorCode.INVALID_ARGUMENTS);
    assertThat(missing.text()).contains("no skill named 'alices'");
    assertThat(call("bob", "get_tool_guide", "{\"name\": \"alices\"}").isError()).isTrue();
    assertThat(call("default", "get_skill", "{\"name\": \"defaults\"}").text()).isEqualTo("1. d");
  }

  @Test
  void sharedSkillsAreEveryUsers() {
    start(new LongTermMemoryConfig.SkillsConfig(true, 16_384, 200));
    call("alice", "save_skill", save("team-deploy", "Deploys.", "1. ship"));

    assertThat(call("bob", "get_skill", "{\"name\": \"team-deploy\"}").text()).isEqualTo("1. ship");
    assertThat(call("bob", "list_tool_guides", "{}").text()).contains("team-deploy (saved)");
  }

  @Test
  void twoSavesAtOnceNeverPassTheCap() throws Exception {
    store = LuceneMemoryStore.open(directory);
    MemoryStore real = store;
    CountDownLatch counted = new CountDownLatch(1);
    CountDownLatch resume = new CountDownLatch(1);
    AtomicBoolean pauseNextCount = new AtomicBoolean(true);
    // Holds the first save between counting the owner's skills and saving, where a second can land.
    MemoryStore paused =
        (MemoryStore)
            Proxy.newProxyInstance(
                MemoryStore.class.getClassLoader(),
                new Class<?>[] {MemoryStore.class},
                (proxy, method, args) -> {
                  Object result;
                  try {
                    result = method.invoke(real, args);
                  } catch (InvocationTargetException e) {
                    throw e.getCause();
                  }
                  if (method.getName().equals("skills")
                      && pauseNextCount.compareAndSet(true, false)) {
                    counted.countDown();
                    resume.await();
                  }
                  return result;
                });
    Skills skills =
        new Skills(
            paused,
            LongTermMemoryConfig.embedded(directory)
                .withSkills(new LongTermMemoryConfig.SkillsConfig(false, 100, 1)),
            Optional.empty(),
            Clock.systemUTC());
    ToolCall alice = ToolCall.of("save_skill", "{}").withUser("alice");

    CompletableFuture<ToolResult> first =
        CompletableFuture.supplyAsync(() -> skills.saveSkill(alice, "one", "One.", "1"));
    assertThat(counted.await(10, TimeUnit.SECONDS)).isTrue();
    Thread second =
        Thread.ofPlatform()
            .start(
                () -> {
                  try {
                    skills.saveSkill(alice, "two", "Two.", "2");
                  } catch (ToolException refused) {
                    // The cap: what the fix makes of the second save.
                  }
                });
    // The second save either lands at once (the race) or waits for the first.
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () ->
                !second.isAlive()
                    || second.getState() == Thread.State.WAITING
                    || second.getState() == Thread.State.BLOCKED);
    resume.countDown();
    first.get(10, TimeUnit.SECONDS);
    second.join(10_000);

    assertThat(real.skills("alice")).hasSize(1);
  }

  @Test
  void aSkillCannotTakeABuiltInGuidesNameInAnotherCase() {
    start(new LongTermMemoryConfig.SkillsConfig(false, 10, 2));

    assertThat(call("alice", "save_skill", save("Tool-Calls", "Mine.", "1. x")).text())
        .contains("'Tool-Calls' is the name of a built-in tool guide");
    assertThat(call("alice", "list_tool_guides", "{}").text()).doesNotContain("Tool-Calls");
  }

  @Test
  void aSkillCannotTakeABuiltInGuidesNameABadNameOrTooMuchContent() {
    start(new LongTermMemoryConfig.SkillsConfig(false, 10, 2));

    assertThat(call("alice", "save_skill", save("web", "Mine.", "1. x")).text())
        .contains("'web' is the name of a built-in tool guide");
    assertThat(call("alice", "save_skill", save("tool-calls", "Mine.", "1. x")).text())
        .contains("built-in tool guide");
    assertThat(call("alice", "save_skill", save("no spaces", "Mine.", "1. x")).text())
        .contains("not a valid skill name");
    assertThat(call("alice", "save_skill", save("big", "Mine.", "12345678901")).text())
        .contains("content is 11 bytes; a skill holds at most 10");
    assertThat(call("alice", "save_skill", save("multi", "one\\ntwo", "1. x")).text())
        .contains("description must be one line");
    assertThat(call("alice", "save_skill", save("cr", "one\\r- tool-calls: fake", "1. x")).text())
        .contains("description must be one line");
    assertThat(call("alice", "save_skill", save("ls", "one\\u2028two", "1. x")).text())
        .contains("description must be one line");
    assertThat(call("alice", "save_skill", save("one", "One.", "1. x")).isError()).isFalse();
    assertThat(call("alice", "save_skill", save("two", "Two.", "1. x")).isError()).isFalse();
    assertThat(call("alice", "save_skill", save("three", "Three.", "1. x")).text())
        .contains("already 2 skills");
    // Replacing one is not one more.
    assertThat(call("alice", "save_skill", save("two", "Two.", "2. y")).isError()).isFalse();
    assertThat(call("alice", "list_skills", "{}").text())
        .doesNotContain("web", "big", "three", "\"cr\"", "\"ls\"");
  }

  @Test
  void aDeletedSkillIsGoneFromEveryListing() {
    start(LongTermMemoryConfig.SkillsConfig.defaults());
    call("alice", "save_skill", save("old", "Old way.", "1. x"));

    assertThat(call("alice", "delete_skill", "{\"name\": \"old\"}").text())
        .isEqualTo("{\"deleted\":\"old\"}");
    assertThat(call("alice", "delete_skill", "{\"name\": \"old\"}").text())
        .contains("no skill named 'old'");
    assertThat(call("alice", "list_tool_guides", "{}").text()).doesNotContain("old");
    assertThat(call("alice", "list_skills", "{}").text()).isEqualTo("{\"skills\":[]}");
  }
}
