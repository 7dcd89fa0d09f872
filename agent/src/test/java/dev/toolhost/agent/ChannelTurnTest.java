package dev.toolhost.agent;

import static dev.toolhost.agent.OfferedTools.names;
import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolGuides;
import dev.toolhost.core.ToolProfile;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import dev.toolhost.secrets.RuleSet;
import dev.toolhost.secrets.SecretScanner;
import dev.toolhost.testing.RecordedRequest;
import dev.toolhost.testing.ScriptedModelServer;
import dev.toolhost.testing.ScriptedReply;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.JsonNode;

/**
 * The channel tools in scripted conversations: the primary does what the user's message says
 * ({@code call <tool> <json>}, several joined by {@code &&}); a subagent answers {@code Done:} with
 * every user message it has seen, and one whose task starts with {@code hold} waits for {@link
 * #release} before its first step.
 */
@Timeout(30)
class ChannelTurnTest {

  // A GitHub token of the shape gitleaks' github-pat rule knows; made up.
  private static final String TOKEN = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tV9wX1yZ3bC5";

  private final ScriptedModelServer server = ScriptedModelServer.start();
  private final ToolRegistry registry = new ToolRegistry();
  private final ToolDispatcher dispatcher = ToolDispatcher.create();
  private final CountDownLatch release = new CountDownLatch(1);
  private final CountDownLatch holding = new CountDownLatch(1);
  private Agents agents;

  ChannelTurnTest() {
    registry.registerAll(new ToolGuides().tools());
    agents =
        Agents.create(
            List.of(AgentDefinition.of("assistant", new ModelEndpoint(server.baseUrl(), "m", "K"))),
            registry,
            ToolProfiles.of(List.of(ToolProfile.all("assistant"))),
            dispatcher,
            Map.of(),
            Agents.DEFAULT_MAX_DEPTH,
            SecretScanner.builder(RuleSet.gitleaks()).build());
    script();
  }

  @AfterEach
  void close() {
    release.countDown();
    agents.close();
    server.close();
  }

  private void script() {
    AtomicInteger ids = new AtomicInteger();
    server.respondWith(
        request -> {
          JsonNode messages = request.json().get("messages");
          if (names(request.json()).contains("set_status")) {
            return subagent(request, messages);
          }
          if (!request.lastRole().equals("user")) {
            return ScriptedReply.answer("OK.");
          }
          String said = messages.get(messages.size() - 1).get("content").asString();
          if (said.equals("leak")) {
            return ScriptedReply.toolCalls(
                ScriptedReply.call(
                    "call_" + ids.incrementAndGet(),
                    "reply",
                    "{\"content\":\"Your token is " + TOKEN + "\"}"),
                ScriptedReply.call(
                    "call_" + ids.incrementAndGet(), "reply", "{\"content\":\"On it.\"}"));
          }
          if (!said.startsWith("call ")) {
            return ScriptedReply.answer("You said: " + said);
          }
          List<ScriptedReply.Call> calls = new ArrayList<>();
          for (String command : said.split(" && ")) {
            String[] parts = command.split(" ", 3);
            calls.add(ScriptedReply.call("call_" + ids.incrementAndGet(), parts[1], parts[2]));
          }
          return ScriptedReply.toolCalls(calls.toArray(ScriptedReply.Call[]::new));
        });
  }

  private ScriptedReply subagent(RecordedRequest request, JsonNode messages) {
    List<String> heard = new ArrayList<>();
    messages.forEach(
        message -> {
          if (message.get("role").asString().equals("user")) {
            heard.add(message.get("content").asString());
          }
        });
    boolean first = heard.size() == 1 && request.lastRole().equals("user");
    if (first && heard.getFirst().startsWith("hold")) {
      holding.countDown();
      try {
        release.await(25, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      return ScriptedReply.toolCalls(
          ScriptedReply.call("call_s", "set_status", "{\"status\":\"working\"}"));
    }
    return ScriptedReply.answer("Done: " + String.join(" | ", heard));
  }

  /** Has the assistant spawn a subagent for the task in a turn of the conversation. */
  private LinkedBlockingQueue<String> spawn(Conversation conversation, String task) {
    LinkedBlockingQueue<String> notices = new LinkedBlockingQueue<>();
    conversation.onNotice(notices::add);
    turn(conversation, "call spawn_subagent {\"task\":\"" + task + "\"}");
    return notices;
  }

  /** One turn of the conversation with the channel tools bound to it; the turn is closed after. */
  private ChannelTurn turn(Conversation conversation, String message, List<RunResult> results) {
    try (ChannelTurn turn = ChannelTurn.open(agents, conversation, ChannelTurn.Listener.NONE)) {
      results.add(agents.agent("assistant").run(conversation, message, RunListener.NONE, turn));
      return turn;
    }
  }

  private ChannelTurn turn(Conversation conversation, String message) {
    return turn(conversation, message, new ArrayList<>());
  }

  private static List<String> toolResults(Conversation conversation) {
    return conversation.history().stream()
        .filter(ChatMessage.ToolMessage.class::isInstance)
        .map(message -> ((ChatMessage.ToolMessage) message).content())
        .toList();
  }

  private static String lastToolResult(Conversation conversation) {
    return toolResults(conversation).getLast();
  }

  @Test
  void everyChannelToolIsOfferedForTheTurn() {
    Conversation conversation = agents.conversation("assistant");

    turn(conversation, "hello");

    assertThat(names(server.takeRequest().json())).containsAll(ChannelTurn.NAMES);
    assertThat(conversation.tools().names()).doesNotContainAnyElementsOf(ChannelTurn.NAMES);
  }

  @Test
  void skipWithReactGivesOneReactionNoMessageAndEndsTheTurn() {
    Conversation conversation = agents.conversation("assistant");
    List<String> heard = Collections.synchronizedList(new ArrayList<>());
    List<RunResult> results = new ArrayList<>();
    ChannelTurn turn;
    try (ChannelTurn open =
        ChannelTurn.open(
            agents,
            conversation,
            new ChannelTurn.Listener() {
              @Override
              public void onReaction(String emoji) {
                heard.add("reaction " + emoji);
              }

              @Override
              public void onSkip(String reason) {
                heard.add("skip " + reason);
              }
            })) {
      results.add(
          agents
              .agent("assistant")
              .run(
                  conversation,
                  "call react {\"emoji\":\"👍\"} && call skip {\"reason\":\"just thanks\"}",
                  RunListener.NONE,
                  open));
      turn = open;
    }

    assertThat(results.getFirst().stop()).isEqualTo(RunResult.Stop.SKIPPED);
    assertThat(results.getFirst().text()).isEmpty();
    assertThat(turn.skipped()).isTrue();
    assertThat(turn.skipReason()).isEqualTo("just thanks");
    assertThat(turn.reactions()).containsExactly("👍");
    assertThat(turn.replies()).isEmpty();
    assertThat(heard).containsExactlyInAnyOrder("reaction 👍", "skip just thanks");
    // The turn ended after the skip: no second request asked the model to go on.
    assertThat(server.requestCount()).isEqualTo(1);
    assertThat(toolResults(conversation))
        .containsExactlyInAnyOrder("Reacted with 👍 to the user's message.", "{\"skipped\":true}");
  }

  @Test
  void aReactionIsOneEmojiOrAShortCodeAndCountsOnce() {
    Conversation conversation = agents.conversation("assistant");

    ChannelTurn turn =
        turn(
            conversation,
            "call react {\"emoji\":\"👍🏽\"} && call react {\"emoji\":\":eyes:\"} && call react"
                + " {\"emoji\":\"👍🏽\"} && call react {\"emoji\":\"great job\"}");

    // The calls of one step run at once: the order is theirs.
    assertThat(turn.reactions()).containsExactlyInAnyOrder("👍🏽", ":eyes:");
    assertThat(toolResults(conversation))
        .anySatisfy(
            text -> assertThat(text).startsWith("emoji must be one emoji").contains("'great job'"));
    assertThat(ChannelTurn.isEmoji("🇫🇷")).isTrue();
    assertThat(ChannelTurn.isEmoji("1️⃣")).isTrue();
    assertThat(ChannelTurn.isEmoji("👨‍👩‍👧")).isTrue();
    assertThat(ChannelTurn.isEmoji("a")).isFalse();
    assertThat(ChannelTurn.isEmoji("12")).isFalse();
  }

  @Test
  void replyDeliversAndRefusesTextCarryingASecret() {
    Conversation conversation = agents.conversation("assistant");

    ChannelTurn turn = turn(conversation, "leak");

    assertThat(turn.replies()).containsExactly("On it.");
    assertThat(toolResults(conversation))
        .anySatisfy(
            text ->
                assertThat(text)
                    .contains("blocked reply content: it carries a secret (github-pat)")
                    .doesNotContain(TOKEN))
        .contains("Delivered.");
  }

  @Test
  void aChannelToolCalledAfterItsTurnIsRefused() {
    Conversation conversation = agents.conversation("assistant");
    ChannelTurn turn = turn(conversation, "hello");

    for (String name : ChannelTurn.NAMES) {
      ToolResult late =
          dispatcher.dispatch(conversation.tools(), ToolCall.of(name, "{\"emoji\":\"👍\"}"));
      assertThat(late).as(name).isInstanceOf(ToolResult.Failure.class);
      assertThat(((ToolResult.Failure) late).error().code())
          .as(name)
          .isEqualTo(ErrorCode.TOOL_NOT_FOUND);
    }
    // Even where something still holds the tool, the closed turn does nothing.
    ToolSet elsewhere = ToolSet.of(registry, ToolProfiles.MAIN);
    turn.tools().forEach(elsewhere::add);
    ToolResult stale = dispatcher.dispatch(elsewhere, ToolCall.of("skip", "{}"));
    assertThat(((ToolResult.Failure) stale).error().code()).isEqualTo(ErrorCode.TOOL_NOT_FOUND);
    assertThat(stale.text()).contains("has ended");
    assertThat(turn.skipped()).isFalse();
  }

  @Test
  void routeReachesARunningSubagentAnIdleOneAndNoUnknownOne() throws Exception {
    Conversation conversation = agents.conversation("assistant");
    LinkedBlockingQueue<String> notices = spawn(conversation, "hold and research");
    assertThat(holding.await(10, TimeUnit.SECONDS)).isTrue();

    // Running: the follow-up joins its run before its next step.
    turn(
        conversation, "call route {\"worker_id\":\"sub-1\",\"message\":\"Also check the prices\"}");
    assertThat(lastToolResult(conversation))
        .isEqualTo(
            "{\"worker_id\":\"sub-1\",\"routed\":true,"
                + "\"delivery\":\"joins its run before its next step\"}");
    release.countDown();
    assertThat(notices.poll(10, TimeUnit.SECONDS))
        .isEqualTo("[subagent sub-1 finished] Done: hold and research | Also check the prices");

    // Idle: it runs again over its own history.
    turn(conversation, "call route {\"worker_id\":\"sub-1\",\"message\":\"And the dates\"}");
    assertThat(lastToolResult(conversation)).contains("\"routed\":true").contains("runs again");
    assertThat(notices.poll(10, TimeUnit.SECONDS))
        .isEqualTo(
            "[subagent sub-1 finished] Done: hold and research | Also check the prices | And the"
                + " dates");

    // Unknown.
    turn(conversation, "call route {\"worker_id\":\"sub-9\",\"message\":\"Hello?\"}");
    assertThat(lastToolResult(conversation))
        .isEqualTo("Worker sub-9 not found. It may have already completed or been" + " cancelled.");
  }

  @Test
  void cancelStopsARunningSubagentAtOnceAndARoutedFollowUpToItIsNotRouted() throws Exception {
    Conversation conversation = agents.conversation("assistant");
    LinkedBlockingQueue<String> notices = spawn(conversation, "hold forever");
    assertThat(holding.await(10, TimeUnit.SECONDS)).isTrue();

    turn(
        conversation,
        "call cancel {\"process_type\":\"subagent\",\"process_id\":\"sub-1\","
            + "\"reason\":\"no longer needed\"}");

    assertThat(lastToolResult(conversation))
        .isEqualTo("subagent sub-1 cancelled: no longer needed");
    // Well within the subagent's 25-second hold: the cancel did not wait for it.
    assertThat(notices.poll(10, TimeUnit.SECONDS)).isEqualTo("[subagent sub-1 was cancelled]");
    turn(conversation, "call route {\"worker_id\":\"sub-1\",\"message\":\"Still there?\"}");
    assertThat(lastToolResult(conversation))
        .isEqualTo(
            "{\"worker_id\":\"sub-1\",\"routed\":false,"
                + "\"reason\":\"it failed or was cancelled and takes no more input\"}");
    turn(conversation, "call cancel {\"process_type\":\"subagent\",\"process_id\":\"sub-1\"}");
    assertThat(lastToolResult(conversation))
        .isEqualTo("subagent sub-1 had already stopped (cancelled).");
    turn(conversation, "call cancel {\"process_type\":\"branch\",\"process_id\":\"b-1\"}");
    assertThat(lastToolResult(conversation))
        .contains("process_type")
        .contains("does not have a value in the enumeration [\"subagent\"]");
  }

  @Test
  void cancellingAnIdleSubagentEndsItsIdleness() throws Exception {
    Conversation conversation = agents.conversation("assistant");
    LinkedBlockingQueue<String> notices = spawn(conversation, "quick job");
    assertThat(notices.poll(10, TimeUnit.SECONDS))
        .isEqualTo("[subagent sub-1 finished] Done: quick job");

    turn(conversation, "call cancel {\"process_type\":\"subagent\",\"process_id\":\"sub-1\"}");
    turn(conversation, "call route {\"worker_id\":\"sub-1\",\"message\":\"More\"}");

    assertThat(toolResults(conversation))
        .contains("subagent sub-1 cancelled")
        .last()
        .asString()
        .contains("\"routed\":false");
  }
}
