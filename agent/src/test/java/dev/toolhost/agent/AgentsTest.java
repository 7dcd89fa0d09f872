package dev.toolhost.agent;

import static dev.toolhost.agent.OfferedTools.names;
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
import dev.toolhost.search.ToolSearch;
import dev.toolhost.testing.RecordedRequest;
import dev.toolhost.testing.ScriptedModelServer;
import dev.toolhost.testing.ScriptedReply;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.JsonNode;

@Timeout(30)
class AgentsTest {

  private final ScriptedModelServer server = ScriptedModelServer.start();
  private final ToolRegistry registry = new ToolRegistry();
  private final ToolProfiles profiles =
      ToolProfiles.of(
          List.of(
              ToolProfile.none("research").withSources(ToolGuides.SOURCE),
              ToolProfile.all("assistant").withoutSources("builtin:secret")));
  private Agents agents;

  /** Lets go of the subagents whose task starts with "hold" (see {@link #scriptSubagents}). */
  private final CountDownLatch release = new CountDownLatch(1);

  AgentsTest() {
    registry.registerAll(new ToolGuides().tools());
    registry.registerAll(MethodTools.of(new Secret(), "builtin:secret"));
  }

  @AfterEach
  void close() {
    release.countDown();
    if (agents != null) {
      agents.close();
    }
    server.close();
  }

  /** A tool that reaches agents with a tool set of its own, as a bridge back to the host would. */
  public static final class Relay {
    private final ToolRegistry registry;
    private final ToolDispatcher dispatcher;

    Relay(ToolRegistry registry, ToolDispatcher dispatcher) {
      this.registry = registry;
      this.dispatcher = dispatcher;
    }

    @Tool(name = "relay", description = "Passes a message to the ping agent.")
    public String relay(String message) {
      return dispatcher
          .dispatch(
              ToolSet.of(registry, ToolProfiles.MAIN),
              ToolCall.of("ping", "{\"message\":\"" + message + "\"}"))
          .text();
    }
  }

  /** A tool only the primary's profile... does not grant either; used to test scoping. */
  public static final class Secret {
    @Tool(name = "launch_codes", description = "Primary-only tool.")
    public String launchCodes() {
      return "0000";
    }
  }

  private ModelEndpoint endpoint(String model) {
    return new ModelEndpoint(server.baseUrl(), model, "KEY");
  }

  private Agents agents(AgentDefinition... definitions) {
    agents =
        Agents.create(List.of(definitions), registry, profiles, ToolDispatcher.create(), Map.of());
    return agents;
  }

  @Test
  void theAgentsGuideNamesEveryToolOfTheFamily() {
    agents(AgentDefinition.of("assistant", endpoint("primary-model")));
    List<String> family = new ArrayList<>(List.of(ToolSearch.TOOL_NAME, ReplyTool.NAME));
    registry.specs().stream()
        .filter(spec -> spec.source().equals(Subagents.SOURCE))
        .forEach(spec -> family.add(spec.name()));
    family.add("set_status");

    assertThat(family).contains("spawn_subagent", "list_subagents", "cancel_subagent");
    assertThat(family).allSatisfy(name -> assertThat(Agents.GUIDE.document()).contains("`" + name));
  }

  @Test
  void aSessionMadeHereIsFoundWithItsAgentUntilTheMostRecentOnesCrowdItOut() {
    agents(AgentDefinition.of("assistant", endpoint("primary-model")));
    Conversation first = agents.conversation("assistant", "session-0");
    assertThat(agents.session("session-0"))
        .hasValueSatisfying(
            session -> {
              assertThat(session.agentName()).isEqualTo("assistant");
              assertThat(session.conversation()).isSameAs(first);
            });
    assertThat(agents.session("never-made")).isEmpty();
    List<Conversation> held = new ArrayList<>();
    for (int i = 1; i <= Agents.SESSIONS_KEPT; i++) {
      held.add(agents.conversation("assistant", "session-" + i));
    }
    assertThat(agents.session("session-0")).isEmpty();
    assertThat(agents.session("session-" + Agents.SESSIONS_KEPT)).isPresent();
    assertThat(held).hasSize(Agents.SESSIONS_KEPT);
  }

  @Test
  void aSpecialistAnswersAsATool() {
    agents(
        AgentDefinition.of("assistant", endpoint("primary-model")),
        AgentDefinition.of("research", endpoint("research-model"))
            .withDescription("Researches a question and answers with sources.")
            .withInstructions("You research.")
            .withProfile("research"));
    server.enqueue(
        ScriptedReply.toolCalls(
            ScriptedReply.call("call_r", "research", "{\"message\":\"Who made Java?\"}")));
    server.enqueue(ScriptedReply.answer("James Gosling, at Sun."));
    server.enqueue(ScriptedReply.answer("Java was made by James Gosling."));

    RunResult result =
        agents
            .agent("assistant")
            .run(agents.conversation("assistant"), "Who made Java?", RunListener.NONE);

    assertThat(result.text()).isEqualTo("Java was made by James Gosling.");
    JsonNode primary = server.takeRequest().json();
    assertThat(names(primary)).contains("research", "launch_codes", "spawn_subagent");
    assertThat(names(primary)).doesNotContain("assistant");
    JsonNode specialist = server.takeRequest().json();
    assertThat(specialist.get("model").asString()).isEqualTo("research-model");
    assertThat(specialist.get("messages").get(0).get("content").asString())
        .isEqualTo("You research.");
    assertThat(specialist.get("messages").get(1).get("content").asString())
        .isEqualTo("Who made Java?");
    assertThat(names(specialist))
        .containsExactlyInAnyOrder("list_tool_guides", "get_tool_guide")
        .doesNotContain("launch_codes", "research");
    JsonNode last = server.takeRequest().json().get("messages");
    assertThat(last.get(last.size() - 1).get("content").asString())
        .isEqualTo("James Gosling, at Sun.");
  }

  @Test
  void anAgentCalledByAnotherRunsWithAtMostItsCallersTools() {
    // The caller may not see launch_codes; the agent it calls may, under its own profile.
    ToolProfiles narrow =
        ToolProfiles.of(
            List.of(ToolProfile.none("caller").withSources(ToolGuides.SOURCE, "agent:keeper")));
    agents =
        Agents.create(
            List.of(
                AgentDefinition.of("caller", endpoint("caller-model")).withProfile("caller"),
                AgentDefinition.of("keeper", endpoint("keeper-model")).withProfile("main")),
            registry,
            narrow,
            ToolDispatcher.create(),
            Map.of());
    server.enqueue(
        ScriptedReply.toolCalls(
            ScriptedReply.call("call_k", "keeper", "{\"message\":\"Read me the codes.\"}")));
    server.enqueue(ScriptedReply.toolCalls(ScriptedReply.call("call_l", "launch_codes", "{}")));
    server.enqueue(ScriptedReply.answer("I cannot reach them."));
    server.enqueue(ScriptedReply.answer("The keeper could not."));

    agents
        .agent("caller")
        .run(agents.conversation("caller"), "Get the launch codes.", RunListener.NONE);

    assertThat(names(server.takeRequest().json())).doesNotContain("launch_codes");
    JsonNode keeper = server.takeRequest().json();
    assertThat(keeper.get("model").asString()).isEqualTo("keeper-model");
    assertThat(names(keeper)).contains("get_tool_guide").doesNotContain("launch_codes");
    JsonNode afterCall = server.takeRequest().json().get("messages");
    String toolResult = afterCall.get(afterCall.size() - 1).get("content").asString();
    assertThat(toolResult).contains("does not exist").doesNotContain("0000");
  }

  @Test
  void anAgentCalledByAnotherNeverSeesItsCaller() {
    agents(
        AgentDefinition.of("ping", endpoint("ping-model")).withProfile("main"),
        AgentDefinition.of("pong", endpoint("pong-model")).withProfile("main"));
    server.enqueue(
        ScriptedReply.toolCalls(ScriptedReply.call("c1", "pong", "{\"message\":\"over\"}")));
    server.enqueue(ScriptedReply.answer("pong done"));
    server.enqueue(ScriptedReply.answer("ping done"));

    agents.agent("ping").run(agents.conversation("ping"), "start", RunListener.NONE);

    assertThat(names(server.takeRequest().json())).contains("pong").doesNotContain("ping");
    // Bounded by ping's tools, which never include ping itself: the cycle cannot be offered.
    assertThat(names(server.takeRequest().json())).doesNotContain("ping", "pong");
  }

  @Test
  void anAgentReachedAgainThroughAnotherToolIsRefusedAsACycle() {
    ToolDispatcher dispatcher = ToolDispatcher.create();
    registry.registerAll(MethodTools.of(new Relay(registry, dispatcher), "builtin:relay"));
    agents =
        Agents.create(
            List.of(AgentDefinition.of("ping", endpoint("ping-model")).withProfile("main")),
            registry,
            profiles,
            dispatcher,
            Map.of());
    server.enqueue(
        ScriptedReply.toolCalls(ScriptedReply.call("c1", "relay", "{\"message\":\"again\"}")));
    server.enqueue(ScriptedReply.answer("ping done"));

    RunResult result =
        agents.agent("ping").run(agents.conversation("ping"), "start", RunListener.NONE);

    assertThat(result.text()).isEqualTo("ping done");
    server.takeRequest();
    JsonNode messages = server.takeRequest().json().get("messages");
    assertThat(messages.get(messages.size() - 1).get("content").asString())
        .contains("ping -> ping")
        .contains("cycle");
  }

  @Test
  void aChainOfAgentsLongerThanTheMaximumDepthIsRefused() {
    agents =
        Agents.create(
            List.of(
                AgentDefinition.of("first", endpoint("first-model")).withProfile("main"),
                AgentDefinition.of("second", endpoint("second-model")).withProfile("main"),
                AgentDefinition.of("third", endpoint("third-model")).withProfile("main")),
            registry,
            profiles,
            ToolDispatcher.create(),
            Map.of(),
            2);
    server.enqueue(
        ScriptedReply.toolCalls(ScriptedReply.call("c1", "second", "{\"message\":\"go\"}")));
    server.enqueue(
        ScriptedReply.toolCalls(ScriptedReply.call("c2", "third", "{\"message\":\"go\"}")));
    server.enqueue(ScriptedReply.answer("second done"));
    server.enqueue(ScriptedReply.answer("first done"));

    agents.agent("first").run(agents.conversation("first"), "start", RunListener.NONE);

    server.takeRequest();
    server.takeRequest();
    JsonNode secondAfter = server.takeRequest().json();
    assertThat(secondAfter.get("model").asString()).isEqualTo("second-model");
    JsonNode messages = secondAfter.get("messages");
    assertThat(messages.get(messages.size() - 1).get("content").asString())
        .contains("first -> second")
        .contains("at most 2");
  }

  /** Tells how long its call has left, with a timeout of its own. */
  public static final class DeadlineProbe {
    @Tool(description = "Tells the time left to this call.", timeoutSeconds = 2)
    public String timeLeft(ToolCall call) {
      return Long.toString(Duration.between(Instant.now(), call.deadline()).toMillis());
    }
  }

  @Test
  void aModelsCallGetsTheToolsOwnTimeout() {
    registry.registerAll(MethodTools.of(new DeadlineProbe(), "builtin:probe"));
    agents(AgentDefinition.of("assistant", endpoint("m")));
    server.enqueue(ScriptedReply.toolCalls(ScriptedReply.call("call_1", "timeLeft", "{}")));
    server.enqueue(ScriptedReply.answer("Done."));

    agents.agent("assistant").run(agents.conversation("assistant"), "How long?", RunListener.NONE);

    server.takeRequest();
    JsonNode messages = server.takeRequest().json().get("messages");
    long left = Long.parseLong(messages.get(messages.size() - 1).get("content").asString());
    // Two seconds from when the call started, not the default sixty.
    assertThat(left).isBetween(0L, 2_000L);
  }

  @Test
  void anAgentAsAToolTakesItsRunTimeoutAndAMarginAsItsOwn() {
    agents(
        AgentDefinition.of("assistant", endpoint("m")),
        AgentDefinition.of("slow", endpoint("slow-model"))
            .withLimits(new RunLimits(5, 5, Duration.ofMinutes(7))));

    assertThat(registry.find("slow").orElseThrow().timeout())
        .hasValue(Duration.ofMinutes(7).plus(Agents.ANSWER_MARGIN));
  }

  @Test
  void anAgentThatSearchesStartsWithTheHostsOwnToolsAndFindsTheRest() {
    agents(AgentDefinition.of("assistant", endpoint("m")).withToolSearch(2));
    server.enqueue(
        ScriptedReply.toolCalls(
            ScriptedReply.call("call_1", "search_tools", "{\"query\": \"launch codes\"}")));
    server.enqueue(ScriptedReply.toolCalls(ScriptedReply.call("call_2", "launch_codes", "{}")));
    server.enqueue(ScriptedReply.answer("The codes are 0000."));
    Conversation conversation = agents.conversation("assistant");

    RunResult result = agents.agent("assistant").run(conversation, "Codes?", RunListener.NONE);

    assertThat(result.text()).isEqualTo("The codes are 0000.");
    JsonNode first = server.takeRequest().json();
    assertThat(names(first))
        .contains("search_tools", "list_tool_guides", "spawn_subagent")
        .doesNotContain("launch_codes");
    JsonNode second = server.takeRequest().json();
    assertThat(names(second)).contains("launch_codes");
    JsonNode messages = server.takeRequest().json().get("messages");
    assertThat(messages.get(messages.size() - 1).get("content").asString()).isEqualTo("0000");
    // Found for the rest of the conversation, after the tools it started with.
    assertThat(conversation.tools().names()).endsWith("launch_codes");
  }

  @Test
  void anAgentThatSearchesNeverStartsWithMoreThanItsProfileAllows() {
    ToolProfile guidesOnly =
        ToolProfile.none("guides_only")
            .withSources("builtin:guides", "builtin:secret")
            .withNames("launch_codes")
            .withoutNames("get_tool_guide");

    ToolProfile starting = Agents.startingProfile(guidesOnly);

    assertThat(starting.allowedSources()).containsExactly("builtin:guides");
    // The tools the profile names are its operator's choice: there from the start.
    assertThat(starting.allowedNames()).containsExactly("launch_codes");
    assertThat(starting.allows("get_tool_guide", "builtin:guides")).isFalse();
    assertThat(starting.allows("anything_else", "builtin:secret")).isFalse();
    assertThat(Agents.startingProfile(ToolProfiles.MAIN).allowedSources())
        .containsExactlyInAnyOrderElementsOf(Agents.STARTING_SOURCES);
    // A restricted profile allows no source: only the tools its extensions grant, by name.
    assertThat(Agents.startingProfile(ToolProfiles.SUBAGENT).allowedSources()).isEmpty();
  }

  @Test
  void aDisabledAgentIsNotOfferedAndACallToItSaysItIsDisabled() {
    agents(
        AgentDefinition.of("assistant", endpoint("m")),
        AgentDefinition.of("web_search", endpoint("m")).withEnabled(false));
    server.enqueue(
        ScriptedReply.toolCalls(
            ScriptedReply.call("call_1", "web_search", "{\"message\":\"news\"}")));
    server.enqueue(ScriptedReply.answer("Cannot search."));

    agents.agent("assistant").run(agents.conversation("assistant"), "News?", RunListener.NONE);

    assertThat(names(server.takeRequest().json())).doesNotContain("web_search");
    JsonNode messages = server.takeRequest().json().get("messages");
    assertThat(messages.get(messages.size() - 1).get("content").asString())
        .contains("'web_search' is disabled");
  }

  @Test
  void aSpecialistThatTakesTooLongIsATimeoutError() {
    agents(
        AgentDefinition.of("assistant", endpoint("m")),
        AgentDefinition.of("slow", endpoint("slow-model"))
            .withLimits(new RunLimits(5, 5, Duration.ofMillis(500))));
    server.respondWith(
        request -> {
          JsonNode json = request.json();
          if (json.get("model").asString().equals("slow-model")) {
            return ScriptedReply.stream().pause(Duration.ofSeconds(20)).done().build();
          }
          return request.lastRole().equals("user")
              ? ScriptedReply.toolCalls(
                  ScriptedReply.call("call_1", "slow", "{\"message\":\"go\"}"))
              : ScriptedReply.answer("It timed out.");
        });

    RunResult result =
        agents.agent("assistant").run(agents.conversation("assistant"), "Go", RunListener.NONE);

    assertThat(result.text()).isEqualTo("It timed out.");
    server.takeRequest();
    server.takeRequest();
    JsonNode messages = server.takeRequest().json().get("messages");
    assertThat(messages.get(messages.size() - 1).get("content").asString())
        .contains("'slow' did not answer within");
  }

  @Test
  void aSpecialistWithItsOwnSchemaGetsItsArguments() {
    JsonNode schema =
        tools.jackson.databind.json.JsonMapper.shared()
            .readTree(
                "{\"type\":\"object\",\"properties\":{\"query\":{\"type\":\"string\"}},"
                    + "\"required\":[\"query\"]}");
    agents(
        AgentDefinition.of("assistant", endpoint("m")),
        AgentDefinition.of("web_search", endpoint("search-model"))
            .withParameters((tools.jackson.databind.node.ObjectNode) schema));
    server.enqueue(
        ScriptedReply.toolCalls(
            ScriptedReply.call("call_1", "web_search", "{\"query\":\"weather Tokyo\"}")));
    server.enqueue(ScriptedReply.answer("72F"));
    server.enqueue(ScriptedReply.answer("It is 72F in Tokyo."));

    agents.agent("assistant").run(agents.conversation("assistant"), "Tokyo?", RunListener.NONE);

    JsonNode tools = server.takeRequest().json().get("tools");
    JsonNode offered = null;
    for (JsonNode tool : tools) {
      if (tool.get("function").get("name").asString().equals("web_search")) {
        offered = tool.get("function").get("parameters");
      }
    }
    assertThat(offered).isEqualTo(schema);
    assertThat(server.takeRequest().json().get("messages").get(0).get("content").asString())
        .contains("weather Tokyo");
  }

  @Test
  void aSubagentRunsInTheBackgroundReportsStatusAndItsResultComesBackAsAMessage() throws Exception {
    agents(AgentDefinition.of("assistant", endpoint("m")));
    server.respondWith(
        request -> {
          List<String> tools = names(request.json());
          boolean subagent = tools.contains("set_status");
          if (subagent) {
            return request.lastRole().equals("user")
                ? ScriptedReply.toolCalls(
                    ScriptedReply.call("call_s", "set_status", "{\"status\":\"halfway\"}"))
                : ScriptedReply.answer("The report is ready.");
          }
          return request.lastRole().equals("user")
              ? ScriptedReply.toolCalls(
                  ScriptedReply.call("call_p", "spawn_subagent", "{\"task\":\"Write the report\"}"))
              : ScriptedReply.answer("I started a subagent.");
        });
    Conversation conversation = agents.conversation("assistant");
    LinkedBlockingQueue<String> notices = new LinkedBlockingQueue<>();
    conversation.onNotice(notices::add);

    RunResult result =
        agents.agent("assistant").run(conversation, "Write a report", RunListener.NONE);

    assertThat(result.text()).isEqualTo("I started a subagent.");
    assertThat(agents.subagents().trackedParents())
        .as("the parent is forgotten when its run ends")
        .isZero();
    String notice = notices.poll(10, TimeUnit.SECONDS);
    assertThat(notice).isEqualTo("[subagent sub-1 finished] The report is ready.");
    assertThat(conversation.drainStatus()).containsExactly("sub-1: halfway");
    assertThat(agents.subagents().list(conversation.sessionId()))
        .singleElement()
        .satisfies(
            info -> {
              assertThat(info.state()).isEqualTo(Subagents.State.FINISHED);
              assertThat(info.status()).isEqualTo("halfway");
            });
    List<RecordedRequest> requests = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      requests.add(server.takeRequest());
    }
    RecordedRequest subagentRequest =
        requests.stream()
            .filter(request -> names(request.json()).contains("set_status"))
            .findFirst()
            .orElseThrow();
    assertThat(names(subagentRequest.json()))
        .doesNotContain("spawn_subagent", "list_subagents", "cancel_subagent");
    // The result joins the history before the next turn.
    server.respondWith(request -> ScriptedReply.answer("Noted."));
    agents.agent("assistant").run(conversation, "Thanks", RunListener.NONE);
    JsonNode messages = server.takeRequest().json().get("messages");
    assertThat(messages.get(messages.size() - 2).get("content").asString())
        .isEqualTo("[subagent sub-1 finished] The report is ready.");
  }

  @Test
  void aStatusUpdateNeverBlocksAndIsDroppedWhenTheBufferIsFull() {
    Conversation conversation =
        Conversation.of("s", dev.toolhost.core.ToolSet.of(registry, ToolProfiles.MAIN));
    for (int i = 0; i < Conversation.STATUS_BUFFER; i++) {
      assertThat(conversation.offerStatus("update " + i)).isTrue();
    }
    assertThat(conversation.offerStatus("one too many")).isFalse();
    assertThat(conversation.drainStatus()).hasSize(Conversation.STATUS_BUFFER);
  }

  @Test
  void aSubagentCanBeCancelled() throws Exception {
    agents(AgentDefinition.of("assistant", endpoint("m")));
    server.respondWith(
        request -> {
          if (names(request.json()).contains("set_status")) {
            return ScriptedReply.stream().pause(Duration.ofSeconds(20)).done().build();
          }
          return ScriptedReply.answer("ok");
        });
    server.enqueue(
        ScriptedReply.toolCalls(
            ScriptedReply.call("call_1", "spawn_subagent", "{\"task\":\"Slow work\"}")));
    Conversation conversation = agents.conversation("assistant");
    LinkedBlockingQueue<String> notices = new LinkedBlockingQueue<>();
    conversation.onNotice(notices::add);
    agents.agent("assistant").run(conversation, "Start", RunListener.NONE);
    // Let the subagent's request take its (endless) reply before the next one is queued.
    while (!names(server.takeRequest().json()).contains("set_status")) {
      // The primary's own requests.
    }
    server.enqueue(
        ScriptedReply.toolCalls(
            ScriptedReply.call("call_2", "cancel_subagent", "{\"id\":\"sub-1\"}")));

    agents.agent("assistant").run(conversation, "Stop it", RunListener.NONE);

    // Within the subagent's 20-second pause: a cancel that did not work would say "finished".
    assertThat(notices.poll(18, TimeUnit.SECONDS)).isEqualTo("[subagent sub-1 was cancelled]");
    assertThat(agents.subagents().list(conversation.sessionId()).getFirst().state())
        .isEqualTo(Subagents.State.CANCELLED);
    assertThat(agents.subagents().trackedParents()).isZero();
  }

  @Test
  void theContextHintJoinsTheSystemPromptOfEveryAgentCalledAsATool() {
    agents(
        AgentDefinition.of("assistant", endpoint("primary")).withInstructions("You help."),
        AgentDefinition.of("research", endpoint("researcher")).withProfile("research"));
    agents.setContextHints(
        message -> message.contains("QBR") ? Optional.of("Service: reports") : Optional.empty());
    server.enqueue(
        ScriptedReply.toolCalls(
            ScriptedReply.call("call_1", "research", "{\"message\":\"Find the QBR\"}")));
    server.enqueue(ScriptedReply.answer("Found."));
    server.enqueue(ScriptedReply.answer("Done."));

    agents
        .agent("assistant")
        .run(agents.conversation("assistant"), "Prepare the QBR", RunListener.NONE);

    JsonNode primary = server.takeRequest().json().get("messages").get(0);
    assertThat(primary.get("content").asString()).isEqualTo("You help.\n\nService: reports");
    JsonNode specialist = server.takeRequest().json().get("messages").get(0);
    assertThat(specialist.get("role").asString()).isEqualTo("system");
    assertThat(specialist.get("content").asString()).isEqualTo("Service: reports");
  }

  /**
   * Scripts a primary that does what the user says ({@code spawn <task>}, {@code cancel <id>}) and
   * subagents that answer {@code Done: <task>} at once, or, when the task starts with {@code hold},
   * once {@link #release} is counted down.
   */
  private void scriptSubagents() {
    AtomicInteger calls = new AtomicInteger();
    server.respondWith(
        request -> {
          JsonNode messages = request.json().get("messages");
          if (names(request.json()).contains("set_status")) {
            String task = messages.get(1).get("content").asString();
            if (task.startsWith("hold")) {
              try {
                release.await(25, TimeUnit.SECONDS);
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            }
            return ScriptedReply.answer("Done: " + task);
          }
          if (!request.lastRole().equals("user")) {
            return ScriptedReply.answer("OK.");
          }
          String[] said = messages.get(messages.size() - 1).get("content").asString().split(" ", 2);
          String id = "call_" + calls.incrementAndGet();
          return switch (said[0]) {
            case "spawn" ->
                ScriptedReply.toolCalls(
                    ScriptedReply.call(id, "spawn_subagent", "{\"task\":\"" + said[1] + "\"}"));
            case "cancel" ->
                ScriptedReply.toolCalls(
                    ScriptedReply.call(id, "cancel_subagent", "{\"id\":\"" + said[1] + "\"}"));
            default -> ScriptedReply.answer("What?");
          };
        });
  }

  private void say(Conversation conversation, String message) {
    agents.agent("assistant").run(conversation, message, RunListener.NONE);
  }

  private static LinkedBlockingQueue<String> notices(Conversation conversation) {
    LinkedBlockingQueue<String> notices = new LinkedBlockingQueue<>();
    conversation.onNotice(notices::add);
    return notices;
  }

  private static String lastToolResult(Conversation conversation) {
    return conversation.history().stream()
        .filter(ChatMessage.ToolMessage.class::isInstance)
        .map(message -> ((ChatMessage.ToolMessage) message).content())
        .reduce((first, second) -> second)
        .orElseThrow();
  }

  private List<String> listed(Conversation conversation) {
    return agents.subagents().list(conversation.sessionId()).stream()
        .map(info -> info.id() + " " + info.state())
        .toList();
  }

  private static List<String> finished(int from, int to) {
    return IntStream.rangeClosed(from, to).mapToObj(i -> "sub-" + i + " FINISHED").toList();
  }

  /** A conversation with the scripted assistant (see {@link #scriptSubagents}), and its notices. */
  private record Parent(Conversation conversation, LinkedBlockingQueue<String> notices) {

    void heard(String notice) throws InterruptedException {
      assertThat(notices.poll(10, TimeUnit.SECONDS)).isEqualTo(notice);
    }
  }

  /** Says "spawn task i" for each i in the range, each subagent heard to finish before the next. */
  private void spawnFinishing(Parent parent, int from, int to) throws InterruptedException {
    for (int i = from; i <= to; i++) {
      say(parent.conversation(), "spawn task " + i);
      parent.heard("[subagent sub-" + i + " finished] Done: task " + i);
    }
  }

  /** The scripted assistant's agents, on first use, and a new conversation with it. */
  private Parent parent() {
    if (agents == null) {
      agents(AgentDefinition.of("assistant", endpoint("m")));
      scriptSubagents();
    }
    Conversation conversation = agents.conversation("assistant");
    return new Parent(conversation, notices(conversation));
  }

  @Test
  void finishedRunsBeyondTheLimitAreForgottenOldestFirst() throws Exception {
    Parent parent = parent();
    int spawned = Subagents.FINISHED_KEPT + 2;

    spawnFinishing(parent, 1, spawned);

    assertThat(listed(parent.conversation())).containsExactlyElementsOf(finished(3, spawned));
  }

  @Test
  void aRunningSubagentIsNeverPruned() throws Exception {
    Parent parent = parent();
    int spawned = Subagents.FINISHED_KEPT + 2;
    say(parent.conversation(), "spawn hold on");

    spawnFinishing(parent, 2, spawned);

    List<String> expected = new ArrayList<>(List.of("sub-1 RUNNING"));
    expected.addAll(finished(3, spawned));
    assertThat(listed(parent.conversation())).containsExactlyElementsOf(expected);
    // The first spawned finishes last: the run that finished longest ago goes, not it.
    release.countDown();
    parent.heard("[subagent sub-1 finished] Done: hold on");
    expected = new ArrayList<>(List.of("sub-1 FINISHED"));
    expected.addAll(finished(4, spawned));
    assertThat(listed(parent.conversation())).containsExactlyElementsOf(expected);
  }

  @Test
  void finishedRunsAreCountedPerParentSession() throws Exception {
    Parent first = parent();
    spawnFinishing(first, 1, 1);
    Parent second = parent();

    spawnFinishing(second, 2, Subagents.FINISHED_KEPT + 2);

    assertThat(listed(first.conversation())).containsExactly("sub-1 FINISHED");
    assertThat(listed(second.conversation()))
        .hasSize(Subagents.FINISHED_KEPT)
        .doesNotContain("sub-2 FINISHED");
  }

  @Test
  void cancellingAForgottenSubagentSaysThereIsNoSuchSubagent() throws Exception {
    Parent parent = parent();
    Conversation conversation = parent.conversation();
    spawnFinishing(parent, 1, Subagents.FINISHED_KEPT + 1);

    say(conversation, "cancel sub-1");
    assertThat(lastToolResult(conversation))
        .contains("there is no subagent 'sub-1' in this conversation; see list_subagents");
    say(conversation, "cancel sub-2");
    assertThat(lastToolResult(conversation))
        .isEqualTo("Subagent sub-2 had already stopped (FINISHED).");
  }

  @Test
  void aSubagentOfAnotherConversationCannotBeCancelled() throws Exception {
    Parent owner = parent();
    say(owner.conversation(), "spawn hold on");
    Conversation other = parent().conversation();

    say(other, "cancel sub-1");

    assertThat(lastToolResult(other))
        .contains("there is no subagent 'sub-1' in this conversation; see list_subagents");
    assertThat(listed(owner.conversation())).containsExactly("sub-1 RUNNING");
    release.countDown();
    owner.heard("[subagent sub-1 finished] Done: hold on");
  }

  @Test
  void aFinishedRunNoLongerHoldsItsParentConversation() throws Exception {
    Parent parent = parent();
    say(parent.conversation(), "spawn hold on");
    Subagents.Run run = agents.subagents().run("sub-1").orElseThrow();
    assertThat(run.holdsParent()).as("a running subagent reports to its parent").isTrue();

    release.countDown();

    parent.heard("[subagent sub-1 finished] Done: hold on");
    assertThat(run.holdsParent()).as("let go before the notice is heard").isFalse();
    assertThat(agents.subagents().run("sub-1")).containsSame(run);
  }

  @Test
  void aParentConversationIsCollectedWhileItsFinishedSubagentsStayListed() throws Exception {
    Parent parent = parent();
    String session = parent.conversation().sessionId();
    spawnFinishing(parent, 1, 1);
    WeakReference<Conversation> collectable = new WeakReference<>(parent.conversation());
    parent = null;

    // The subagent's thread may still be returning from the delivery; collect until it has.
    for (int i = 0; i < 100 && collectable.get() != null; i++) {
      System.gc();
      Thread.sleep(50);
    }

    assertThat(collectable.get()).as("the parent conversation was collected").isNull();
    assertThat(agents.subagents().list(session))
        .singleElement()
        .satisfies(info -> assertThat(info.state()).isEqualTo(Subagents.State.FINISHED));
  }

  @Test
  void closingCancelsEveryRunningSubagentAndWaitsForIt() throws Exception {
    Parent parent = parent();
    say(parent.conversation(), "spawn hold on");
    say(parent.conversation(), "spawn hold on too");
    List<Subagents.Run> running =
        List.of(
            agents.subagents().run("sub-1").orElseThrow(),
            agents.subagents().run("sub-2").orElseThrow());

    agents.close();

    assertThat(running)
        .allSatisfy(
            run -> {
              assertThat(run.thread.isAlive()).isFalse();
              assertThat(run.state).isEqualTo(Subagents.State.CANCELLED);
              assertThat(run.holdsParent()).isFalse();
            });
    assertThat(parent.notices())
        .containsExactlyInAnyOrder(
            "[subagent sub-1 was cancelled]", "[subagent sub-2 was cancelled]");
  }
}
