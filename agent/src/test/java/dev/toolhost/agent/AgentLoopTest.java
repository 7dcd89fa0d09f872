package dev.toolhost.agent;

import static dev.toolhost.agent.OfferedTools.names;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.MethodTools;
import dev.toolhost.core.Param;
import dev.toolhost.core.Tool;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolGuides;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import dev.toolhost.core.ToolSpec;
import dev.toolhost.testing.ScriptedModelServer;
import dev.toolhost.testing.ScriptedReply;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

@Timeout(30)
class AgentLoopTest {

  private final ScriptedModelServer server = ScriptedModelServer.start();
  private final ToolRegistry registry = new ToolRegistry();
  private final Weather weather = new Weather();
  private final ModelClient client =
      ModelClient.builder(new ModelEndpoint(server.baseUrl(), "gpt-loop", "KEY"))
          .environment(Map.of())
          .build();
  private final ToolDispatcher dispatcher = ToolDispatcher.create();

  AgentLoopTest() {
    registry.registerAll(new ToolGuides().tools());
    registry.registerAll(MethodTools.of(weather, "builtin:weather"));
  }

  @AfterEach
  void close() {
    client.close();
    server.close();
  }

  /** Local tools that record the calls they get. */
  public static final class Weather {
    final List<ToolCall> calls = Collections.synchronizedList(new ArrayList<>());
    volatile CountDownLatch together = new CountDownLatch(0);

    @Tool(name = "get_weather", description = "Current weather in a city.")
    public String getWeather(ToolCall call, @Param(description = "City") String city)
        throws InterruptedException {
      calls.add(call);
      together.countDown();
      if (!together.await(5, TimeUnit.SECONDS)) {
        throw new IllegalStateException("the other call never ran alongside");
      }
      return "Sunny in " + city;
    }

    @Tool(name = "wait_forever", description = "Never returns.")
    public String waitForever() throws InterruptedException {
      Thread.sleep(Duration.ofMinutes(10));
      return "never";
    }
  }

  private Agent agent(RunLimits limits) {
    return new Agent(
        AgentDefinition.of("assistant", client.endpoint())
            .withInstructions("You are helpful.")
            .withLimits(limits),
        client,
        dispatcher);
  }

  private Conversation conversation() {
    return Conversation.of("session-1", ToolSet.of(registry, ToolProfiles.MAIN));
  }

  @Test
  void localToolCallRoundTripsInTheWireFormat() {
    server.enqueue(
        ScriptedReply.toolCalls(
            ScriptedReply.call("call_1", "get_weather", "{\"city\":\"Paris\"}")));
    server.enqueue(ScriptedReply.answer("It is sunny in Paris."));
    Conversation conversation = conversation();

    RunResult result = agent(RunLimits.DEFAULT).run(conversation, "Weather?", RunListener.NONE);

    assertThat(result.stop()).isEqualTo(RunResult.Stop.COMPLETED);
    assertThat(result.text()).isEqualTo("It is sunny in Paris.");
    assertThat(result.steps()).isEqualTo(2);
    JsonNode first = server.takeRequest().json();
    assertThat(first.get("messages").get(0).get("role").asString()).isEqualTo("system");
    assertThat(names(first)).contains("get_weather", "list_tool_guides");
    JsonNode messages = server.takeRequest().json().get("messages");
    assertThat(messages).hasSize(4);
    JsonNode assistant = messages.get(2);
    assertThat(assistant.get("role").asString()).isEqualTo("assistant");
    assertThat(assistant.get("tool_calls").get(0).get("id").asString()).isEqualTo("call_1");
    assertThat(assistant.get("tool_calls").get(0).get("function").get("arguments").asString())
        .isEqualTo("{\"city\":\"Paris\"}");
    JsonNode tool = messages.get(3);
    assertThat(tool.get("role").asString()).isEqualTo("tool");
    assertThat(tool.get("tool_call_id").asString()).isEqualTo("call_1");
    assertThat(tool.get("content").asString()).isEqualTo("Sunny in Paris");
    ToolCall call = weather.calls.getFirst();
    assertThat(call.model()).contains("gpt-loop");
    assertThat(call.agent()).contains("assistant");
    assertThat(call.sessionId()).contains("session-1");
    assertThat(call.callId()).isEqualTo("call_1");
    assertThat(conversation.history()).hasSize(4);
  }

  @Test
  void callsOfOneTurnRunConcurrently() {
    weather.together = new CountDownLatch(2);
    server.enqueue(
        ScriptedReply.toolCalls(
            ScriptedReply.call("call_1", "get_weather", "{\"city\":\"Paris\"}"),
            ScriptedReply.call("call_2", "get_weather", "{\"city\":\"Oslo\"}")));
    server.enqueue(ScriptedReply.answer("Both sunny."));

    RunResult result = agent(RunLimits.DEFAULT).run(conversation(), "Weather?", RunListener.NONE);

    assertThat(result.text()).isEqualTo("Both sunny.");
    server.takeRequest();
    JsonNode messages = server.takeRequest().json().get("messages");
    assertThat(messages.get(3).get("content").asString()).isEqualTo("Sunny in Paris");
    assertThat(messages.get(4).get("content").asString()).isEqualTo("Sunny in Oslo");
  }

  @Test
  void unknownToolGetsAnErrorResultNamingTheClosestTools() {
    server.enqueue(
        ScriptedReply.toolCalls(ScriptedReply.call("call_1", "get_wether", "{\"city\":\"Rome\"}")));
    server.enqueue(ScriptedReply.answer("Sorry."));

    agent(RunLimits.DEFAULT).run(conversation(), "Weather?", RunListener.NONE);

    server.takeRequest();
    String content = server.takeRequest().json().get("messages").get(3).get("content").asString();
    assertThat(content).contains("'get_wether' does not exist").contains("get_weather");
  }

  @Test
  void toolErrorsGoBackToTheModelAsResults() {
    server.enqueue(ScriptedReply.toolCalls(ScriptedReply.call("call_1", "get_weather", "{}")));
    server.enqueue(ScriptedReply.answer("I need a city."));

    RunResult result = agent(RunLimits.DEFAULT).run(conversation(), "Weather?", RunListener.NONE);

    assertThat(result.stop()).isEqualTo(RunResult.Stop.COMPLETED);
    server.takeRequest();
    assertThat(server.takeRequest().json().get("messages").get(3).get("content").asString())
        .contains("do not match its parameters schema");
  }

  @Test
  void aToolWhoseNameOpenAiRefusesIsOfferedUnderAStableAliasThatReachesIt() {
    String longName = "mcp.weather." + "forecast_for_the_whole_week_ahead_".repeat(3);
    AtomicReference<String> reached = new AtomicReference<>();
    registry.register(
        new ToolSpec(longName, "Forecast.", objectSchema(), "mcp:weather"),
        (call, arguments) -> {
          reached.set(call.toolName());
          return ToolResult.success("Rain all week.");
        });
    String alias =
        ToolAliases.of(List.of(registry.find(longName).get().spec()))
            .wireTools()
            .getFirst()
            .get("function")
            .get("name")
            .asString();
    assertThat(alias).matches("[A-Za-z0-9_-]{1,64}").startsWith("mcp_weather_forecast");
    server.enqueue(ScriptedReply.toolCalls(ScriptedReply.call("call_1", alias, "{}")));
    server.enqueue(ScriptedReply.answer("Rain."));

    agent(RunLimits.DEFAULT).run(conversation(), "Forecast?", RunListener.NONE);

    assertThat(names(server.takeRequest().json())).contains(alias).doesNotContain(longName);
    assertThat(reached.get()).isEqualTo(longName);
    assertThat(ToolAliases.of(List.of(registry.find(longName).get().spec())).toolName(alias))
        .isEqualTo(longName);
  }

  @Test
  void maxStepsForcesAnAnswerAndThenStops() {
    server.respondWith(
        request ->
            ScriptedReply.toolCalls(
                ScriptedReply.call("call_" + server.requestCount(), "list_tool_guides", "{}")));

    RunResult result =
        agent(new RunLimits(3, 30, Duration.ofSeconds(20)))
            .run(conversation(), "Loop forever", RunListener.NONE);

    assertThat(result.stop()).isEqualTo(RunResult.Stop.MAX_STEPS);
    assertThat(result.steps()).isEqualTo(3);
    assertThat(server.takeRequest().json().get("tool_choice").asString()).isEqualTo("auto");
    server.takeRequest();
    assertThat(server.takeRequest().json().get("tool_choice").asString()).isEqualTo("none");
  }

  @Test
  void callsPastTheToolCallLimitAreRefusedWithAnErrorResult() {
    server.enqueue(
        ScriptedReply.toolCalls(
            ScriptedReply.call("call_1", "list_tool_guides", "{}"),
            ScriptedReply.call("call_2", "list_tool_guides", "{}")));
    server.enqueue(ScriptedReply.answer("Done."));

    List<ToolResult> results = Collections.synchronizedList(new ArrayList<>());

    RunResult result =
        agent(new RunLimits(5, 1, Duration.ofSeconds(20)))
            .run(
                conversation(),
                "Guides?",
                new RunListener() {
                  @Override
                  public void onToolResult(ToolCall call, ToolResult toolResult) {
                    results.add(toolResult);
                  }
                });

    assertThat(result.toolCalls()).isEqualTo(1);
    assertThat(results)
        .filteredOn(ToolResult::isError)
        .singleElement()
        .satisfies(
            refused -> {
              ErrorCode code = ((ToolResult.Failure) refused).error().code();
              assertThat(code).isEqualTo(ErrorCode.CANCELLED);
              assertThat(code.retryable()).isFalse();
            });
    server.takeRequest();
    JsonNode second = server.takeRequest().json();
    assertThat(second.get("messages").get(4).get("content").asString())
        .contains("used its 1 tool calls");
    assertThat(second.get("tool_choice").asString()).isEqualTo("none");
  }

  @Test
  void theContextHintJoinsTheSystemPromptOfEachRequestOfTheTurnAndNotTheHistory() {
    List<String> asked = Collections.synchronizedList(new ArrayList<>());
    Agent agent =
        agent(RunLimits.DEFAULT)
            .withContextHints(
                message -> {
                  asked.add(message);
                  return message.contains("weather")
                      ? Optional.of("Relevant services: weather-desk (forecasts).")
                      : Optional.empty();
                });
    server.enqueue(
        ScriptedReply.toolCalls(
            ScriptedReply.call("call_1", "get_weather", "{\"city\":\"Paris\"}")));
    server.enqueue(ScriptedReply.answer("Sunny."));
    server.enqueue(ScriptedReply.answer("Hello."));
    Conversation conversation = conversation();

    agent.run(conversation, "What is the weather?", RunListener.NONE);
    agent.run(conversation, "Thanks", RunListener.NONE);

    String hinted = "You are helpful.\n\nRelevant services: weather-desk (forecasts).";
    assertThat(server.takeRequest().json().get("messages").get(0).get("content").asString())
        .isEqualTo(hinted);
    assertThat(server.takeRequest().json().get("messages").get(0).get("content").asString())
        .isEqualTo(hinted);
    assertThat(server.takeRequest().json().get("messages").get(0).get("content").asString())
        .isEqualTo("You are helpful.");
    assertThat(asked).containsExactly("What is the weather?", "Thanks");
    assertThat(conversation.history())
        .noneMatch(message -> message instanceof ChatMessage.SystemMessage);
  }

  @Test
  void theDeadlineStopsRunningToolsAndLeavesAValidHistory() {
    server.enqueue(ScriptedReply.toolCalls(ScriptedReply.call("call_1", "wait_forever", "{}")));
    Conversation conversation = conversation();
    long start = System.nanoTime();

    RunResult result =
        agent(new RunLimits(5, 5, Duration.ofSeconds(1)))
            .run(conversation, "Wait", RunListener.NONE);

    assertThat(result.stop()).isEqualTo(RunResult.Stop.TIMEOUT);
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
    List<ChatMessage> history = conversation.history();
    assertThat(history.getLast())
        .isInstanceOfSatisfying(
            ChatMessage.ToolMessage.class,
            tool -> assertThat(tool.toolCallId()).isEqualTo("call_1"));
  }

  @Test
  void cancellingStopsTheStream() throws Exception {
    server.enqueue(
        ScriptedReply.stream().text("Thinking").pause(Duration.ofSeconds(30)).done().build());
    AtomicReference<RunResult> result = new AtomicReference<>();
    List<String> text = Collections.synchronizedList(new ArrayList<>());
    Thread turn =
        Thread.ofVirtual()
            .start(
                () ->
                    result.set(
                        agent(RunLimits.DEFAULT)
                            .run(
                                conversation(),
                                "Think",
                                new RunListener() {
                                  @Override
                                  public void onText(String delta) {
                                    text.add(delta);
                                  }
                                })));
    server.takeRequest();
    await().atMost(Duration.ofSeconds(10)).until(() -> !text.isEmpty());

    turn.interrupt();
    turn.join(Duration.ofSeconds(5));

    assertThat(turn.isAlive()).isFalse();
    assertThat(result.get().stop()).isEqualTo(RunResult.Stop.CANCELLED);
  }

  @Test
  void replyToolIsBoundForTheTurnAndRefusedAfterIt() {
    List<String> channel = Collections.synchronizedList(new ArrayList<>());
    server.enqueue(
        ScriptedReply.toolCalls(ScriptedReply.call("call_1", "reply", "{\"content\":\"On it.\"}")));
    server.enqueue(ScriptedReply.answer("Done."));
    Conversation conversation = conversation();
    ReplyTool reply = new ReplyTool(channel::add);

    agent(RunLimits.DEFAULT).run(conversation, "Hi", RunListener.NONE, List.of(reply.tool()));
    reply.close();

    assertThat(channel).containsExactly("On it.");
    assertThat(names(server.takeRequest().json())).contains("reply");
    assertThat(conversation.tools().names()).doesNotContain("reply");
    ToolResult late =
        dispatcher.dispatch(
            conversation.tools(), ToolCall.of("reply", "{\"content\":\"Too late\"}"));
    assertThat(late.isError()).isTrue();
    ToolSet elsewhere = ToolSet.of(registry, ToolProfiles.MAIN);
    elsewhere.add(reply.tool());
    ToolResult stale =
        dispatcher.dispatch(elsewhere, ToolCall.of("reply", "{\"content\":\"Stale\"}"));
    assertThat(stale.text()).contains("has closed");
    assertThat(channel).containsExactly("On it.");
  }

  private static ObjectNode objectSchema() {
    ObjectNode schema = JsonNodeFactory.instance.objectNode().put("type", "object");
    schema.putObject("properties");
    return schema;
  }
}
