package dev.toolhost.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.core.MethodTools;
import dev.toolhost.core.Tool;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolGuides;
import dev.toolhost.core.ToolProfile;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolSet;
import dev.toolhost.testing.RecordedRequest;
import dev.toolhost.testing.ScriptedModelServer;
import dev.toolhost.testing.ScriptedReply;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code spawn_wisps} through a real agent and the scripted model server: wisps run together up to
 * the bound, answer in order, and one failing or timing out loses no other; a wisp's tools are a
 * subset of its caller's, and nothing that spawns.
 */
@Timeout(60)
class WispsTest {

  private static final JsonMapper JSON = JsonMapper.builder().build();
  private static final int BOUND = 5;

  private final ScriptedModelServer server = ScriptedModelServer.start();
  private final ToolRegistry registry = new ToolRegistry();
  private final Agents agents;

  /** A tool the caller's profile does not grant. */
  public static final class Secret {
    @Tool(name = "launch_codes", description = "Not the assistant's.")
    public String launchCodes() {
      return "0000";
    }
  }

  /** A tool that notes the session of each call, as a wisp's tool sees it. */
  public static final class Sessions {
    final ConcurrentLinkedQueue<String> seen = new ConcurrentLinkedQueue<>();

    @Tool(name = "note_session", description = "Notes the call's session.")
    public String noteSession(ToolCall call) {
      seen.add(call.sessionId().orElse("none"));
      return "noted";
    }
  }

  private final Sessions sessions = new Sessions();

  WispsTest() {
    registry.registerAll(new ToolGuides().tools());
    registry.registerAll(MethodTools.of(sessions, "builtin:sessions"));
    registry.registerAll(MethodTools.of(new Secret(), "builtin:secret"));
    agents =
        Agents.create(
            List.of(
                AgentDefinition.of("assistant", new ModelEndpoint(server.baseUrl(), "m", "KEY"))
                    .withProfile("assistant")),
            registry,
            ToolProfiles.of(List.of(ToolProfile.all("assistant").withoutSources("builtin:secret"))),
            ToolDispatcher.create(),
            Map.of());
    registry.register(
        new Wisps(agents, registry, new Wisps.Limits(32, BOUND, Duration.ofSeconds(2), 2)).tool());
  }

  private final CountDownLatch testEnded = new CountDownLatch(1);

  @AfterEach
  void close() {
    testEnded.countDown();
    agents.close();
    server.close();
  }

  private static boolean isWisp(RecordedRequest request) {
    return request
        .json()
        .get("messages")
        .get(0)
        .get("content")
        .asString()
        .startsWith(Wisps.PREAMBLE);
  }

  private static String lastContent(RecordedRequest request) {
    JsonNode messages = request.json().get("messages");
    return messages.get(messages.size() - 1).get("content").asString();
  }

  /**
   * The parent calls spawn_wisps with the given arguments, then answers with the tool's result;
   * wisp requests go to the given script.
   */
  private void script(String arguments, Function<RecordedRequest, ScriptedReply> wisps) {
    server.respondWith(
        request -> {
          if (isWisp(request)) {
            return wisps.apply(request);
          }
          return request.lastRole().equals("user")
              ? ScriptedReply.toolCalls(ScriptedReply.call("call_w", "spawn_wisps", arguments))
              : ScriptedReply.answer(lastContent(request));
        });
  }

  private String run() {
    Conversation conversation = agents.conversation("assistant", "session-w");
    return agents.agent("assistant").run(conversation, "fan out", RunListener.NONE).text();
  }

  @Test
  void tenTasksRunTogetherUpToTheBoundAnswerInOrderAndOneFailureLosesNoOther() {
    AtomicInteger inFlight = new AtomicInteger();
    AtomicInteger peak = new AtomicInteger();
    // Opens once BOUND wisps are in flight together: serial wisps would never open it.
    CountDownLatch together = new CountDownLatch(BOUND);
    String tasks =
        IntStream.rangeClosed(1, 10)
            .mapToObj(i -> "\"Summarise page " + i + "\"")
            .reduce((a, b) -> a + ", " + b)
            .orElseThrow();
    script(
        "{\"tasks\": [" + tasks + "], \"instructions\": \"One line.\"}",
        request -> {
          peak.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
          together.countDown();
          try {
            together.await(20, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          inFlight.decrementAndGet();
          String task = lastContent(request);
          return task.equals("Summarise page 7")
              ? ScriptedReply.status(400, "{\"error\": {\"message\": \"page 7 is unreadable\"}}")
              : ScriptedReply.answer("Summary of " + task.substring("Summarise ".length()));
        });

    JsonNode answer = JSON.readTree(run());

    assertThat(together.getCount()).isZero();
    assertThat(peak.get()).as("wisps in flight at once: the bound, no more").isEqualTo(BOUND);
    JsonNode wisps = answer.get("wisps");
    assertThat(wisps).hasSize(10);
    for (int i = 0; i < 10; i++) {
      JsonNode wisp = wisps.get(i);
      assertThat(wisp.get("task").asInt()).isEqualTo(i + 1);
      if (i == 6) {
        assertThat(wisp.get("status").asString()).isEqualTo("failed");
        assertThat(wisp.get("error").asString()).contains("400");
      } else {
        assertThat(wisp.get("status").asString()).isEqualTo("done");
        assertThat(wisp.get("result").asString()).isEqualTo("Summary of page " + (i + 1));
      }
    }
    assertThat(answer.get("done").asInt()).isEqualTo(9);
    assertThat(answer.get("not_done").asInt()).isEqualTo(1);
  }

  @Test
  void batchesSpawnedTogetherShareTheHostsBoundOfWispsAtOnce() {
    int hostBound = 4;
    ToolRegistry capped = new ToolRegistry();
    capped.registerAll(new ToolGuides().tools());
    Agents hosted =
        Agents.create(
            List.of(
                AgentDefinition.of("assistant", new ModelEndpoint(server.baseUrl(), "m", "KEY"))
                    .withProfile("assistant")),
            capped,
            ToolProfiles.of(List.of(ToolProfile.all("assistant"))),
            ToolDispatcher.create(),
            Map.of());
    capped.register(
        new Wisps(hosted, capped, new Wisps.Limits(32, 4, Duration.ofSeconds(20), 2, hostBound))
            .tool());
    AtomicInteger inFlight = new AtomicInteger();
    AtomicInteger peak = new AtomicInteger();
    // Opens once more wisps than the host's bound have arrived; until then each waits, so that
    // without the bound all eight would be in flight together.
    CountDownLatch overBound = new CountDownLatch(hostBound + 1);
    String batch = "{\"tasks\": [\"a\", \"b\", \"c\", \"d\"]}";
    server.respondWith(
        request -> {
          if (isWisp(request)) {
            peak.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
            overBound.countDown();
            try {
              overBound.await(3, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
            inFlight.decrementAndGet();
            return ScriptedReply.answer("did " + lastContent(request));
          }
          // Two batches in one step: the agent runs a step's calls together.
          return request.lastRole().equals("user")
              ? ScriptedReply.toolCalls(
                  ScriptedReply.call("call_1", "spawn_wisps", batch),
                  ScriptedReply.call("call_2", "spawn_wisps", batch))
              : ScriptedReply.answer("both done");
        });

    try {
      Conversation conversation = hosted.conversation("assistant", "session-cap");
      String text = hosted.agent("assistant").run(conversation, "fan out", RunListener.NONE).text();
      assertThat(text).isEqualTo("both done");
    } finally {
      hosted.close();
    }

    assertThat(peak.get()).as("wisps in flight at once on the host").isEqualTo(hostBound);
  }

  @Test
  void aWispPastItsDeadlineIsTimedOutAndTheOthersAnswer() {
    script(
        "{\"tasks\": [\"quick\", \"slow\"]}",
        request -> {
          if (lastContent(request).equals("slow")) {
            try {
              // Answers only once the test ends: long past the wisp's two seconds.
              testEnded.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          }
          return ScriptedReply.answer("did " + lastContent(request));
        });

    JsonNode wisps = JSON.readTree(run()).get("wisps");

    assertThat(wisps.get(0).get("status").asString()).isEqualTo("done");
    assertThat(wisps.get(1).get("status").asString()).isEqualTo("timed_out");
  }

  @Test
  void aWispUsesOnlyTheNamedToolsOfItsCallerAndNeverOneThatSpawns() {
    ConcurrentLinkedQueue<List<String>> offered = new ConcurrentLinkedQueue<>();
    script(
        "{\"tasks\": [\"look\"], \"tools\": [\"list_tool_guides\"]}",
        request -> {
          offered.add(OfferedTools.names(request.json()));
          return ScriptedReply.answer("looked");
        });
    assertThat(run()).contains("\"status\":\"done\"");
    assertThat(offered).containsExactly(List.of("list_tool_guides"));

    for (String tool : List.of("launch_codes", "spawn_subagent", "spawn_wisps", "assistant")) {
      script(
          "{\"tasks\": [\"x\"], \"tools\": [\"" + tool + "\"]}",
          request -> ScriptedReply.answer("no"));
      assertThat(run()).as(tool).contains("'" + tool + "'");
    }
    // No wisp ran for a refused batch.
    assertThat(offered).hasSize(1);
  }

  @Test
  void aBatchAfterARestartKeepsNoSessionOfAnEarlierBatch() {
    script(
        "{\"tasks\": [\"note\"], \"tools\": [\"note_session\"]}",
        request ->
            request.lastRole().equals("user")
                ? ScriptedReply.toolCalls(ScriptedReply.call("call_n", "note_session", "{}"))
                : ScriptedReply.answer("noted"));
    assertThat(run()).contains("\"status\":\"done\"");
    // A new host: its batches count from one again, under the same session of the same user.
    registry.unregister("spawn_wisps");
    registry.register(
        new Wisps(agents, registry, new Wisps.Limits(32, BOUND, Duration.ofSeconds(2), 2)).tool());
    assertThat(run()).contains("\"status\":\"done\"");

    // A wisp's session holds its working memory and whiteboard, which a later wisp must not find.
    assertThat(sessions.seen).hasSize(2).doesNotHaveDuplicates();
    assertThat(sessions.seen).allSatisfy(session -> assertThat(session).startsWith("session-w/"));
  }

  @Test
  void outsideAnAgentsRunThereIsNoModelToSpawnWispsWith() {
    String text =
        ToolDispatcher.create()
            .dispatch(
                ToolSet.of(registry, ToolProfiles.MAIN),
                ToolCall.of("spawn_wisps", "{\"tasks\": [\"x\"]}").withSessionId("s"))
            .text();

    assertThat(text).contains("only inside an agent's conversation");
  }

  @Test
  void theAgentsGuideTeachesTheWhiteboardAndWisps() {
    List<String> kit = new ArrayList<>();
    kit.add(new Wisps(agents, registry, Wisps.Limits.DEFAULT).tool().name());
    new Whiteboard(
            new dev.toolhost.memory.InProcessWorkingMemory(), session -> java.util.Optional.empty())
        .tools()
        .forEach(tool -> kit.add(tool.name()));

    assertThat(kit)
        .containsExactlyInAnyOrder(
            "spawn_wisps", "whiteboard_write", "whiteboard_read", "whiteboard_clear");
    assertThat(kit).allSatisfy(name -> assertThat(Agents.GUIDE.document()).contains("`" + name));
  }
}
