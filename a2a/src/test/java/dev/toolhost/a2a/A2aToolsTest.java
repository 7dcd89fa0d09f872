package dev.toolhost.a2a;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolException;
import dev.toolhost.core.ToolResult;
import dev.toolhost.memory.InProcessWorkingMemory;
import dev.toolhost.search.ServiceIndex;
import dev.toolhost.search.ServiceKind;
import dev.toolhost.search.ServiceMatch;
import dev.toolhost.web.OutboundHttp;
import dev.toolhost.web.OutboundPolicy;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The client tools against a local agent that speaks the spec's A2A 1.0 JSON (no streaming, so
 * invoke_agent sends and polls) and against Toolhost's own server (which streams): answers in time,
 * input-required as an actionable result, a late answer in working memory and announced, cancel
 * reaching the remote task, credentials sent only where configured, and the service index.
 */
@Timeout(60)
class A2aToolsTest {

  private SpecV10Agent agent;
  private OutboundHttp http;
  private ServiceIndex index;
  private InProcessWorkingMemory memory;
  private A2aTools tools;
  private final List<LateAnswer> announced = new CopyOnWriteArrayList<>();

  private A2aConfig.RemoteAgent billing() {
    return new A2aConfig.RemoteAgent(
        "billing", agent.base(), Optional.of("BILLING_TOKEN"), "Authorization", "Bearer");
  }

  @BeforeEach
  void start() throws Exception {
    agent = new SpecV10Agent();
    http = OutboundHttp.start(OutboundPolicy.defaults().allowingHost("127.0.0.1"));
    index = new ServiceIndex();
    memory = new InProcessWorkingMemory();
    tools =
        tools(
            Map.of(
                "billing",
                new A2aConfig.RemoteAgent(
                    "billing",
                    agent.base(),
                    Optional.of("BILLING_TOKEN"),
                    "Authorization",
                    "Bearer")));
  }

  private A2aTools tools(Map<String, A2aConfig.RemoteAgent> agents) {
    return tools(agents, A2aTools.MAX_WATCHED);
  }

  private A2aTools tools(Map<String, A2aConfig.RemoteAgent> agents, int maxWatched) {
    A2aClient client = new A2aClient(http);
    AgentDirectory directory =
        new AgentDirectory(
            agents,
            client,
            Duration.ofMinutes(5),
            Map.of("BILLING_TOKEN", "s3cret-token"),
            Optional.of(index),
            Clock.systemUTC());
    A2aTools made =
        new A2aTools(directory, client, A2aConfig.of(agents), Optional.of(memory), maxWatched);
    made.onLateAnswer(announced::add);
    return made;
  }

  @AfterEach
  void stop() throws Exception {
    tools.close();
    http.close();
    agent.close();
    memory.close();
  }

  private String call(String tool, String arguments) throws Exception {
    return call(tool, arguments, ToolCall.of(tool, arguments).withSessionId("s1"));
  }

  private String call(String tool, String arguments, ToolCall call) throws Exception {
    ExecutableTool found =
        tools.tools().stream().filter(t -> t.name().equals(tool)).findFirst().orElseThrow();
    ToolResult result =
        found.executor().execute(call, dev.toolhost.a2a.A2aWire.JSON.readTree(arguments));
    return ((ToolResult.Success) result).content();
  }

  private static final String DISPATCHED = "Task dispatched to agent 'billing' with task_id: ";

  /**
   * Asks billing, which keeps working, with a one-second wait: the answer says the task was
   * dispatched.
   */
  private String dispatch(String message) throws Exception {
    agent.pollsToFinish = 1_000_000;
    String answer =
        call(
            "invoke_agent",
            "{\"agent_name\": \"billing\", \"message\": \""
                + message
                + "\", \"timeout_seconds\": 1}");
    assertThat(answer).startsWith(DISPATCHED);
    return answer;
  }

  /** The task id a dispatched answer names. */
  private static String taskId(String answer) {
    return answer.substring(DISPATCHED.length(), answer.indexOf(". It is"));
  }

  @Test
  void listAndDetailsShowTheCardAndItsSkills() throws Exception {
    String list = call("list_known_agents", "{}");
    assertThat(list)
        .contains(
            "\"agent_name\" : \"billing\"", "invoice-lookup", "Answers questions about invoices");
    assertThat(call("list_known_agents", "{\"skill\": \"refund-only\"}")).isEqualTo("[ ]");
    assertThat(call("list_known_agents", "{\"skill\": \"invoices\"}")).contains("billing");
    String details = call("get_agent_details", "{\"agent_name\": \"billing\"}");
    assertThat(details)
        .contains("\"protocol_version\" : \"1.0\"", "Is invoice 42 paid?", "\"streaming\" : false");
    assertThat(agent.requests).isEmpty();
  }

  @Test
  void knownAgentsAreFoundBySearchingTheirSkillsAndExamples() throws Exception {
    call("get_agent_details", "{\"agent_name\": \"billing\"}");
    List<ServiceMatch> found = index.search("is my invoice paid", 5);
    assertThat(found).isNotEmpty();
    assertThat(found.get(0).service().id()).isEqualTo("billing");
    assertThat(found.get(0).service().kind()).isEqualTo(ServiceKind.AGENT);
    assertThat(index.searchResults("invoice").toString()).contains("\"type\":\"a2a\"");
  }

  @Test
  void anAgentWhoseCardHasNoDescriptionIsSummarisedFromItsSkills() throws Exception {
    agent.description = "";

    call("get_agent_details", "{\"agent_name\": \"billing\"}");

    assertThat(index.find(ServiceKind.AGENT, "billing").orElseThrow().summary())
        .isEqualTo("Agent billing: Invoice lookup: Finds an invoice and says whether it is paid.");
  }

  @Test
  void aTaskThatEndsInTimeAnswersItsTextOverVersion10WithTheCredential() throws Exception {
    agent.pollsToFinish = 2;
    String answer =
        call(
            "invoke_agent",
            "{\"agent_name\": \"billing\", \"message\": \"Is invoice 42 paid?\", \"skill\": \"invoice-lookup\"}");
    assertThat(answer).isEqualTo("Invoice 42 is paid. (Is invoice 42 paid?)");
    assertThat(agent.requests)
        .extracting(SpecV10Agent.Seen::method)
        .containsExactly("SendMessage", "GetTask", "GetTask");
    SpecV10Agent.Seen send = agent.requests.get(0);
    assertThat(send.headers())
        .containsEntry("a2a-version", "1.0")
        .containsEntry("authorization", "Bearer s3cret-token");
    assertThat(send.params().path("message").path("role").asString()).isEqualTo("ROLE_USER");
    assertThat(send.params().path("configuration").path("returnImmediately").asBoolean()).isTrue();
    assertThat(send.params().path("metadata").path("skill").asString()).isEqualTo("invoice-lookup");
  }

  @Test
  void inputRequiredComesBackAsWhatToDoNext() throws Exception {
    String answer =
        call("invoke_agent", "{\"agent_name\": \"billing\", \"message\": \"Refund my account\"}");
    assertThat(answer).contains("input-required", "Which account do you mean?", "task_id '");
    String taskId =
        answer.substring(
            answer.indexOf("task_id '") + 9, answer.indexOf("'", answer.indexOf("task_id '") + 9));
    String followUp =
        call(
            "invoke_agent",
            "{\"agent_name\": \"billing\", \"message\": \"The one ending 42\", \"task_id\": \""
                + taskId
                + "\"}");
    assertThat(followUp).startsWith("Invoice 42 is paid.");
    assertThat(
            agent
                .requests
                .get(agent.requests.size() - 2)
                .params()
                .path("message")
                .path("taskId")
                .asString())
        .isEqualTo(taskId);
  }

  @Test
  void aLateAnswerIsStoredUnderTheSessionAndAnnounced() throws Exception {
    String answer = dispatch("Audit all invoices");
    String taskId = taskId(answer);
    String key = LateAnswer.key("s1", "billing", taskId);
    assertThat(answer).contains(key);
    assertThat(memory.get(key)).isEmpty();
    agent.pollsToFinish = 1;
    await().atMost(Duration.ofSeconds(15)).until(() -> memory.get(key).isPresent());
    assertThat(memory.get(key).orElseThrow().value()).startsWith("Invoice 42 is paid.");
    await().atMost(Duration.ofSeconds(5)).until(() -> !announced.isEmpty());
    assertThat(announced.get(0).key()).isEqualTo(key);
    assertThat(announced.get(0).state()).isEqualTo(TaskState.COMPLETED);
    assertThat(announced.get(0).notice()).contains("billing", taskId, key);
  }

  @Test
  void lateAnswersAreAwaitedForAtMostTheBoundAndATaskPastItIsCancelled() throws Exception {
    tools.close();
    tools = tools(Map.of("billing", billing()), 1);
    dispatch("Audit");
    assertThat(tools.watching()).isEqualTo(1);

    assertThatThrownBy(
            () ->
                call(
                    "invoke_agent",
                    "{\"agent_name\": \"billing\", \"message\": \"Audit more\","
                        + " \"timeout_seconds\": 1}"))
        .isInstanceOf(ToolException.class)
        .hasMessageContaining("already awaits 1 late answers")
        .hasMessageContaining("the task was cancelled");
    assertThat(tools.watching()).isEqualTo(1);
    await()
        .atMost(Duration.ofSeconds(5))
        .untilAsserted(
            () ->
                assertThat(agent.requests)
                    .extracting(SpecV10Agent.Seen::method)
                    .contains("CancelTask"));
  }

  @Test
  void aTaskTheAgentForgetsStillGetsALateAnswerNamingItsError() throws Exception {
    String taskId = taskId(dispatch("Audit"));
    String key = LateAnswer.key("s1", "billing", taskId);
    agent.forgetTasks();

    await().atMost(Duration.ofSeconds(15)).until(() -> memory.get(key).isPresent());
    assertThat(memory.get(key).orElseThrow().value())
        .contains("Agent 'billing' answered error -32001", taskId);
    await().atMost(Duration.ofSeconds(5)).until(() -> !announced.isEmpty());
    assertThat(announced.get(0).key()).isEqualTo(key);
    assertThat(tools.watching()).isZero();
  }

  @Test
  void cancelReachesTheRemoteTaskAndAFinishedOneSaysSo() throws Exception {
    String taskId = taskId(dispatch("Audit"));
    String cancelled =
        call("cancel_agent_task", "{\"agent_name\": \"billing\", \"task_id\": \"" + taskId + "\"}");
    assertThat(cancelled).contains("canceled");
    assertThat(agent.requests).extracting(SpecV10Agent.Seen::method).contains("CancelTask");
    assertThatThrownBy(
            () -> call("cancel_agent_task", "{\"agent_name\": \"billing\", \"task_id\": \"nope\"}"))
        .isInstanceOf(ToolException.class)
        .hasMessageContaining("knows no task 'nope'");
  }

  @Test
  void anUnknownAgentIsNamedWithTheKnownOnes() {
    assertThatThrownBy(
            () -> call("invoke_agent", "{\"agent_name\": \"payroll\", \"message\": \"hi\"}"))
        .isInstanceOf(ToolException.class)
        .hasMessageContaining("Unknown agent 'payroll'")
        .hasMessageContaining("billing");
  }

  @Test
  void anUnknownSkillIsNamedWithTheAgentsSkills() {
    assertThatThrownBy(
            () ->
                call(
                    "invoke_agent",
                    "{\"agent_name\": \"billing\", \"message\": \"hi\", \"skill\": \"payroll\"}"))
        .isInstanceOf(ToolException.class)
        .hasMessageContaining("no skill 'payroll'")
        .hasMessageContaining("invoice-lookup");
  }

  @Test
  void toolhostsClientStreamsFromToolhostsServer() throws Exception {
    // The card names the server's public URL, known once the local server listens: its routes
    // reach the A2A server made then.
    java.util.concurrent.atomic.AtomicReference<A2aServer> served =
        new java.util.concurrent.atomic.AtomicReference<>();
    List<dev.toolhost.core.spi.Route> routes =
        List.of(
            new dev.toolhost.core.spi.Route(
                "GET",
                "/a2a/{agent}/.well-known/agent-card.json",
                r -> served.get().routes().get(0).handler().answer(r)),
            new dev.toolhost.core.spi.Route(
                "POST", "/a2a/{agent}", r -> served.get().routes().get(1).handler().answer(r)));
    try (RouteServer live = new RouteServer(routes)) {
      served.set(
          new A2aServer(
              new A2aConfig.Server(live.base(), 10, Duration.ofSeconds(5)),
              name ->
                  name.equals("echo")
                      ? Optional.of(new A2aServer.Published("echo", "Echoes.", "main", List.of()))
                      : Optional.empty(),
              (name, context, principal, message) -> "echo: " + message));
      tools.close();
      tools =
          tools(
              Map.of(
                  "echo", A2aConfig.RemoteAgent.of("echo", URI.create(live.base() + "/a2a/echo"))));
      String details = call("get_agent_details", "{\"agent_name\": \"echo\"}");
      assertThat(details).contains("\"protocol_version\" : \"1.0\"", "\"streaming\" : true");
      assertThat(call("invoke_agent", "{\"agent_name\": \"echo\", \"message\": \"hello\"}"))
          .isEqualTo("echo: hello");
    } finally {
      served.get().close();
    }
  }

  @Test
  void theGuideNamesEveryTool() {
    assertThat(tools.tools())
        .extracting(ExecutableTool::name)
        .containsExactlyInAnyOrder(
            "list_known_agents", "get_agent_details", "invoke_agent", "cancel_agent_task")
        .allSatisfy(name -> assertThat(A2aTools.GUIDE.document()).contains("`" + name));
    assertThat(tools.tools()).allSatisfy(t -> assertThat(t.spec().source()).isEqualTo("a2a"));
  }

  @Test
  void aCardIsCachedUntilItsRefreshTimeThenFetchedAgainAndKeptWhenTheAgentIsDown()
      throws Exception {
    java.util.concurrent.atomic.AtomicReference<java.time.Instant> now =
        new java.util.concurrent.atomic.AtomicReference<>(
            java.time.Instant.parse("2026-11-25T10:00:00Z"));
    Clock clock =
        new Clock() {
          @Override
          public java.time.ZoneId getZone() {
            return java.time.ZoneOffset.UTC;
          }

          @Override
          public Clock withZone(java.time.ZoneId zone) {
            return this;
          }

          @Override
          public java.time.Instant instant() {
            return now.get();
          }
        };
    AgentDirectory directory =
        new AgentDirectory(
            Map.of("billing", A2aConfig.RemoteAgent.of("billing", agent.base())),
            new A2aClient(http),
            Duration.ofMinutes(5),
            Map.of(),
            Optional.empty(),
            clock);
    AgentCard first = directory.card("billing");
    assertThat(directory.card("billing")).isSameAs(first);
    now.set(now.get().plus(Duration.ofMinutes(6)));
    AgentCard second = directory.card("billing");
    assertThat(second).isNotSameAs(first);
    assertThat(directory.lastSeen("billing")).contains(now.get());
    agent.close();
    now.set(now.get().plus(Duration.ofMinutes(6)));
    assertThat(directory.card("billing")).isSameAs(second);
  }

  @Test
  void authRequiredAndFailedTasksSayWhatTheModelCanDo() {
    A2aTask auth =
        new A2aTask(
            "t9",
            "c",
            TaskState.AUTH_REQUIRED,
            Optional.of(A2aMessage.agent("Sign in to the ledger first.", "t9", "c")),
            List.of());
    assertThat(A2aTools.answer("billing", auth))
        .contains("auth-required", "Sign in to the ledger first.", "a2a.agents.billing.auth_env");
    A2aTask failed =
        auth.with(TaskState.FAILED, Optional.of(A2aMessage.agent("Ledger down.", "t9", "c")));
    assertThat(A2aTools.answer("billing", failed))
        .isEqualTo("Agent 'billing' failed task t9: Ledger down.");
  }
}
