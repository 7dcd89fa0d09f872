package dev.toolhost.agent;

import static dev.toolhost.agent.OfferedTools.names;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolGuides;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import dev.toolhost.memory.InProcessWorkingMemory;
import dev.toolhost.memory.MemoryEntry;
import dev.toolhost.memory.WorkingMemory;
import dev.toolhost.testing.ScriptedModelServer;
import dev.toolhost.testing.ScriptedReply;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.JsonNode;

/**
 * The whiteboard through real agents and the scripted model server: a subagent writes on its
 * parent's board and the parent reads it; another session cannot.
 */
@Timeout(30)
class WhiteboardTest {

  private final ScriptedModelServer server = ScriptedModelServer.start();
  private final ToolRegistry registry = new ToolRegistry();
  private final WorkingMemory memory = new InProcessWorkingMemory();
  private final ToolDispatcher dispatcher = ToolDispatcher.create();
  private final Agents agents;

  WhiteboardTest() {
    registry.registerAll(new ToolGuides().tools());
    agents =
        Agents.create(
            List.of(
                AgentDefinition.of(
                    "assistant", new ModelEndpoint(server.baseUrl(), "model", "KEY"))),
            registry,
            // The board, as the agents extension grants it to a subagent.
            ToolProfiles.of(
                ToolProfiles.withAllowed(
                    Map.of(
                        "subagent",
                        List.of("whiteboard_read", "whiteboard_write", "whiteboard_clear"))),
                List.of()),
            dispatcher,
            Map.of());
    registry.registerAll(new Whiteboard(memory, agents.subagents()::parentSessionOf).tools());
  }

  @AfterEach
  void close() {
    agents.close();
    memory.close();
    server.close();
  }

  private static String lastContent(JsonNode request) {
    JsonNode messages = request.get("messages");
    return messages.get(messages.size() - 1).get("content").asString();
  }

  private ToolResult call(String session, String tool, String arguments) {
    return dispatcher.dispatch(
        ToolSet.of(registry, ToolProfiles.MAIN),
        ToolCall.of(tool, arguments).withSessionId(session));
  }

  @Test
  void aSubagentWritesOnItsParentsBoardWhichTheParentReadsAndNoOtherSessionSees() throws Exception {
    server.respondWith(
        request -> {
          boolean subagent = names(request.json()).contains("set_status");
          if (subagent) {
            return request.lastRole().equals("user")
                ? ScriptedReply.toolCalls(
                    ScriptedReply.call(
                        "call_w",
                        "whiteboard_write",
                        "{\"key\": \"findings\", \"text\": \"The outage began at 02:14 UTC.\"}"))
                : ScriptedReply.answer("Noted on the board.");
          }
          if (!request.lastRole().equals("user")) {
            // The parent answers with what its tool gave it.
            return ScriptedReply.answer(lastContent(request.json()));
          }
          return switch (lastContent(request.json())) {
            case "investigate" ->
                ScriptedReply.toolCalls(
                    ScriptedReply.call(
                        "call_s", "spawn_subagent", "{\"task\": \"Find when the outage began\"}"));
            case "read the board" ->
                ScriptedReply.toolCalls(ScriptedReply.call("call_r", "whiteboard_read", "{}"));
            default -> ScriptedReply.answer("What?");
          };
        });
    Conversation parent = agents.conversation("assistant", "session-a");
    LinkedBlockingQueue<String> notices = new LinkedBlockingQueue<>();
    parent.onNotice(notices::add);

    agents.agent("assistant").run(parent, "investigate", RunListener.NONE);
    assertThat(notices.poll(10, TimeUnit.SECONDS))
        .isEqualTo("[subagent sub-1 finished] Noted on the board.");
    RunResult read = agents.agent("assistant").run(parent, "read the board", RunListener.NONE);

    assertThat(read.text())
        .isEqualTo("The whiteboard (1 keys):\n\n## findings\nThe outage began at 02:14 UTC.");
    assertThat(call("session-a", "whiteboard_read", "{\"key\": \"findings\"}").text())
        .isEqualTo("The outage began at 02:14 UTC.");
    // Another session has a board of its own, empty; the parent's keys do not exist for it.
    assertThat(call("session-b", "whiteboard_read", "{}").text())
        .isEqualTo("The whiteboard is empty.");
    assertThat(call("session-b", "whiteboard_read", "{\"key\": \"findings\"}").text())
        .contains("no key 'findings'");
    // A session named like the finished subagent's is not its parent's: only a running
    // subagent, known to the host, reaches the parent's board.
    assertThat(call("session-a/sub-1", "whiteboard_read", "{}").text())
        .isEqualTo("The whiteboard is empty.");
    // The board's entries are not in the session's working memory namespace either.
    assertThat(memory.list(WorkingMemory.sessionNamespace("session-a"))).isEmpty();
  }

  @Test
  void keysAreClearedOneAtATimeAndBadKeysAndCallsWithoutASessionAreRefused() {
    call("s", "whiteboard_write", "{\"key\": \"plan\", \"text\": \"1. look\"}");
    call("s", "whiteboard_write", "{\"key\": \"notes\", \"text\": \"none yet\"}");

    assertThat(call("s", "whiteboard_clear", "{\"key\": \"plan\"}").text())
        .isEqualTo("Cleared 'plan'.");
    assertThat(call("s", "whiteboard_read", "{}").text())
        .contains("## notes")
        .doesNotContain("plan");
    assertThat(call("s", "whiteboard_write", "{\"key\": \"../x\", \"text\": \"t\"}").text())
        .contains("not a whiteboard key");
    assertThat(
            dispatcher
                .dispatch(
                    ToolSet.of(registry, ToolProfiles.MAIN), ToolCall.of("whiteboard_read", "{}"))
                .text())
        .contains("this call has none");
  }

  @Test
  void entriesExpireWithTheSessionAndEveryWriteRenewsTheWholeBoard() {
    java.util.concurrent.atomic.AtomicReference<java.time.Instant> now =
        new java.util.concurrent.atomic.AtomicReference<>(
            java.time.Instant.parse("2026-01-01T00:00:00Z"));
    WorkingMemory timed = new InProcessWorkingMemory(now::get);
    Whiteboard board = new Whiteboard(timed, session -> java.util.Optional.empty());
    ToolCall call = ToolCall.of("whiteboard_write", "{}").withSessionId("s");
    board.write(call, "first", "1");
    now.set(now.get().plus(java.time.Duration.ofMinutes(90)));
    board.write(call, "second", "2");

    now.set(now.get().plus(Whiteboard.TTL).minusSeconds(1));
    assertThat(board.read(call, java.util.Optional.empty()))
        .contains("## first\n1", "## second\n2");
    now.set(now.get().plusSeconds(2));
    assertThat(board.read(call, java.util.Optional.empty())).isEqualTo("The whiteboard is empty.");
  }

  @Test
  void hostsSharingARedisWorkingMemoryShareTheBoardsOfTheirSessions() {
    String prefix = "toolhost:test:whiteboard:" + java.util.UUID.randomUUID() + ":";
    java.net.URI redis = java.net.URI.create("redis://127.0.0.1:6379");
    try (WorkingMemory first = dev.toolhost.memory.RedisWorkingMemory.connect(redis, prefix);
        WorkingMemory second = dev.toolhost.memory.RedisWorkingMemory.connect(redis, prefix)) {
      ToolCall call = ToolCall.of("whiteboard_write", "{}").withSessionId("shared-session");
      try {
        new Whiteboard(first, session -> java.util.Optional.empty())
            .write(call, "plan", "1. split the work");

        assertThat(
                new Whiteboard(second, session -> java.util.Optional.empty())
                    .read(call, java.util.Optional.of("plan")))
            .isEqualTo("1. split the work");
      } finally {
        first.removeAll("");
      }
    }
  }

  @Test
  void renewingTheBoardNeverPutsBackAValueAnotherWriteHasJustReplaced() throws Exception {
    CountDownLatch listed = new CountDownLatch(1);
    CountDownLatch resume = new CountDownLatch(1);
    AtomicBoolean pauseNextList = new AtomicBoolean();
    // Holds one write between reading the board and renewing it, where another write can land.
    WorkingMemory paused =
        new WorkingMemory() {
          @Override
          public void put(String key, String value, Duration ttl, String category) {
            memory.put(key, value, ttl, category);
          }

          @Override
          public Optional<MemoryEntry> get(String key) {
            return memory.get(key);
          }

          @Override
          public List<MemoryEntry> list(String prefix) {
            List<MemoryEntry> entries = memory.list(prefix);
            if (pauseNextList.compareAndSet(true, false)) {
              listed.countDown();
              try {
                resume.await();
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            }
            return entries;
          }

          @Override
          public boolean remove(String key) {
            return memory.remove(key);
          }

          @Override
          public int removeAll(String prefix) {
            return memory.removeAll(prefix);
          }

          @Override
          public void close() {}
        };
    Whiteboard board = new Whiteboard(paused, session -> Optional.empty());
    ToolCall call = ToolCall.of("whiteboard_write", "{}").withSessionId("s1");
    board.write(call, "plan", "old plan");

    pauseNextList.set(true);
    Thread subagent = Thread.ofPlatform().start(() -> board.write(call, "findings", "found"));
    assertThat(listed.await(10, TimeUnit.SECONDS)).isTrue();
    Thread parent = Thread.ofPlatform().start(() -> board.write(call, "plan", "new plan"));
    // The parent's write either lands at once (the race) or waits for the subagent's.
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () ->
                !parent.isAlive()
                    || parent.getState() == Thread.State.WAITING
                    || parent.getState() == Thread.State.BLOCKED);
    resume.countDown();
    subagent.join(10_000);
    parent.join(10_000);

    assertThat(board.read(call, Optional.of("plan"))).isEqualTo("new plan");
    assertThat(board.read(call, Optional.of("findings"))).isEqualTo("found");
  }
}
