package dev.toolhost.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.core.MethodTools;
import dev.toolhost.core.Param;
import dev.toolhost.core.Tool;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolSet;
import dev.toolhost.testing.ScriptedModelServer;
import dev.toolhost.testing.ScriptedReply;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import tools.jackson.databind.JsonNode;

@Timeout(30)
class TextToolCallsTest {

  private final ScriptedModelServer server = ScriptedModelServer.start();
  private final ToolRegistry registry = new ToolRegistry();
  private final Weather weather = new Weather();
  private final ModelClient client =
      ModelClient.builder(new ModelEndpoint(server.baseUrl(), "qwen2.5:7b", "KEY"))
          .environment(Map.of())
          .build();

  TextToolCallsTest() {
    registry.registerAll(MethodTools.of(weather, "builtin:weather"));
  }

  @AfterEach
  void close() {
    client.close();
    server.close();
  }

  /** A tool that records the cities it is asked about. */
  public static final class Weather {
    final List<String> cities = Collections.synchronizedList(new ArrayList<>());

    @Tool(name = "get_weather", description = "Current weather in a city.")
    public String getWeather(@Param(description = "City") String city) {
      cities.add(city);
      return "Sunny in " + city;
    }
  }

  private RunResult run(boolean textToolCalls, String modelText) {
    server.enqueue(ScriptedReply.answer(modelText));
    server.enqueue(ScriptedReply.answer("It is sunny."));
    Agent agent =
        new Agent(
            AgentDefinition.of("assistant", client.endpoint()).withTextToolCalls(textToolCalls),
            client,
            ToolDispatcher.create());
    return agent.run(
        Conversation.of("session-1", ToolSet.of(registry, ToolProfiles.MAIN)),
        "Weather in Paris?",
        RunListener.NONE);
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        // Qwen, Hermes
        "Let me look.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\":"
            + " \"Paris\"}}\n</tool_call>",
        // A bare JSON object
        "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}",
        // Its arguments as a string of JSON, in a code fence
        "```json\n{\"name\": \"get_weather\", \"arguments\": \"{\\\"city\\\": \\\"Paris\\\"}\"}\n```",
        // Llama 3.x, tagged and bare
        "<|python_tag|>{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}<|eom_id|>",
        "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}",
        // Mistral, both forms
        "[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}]",
        "[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Paris\"}"
      })
  void aToolCallWrittenAsTextRunsAndItsResultReachesTheModel(String modelText) {
    RunResult result = run(true, modelText);

    assertThat(result.stop()).isEqualTo(RunResult.Stop.COMPLETED);
    assertThat(result.text()).isEqualTo("It is sunny.");
    assertThat(weather.cities).containsExactly("Paris");
    server.takeRequest();
    JsonNode messages = server.takeRequest().json().path("messages");
    JsonNode assistant = messages.get(messages.size() - 2);
    JsonNode call = assistant.path("tool_calls").get(0);
    assertThat(call.path("function").path("name").asString()).isEqualTo("get_weather");
    JsonNode tool = messages.get(messages.size() - 1);
    assertThat(tool.path("role").asString()).isEqualTo("tool");
    assertThat(tool.path("tool_call_id").asString()).isEqualTo(call.path("id").asString());
    assertThat(tool.path("content").asString()).isEqualTo("Sunny in Paris");
  }

  @Test
  void severalCallsInOneAnswerAllRun() {
    RunResult result =
        run(
            true,
            "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}"
                + "</tool_call>\n<tool_call>{\"name\": \"get_weather\", \"arguments\":"
                + " {\"city\": \"Oslo\"}}</tool_call>");

    assertThat(result.text()).isEqualTo("It is sunny.");
    assertThat(weather.cities).containsExactlyInAnyOrder("Paris", "Oslo");
  }

  @Test
  void aMalformedCallGoesBackToTheModelAsAnError() {
    RunResult result =
        run(true, "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": </tool_call>");

    assertThat(result.text()).isEqualTo("It is sunny.");
    assertThat(weather.cities).isEmpty();
    server.takeRequest();
    JsonNode messages = server.takeRequest().json().path("messages");
    String error = messages.get(messages.size() - 1).path("content").asString();
    assertThat(error)
        .contains("could not be read")
        .contains("<tool_call>{\"name\": \"tool_name\", \"arguments\": {...}}</tool_call>");
  }

  @Test
  void aCallWithBadArgumentsIsAnsweredByTheDispatchPathsValidation() {
    RunResult result =
        run(
            true,
            "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"town\": \"Paris\"}}</tool_call>");

    assertThat(result.text()).isEqualTo("It is sunny.");
    assertThat(weather.cities).isEmpty();
    server.takeRequest();
    JsonNode messages = server.takeRequest().json().path("messages");
    assertThat(messages.get(messages.size() - 1).path("content").asString()).contains("city");
  }

  @Test
  void withTheOptionOffTextStaysText() {
    RunResult result =
        run(
            false,
            "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}</tool_call>");

    assertThat(result.text()).startsWith("<tool_call>");
    assertThat(weather.cities).isEmpty();
  }

  @Test
  void jsonDataThatNamesNoOfferedToolIsAnAnswer() {
    assertThat(
            TextToolCalls.parse(
                "{\"name\": \"Paris\", \"arguments\": {\"population\": 2100000}}",
                Set.of("get_weather")))
        .isEmpty();
    assertThat(TextToolCalls.parse("The weather is fine.", Set.of("get_weather"))).isEmpty();
  }

  @Test
  void theTextAroundABlockStaysTheAnswersText() {
    TextToolCalls.Parsed parsed =
        TextToolCalls.parse(
                "Checking.\n<tool_call>{\"name\": \"get_weather\", \"arguments\": {}}</tool_call>",
                Set.of())
            .orElseThrow();
    assertThat(parsed.text()).isEqualTo(Optional.of("Checking."));
    assertThat(parsed.calls()).hasSize(1);
    assertThat(parsed.calls().getFirst().call().arguments()).isEqualTo("{}");
  }
}
