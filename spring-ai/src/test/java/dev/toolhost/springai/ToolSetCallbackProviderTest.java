package dev.toolhost.springai;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.MethodTools;
import dev.toolhost.core.Param;
import dev.toolhost.core.Tool;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolException;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import dev.toolhost.core.ToolSpec;
import dev.toolhost.core.ToolTelemetry;
import dev.toolhost.testing.RecordedRequest;
import dev.toolhost.testing.ScriptedModelServer;
import dev.toolhost.testing.ScriptedReply;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.data.LongPointData;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.chat.memory.ChatMemory;
import org.springframework.ai.openai.OpenAiChatModel;
import org.springframework.ai.openai.OpenAiChatOptions;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * Runs a real Spring AI {@link ChatClient}, on Spring AI's OpenAI chat model built by hand (no
 * Spring Boot), against the scripted model server, with its tools offered by a {@link
 * ToolSetCallbackProvider}.
 */
@Timeout(30)
class ToolSetCallbackProviderTest {

  /** A schema with more than types: bounds, formats, $defs, $ref. */
  private static final ObjectNode BOOKING_SCHEMA =
      (ObjectNode)
          JsonMapper.shared()
              .readTree(
                  """
                  {
                    "type": "object",
                    "description": "A room to book.",
                    "properties": {
                      "room": {"$ref": "#/$defs/room"},
                      "nights": {"type": "integer", "minimum": 1, "maximum": 14,
                                 "description": "How many nights."},
                      "guest_email": {"type": "string", "format": "email",
                                      "pattern": "^[^@]+@[^@]+$"},
                      "extras": {"type": "array", "uniqueItems": true,
                                 "items": {"type": "string", "enum": ["breakfast", "parking"]}}
                    },
                    "required": ["room", "nights"],
                    "additionalProperties": false,
                    "$defs": {
                      "room": {"type": "object", "required": ["floor"],
                               "properties": {"floor": {"type": "integer"},
                                              "view": {"type": "string", "enum": ["sea", "city"]}}}
                    }
                  }
                  """);

  private final InMemoryMetricReader metrics = InMemoryMetricReader.create();
  private final OpenTelemetrySdk otel =
      OpenTelemetrySdk.builder()
          .setMeterProvider(SdkMeterProvider.builder().registerMetricReader(metrics).build())
          .build();
  private final ToolRegistry registry = new ToolRegistry();
  private final ToolDispatcher dispatcher = ToolDispatcher.builder().openTelemetry(otel).build();
  private final ScriptedModelServer model = ScriptedModelServer.start();
  private final Weather weather = new Weather();

  ToolSetCallbackProviderTest() {
    registry.registerAll(MethodTools.of(weather, "builtin:weather"));
    registry.register(
        new ToolSpec("book_room", "Books a hotel room.", BOOKING_SCHEMA, "builtin:hotel"),
        (call, arguments) -> ToolResult.success("booked"));
    // The subagent profile denies this source: the client below must not see the tool.
    registry.register(
        new ToolSpec("spawn_subagent", "Starts a subagent.", BOOKING_SCHEMA, "subagent"),
        (call, arguments) -> ToolResult.success("spawned"));
  }

  @AfterEach
  void close() {
    model.close();
    otel.close();
  }

  /** A Toolhost tool, written as a user writes one. */
  public static final class Weather {
    final List<Optional<String>> sessions = new CopyOnWriteArrayList<>();

    @Tool(description = "Returns the forecast for a city.", readOnly = true)
    public String forecast(
        @Param(description = "The city's name.") String city,
        @Param(description = "How many days ahead.") int days,
        ToolCall call) {
      sessions.add(call.sessionId());
      return "Sunny in " + city + " for " + days + " days";
    }
  }

  /** Asks the client the question, with the set's tools and the user as the conversation. */
  private String chat(String user, String question) {
    OpenAiChatModel chatModel =
        OpenAiChatModel.builder()
            .options(
                OpenAiChatOptions.builder()
                    .baseUrl(model.baseUrl().toString())
                    .apiKey("test-key")
                    .model("gpt-test")
                    .timeout(Duration.ofSeconds(10))
                    .maxRetries(0)
                    .build())
            .build();
    return ChatClient.create(chatModel)
        .prompt()
        .user(question)
        .tools(ToolSetCallbackProvider.of(ToolSet.of(registry, ToolProfiles.SUBAGENT), dispatcher))
        .toolContext(Map.of(ChatMemory.CONVERSATION_ID, user))
        .call()
        .content();
  }

  @Test
  void aToolTheModelCallsRunsThroughTheDispatcherAndTheClientAnswers() {
    model
        .enqueue(
            ScriptedReply.toolCalls(
                ScriptedReply.call("call_1", "forecast", "{\"city\": \"Lyon\", \"days\": 2}")))
        .enqueue(ScriptedReply.answer("It will be sunny in Lyon."));

    String answer = chat("alice", "Weather in Lyon for two days?");

    assertThat(answer).isEqualTo("It will be sunny in Lyon.");
    model.takeRequest();
    JsonNode toolMessage = lastMessage(model.takeRequest());
    assertThat(toolMessage.path("role").asString()).isEqualTo("tool");
    assertThat(toolMessage.path("tool_call_id").asString()).isEqualTo("call_1");
    assertThat(toolMessage.path("content").asString()).isEqualTo("Sunny in Lyon for 2 days");
    // The conversation id in the tool context is the call's session id.
    assertThat(weather.sessions).containsExactly(Optional.of("alice"));
    assertThat(invocations("forecast", "ok")).isEqualTo(1);
  }

  @Test
  void anInvalidArgumentComesBackAsTheToolErrorTheModelReads() {
    model
        .enqueue(
            ScriptedReply.toolCalls(
                ScriptedReply.call(
                    "call_1", "forecast", "{\"city\": \"Lyon\", \"days\": \"two\"}")))
        .enqueue(ScriptedReply.answer("I will ask again with a number."));

    String answer = chat("alice", "Weather in Lyon for two days?");

    assertThat(answer).isEqualTo("I will ask again with a number.");
    model.takeRequest();
    JsonNode toolMessage = lastMessage(model.takeRequest());
    assertThat(toolMessage.path("role").asString()).isEqualTo("tool");
    assertThat(toolMessage.path("tool_call_id").asString()).isEqualTo("call_1");
    assertThat(toolMessage.path("content").asString())
        .startsWith("The arguments for tool 'forecast' do not match its parameters schema:")
        .contains("days");
    assertThat(weather.sessions).isEmpty();
    assertThat(invocations("forecast", "invalid_arguments")).isEqualTo(1);
    assertThat(invocations("forecast", "ok")).isZero();
  }

  @Test
  void aToolThatFailsAnswersWithItsErrorAndTheRunGoesOn() {
    registry.register(
        new ToolSpec("reserve_table", "Reserves a table.", BOOKING_SCHEMA, "builtin:hotel"),
        (call, arguments) -> {
          throw new ToolException(
              ErrorCode.UNAVAILABLE, "The booking system is down; try again in a minute.");
        });
    model
        .enqueue(
            ScriptedReply.toolCalls(
                ScriptedReply.call(
                    "call_1", "reserve_table", "{\"room\": {\"floor\": 1}, \"nights\": 1}")))
        .enqueue(ScriptedReply.answer("The booking system is down."));

    String answer = chat("alice", "A table, please.");

    assertThat(answer).isEqualTo("The booking system is down.");
    model.takeRequest();
    assertThat(lastMessage(model.takeRequest()).path("content").asString())
        .isEqualTo("The booking system is down; try again in a minute.");
    assertThat(invocations("reserve_table", "unavailable")).isEqualTo(1);
  }

  @Test
  void aCallTakesTheToolsOwnTimeout() {
    registry.register(
        ExecutableTool.of(
                new ToolSpec(
                    "slow_quote", "Quotes a price, slowly.", BOOKING_SCHEMA, "builtin:hotel"),
                (call, arguments) -> {
                  Thread.sleep(Duration.ofSeconds(20));
                  return ToolResult.success("too late");
                })
            .withTimeout(Duration.ofMillis(300)));
    model
        .enqueue(
            ScriptedReply.toolCalls(
                ScriptedReply.call(
                    "call_1", "slow_quote", "{\"room\": {\"floor\": 1}, \"nights\": 1}")))
        .enqueue(ScriptedReply.answer("The quote timed out."));

    String answer = chat("alice", "A quote, please.");

    assertThat(answer).isEqualTo("The quote timed out.");
    model.takeRequest();
    assertThat(lastMessage(model.takeRequest()).path("content").asString())
        .startsWith("Tool 'slow_quote' did not finish before its deadline and was stopped.");
    assertThat(invocations("slow_quote", "timeout")).isEqualTo(1);
  }

  @Test
  void aToolRegisteredDuringACallIsOfferedFromTheNextCallOn() {
    registry.register(
        new ToolSpec(
            "install_alerts", "Installs the alerts tool.", BOOKING_SCHEMA, "builtin:hotel"),
        (call, arguments) -> {
          registry.register(
              new ToolSpec("alerts", "Lists weather alerts.", BOOKING_SCHEMA, "builtin:weather"),
              (alertsCall, alertsArguments) -> ToolResult.success("none"));
          return ToolResult.success("installed");
        });
    model
        .enqueue(
            ScriptedReply.toolCalls(
                ScriptedReply.call(
                    "call_1", "install_alerts", "{\"room\": {\"floor\": 1}, \"nights\": 1}")))
        .enqueue(ScriptedReply.answer("Alerts are installed."))
        .enqueue(ScriptedReply.answer("No alerts."));

    chat("alice", "Install the alerts.");
    chat("alice", "Any alerts?");

    // Spring AI resolves a call's callbacks once, when the call starts.
    model.takeRequest();
    assertThat(model.takeRequest().json().path("tools").findValuesAsString("name"))
        .doesNotContain("alerts");
    assertThat(model.takeRequest().json().path("tools").findValuesAsString("name"))
        .contains("alerts");
  }

  @Test
  void theToolListSentToTheModelHoldsEachToolsNameDescriptionAndSchema() {
    model.enqueue(ScriptedReply.answer("Nothing to do."));

    chat("alice", "Hello");

    JsonNode tools = model.takeRequest().json().path("tools");
    assertThat(tools.findValuesAsString("name"))
        .as("the subagent profile's tools, without the denied one")
        .containsExactly("book_room", "forecast");
    JsonNode booking = tools.get(0).path("function");
    assertThat(booking.path("description").asString()).isEqualTo("Books a hotel room.");
    assertThat(booking.path("parameters")).isEqualTo(BOOKING_SCHEMA);
    JsonNode forecast = tools.get(1).path("function");
    assertThat(forecast.path("description").asString())
        .isEqualTo("Returns the forecast for a city.");
    assertThat(forecast.path("parameters"))
        .isEqualTo(registry.find("forecast").orElseThrow().spec().parameters());
  }

  @Test
  void anArgumentOutsideTheSchemaIsRefusedBeforeTheToolRuns() {
    model
        .enqueue(
            ScriptedReply.toolCalls(
                ScriptedReply.call(
                    "call_1", "forecast", "{\"city\": \"Lyon\", \"days\": 2, \"units\": \"C\"}")))
        .enqueue(ScriptedReply.answer("Retrying without units."));

    chat("alice", "Weather in Lyon?");

    model.takeRequest();
    assertThat(lastMessage(model.takeRequest()).path("content").asString())
        .startsWith("The arguments for tool 'forecast' do not match its parameters schema:")
        .contains("units");
    assertThat(weather.sessions).isEmpty();
  }

  private static JsonNode lastMessage(RecordedRequest request) {
    JsonNode messages = request.json().path("messages");
    return messages.get(messages.size() - 1);
  }

  /** The dispatcher's count of calls of the tool with the status, from its OpenTelemetry meter. */
  private long invocations(String tool, String status) {
    return metrics.collectAllMetrics().stream()
        .filter(metric -> metric.getName().equals(ToolTelemetry.INVOCATIONS_METRIC))
        .map(MetricData::getLongSumData)
        .flatMap(sum -> sum.getPoints().stream())
        .filter(
            point ->
                tool.equals(point.getAttributes().get(AttributeKey.stringKey("tool_name")))
                    && status.equals(point.getAttributes().get(AttributeKey.stringKey("status"))))
        .mapToLong(LongPointData::getValue)
        .sum();
  }
}
