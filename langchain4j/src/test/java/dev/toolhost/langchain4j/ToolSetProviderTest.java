package dev.toolhost.langchain4j;

import static org.assertj.core.api.Assertions.assertThat;

import dev.langchain4j.memory.chat.MessageWindowChatMemory;
import dev.langchain4j.model.chat.request.json.JsonObjectSchema;
import dev.langchain4j.model.chat.request.json.JsonRawSchema;
import dev.langchain4j.model.openai.OpenAiChatModel;
import dev.langchain4j.service.AiServices;
import dev.langchain4j.service.MemoryId;
import dev.langchain4j.service.UserMessage;
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
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * Runs a real LangChain4j {@code AiServices} agent, on LangChain4j's OpenAI chat model, against the
 * scripted model server, with its tools offered by a {@link ToolSetProvider}.
 */
@Timeout(30)
class ToolSetProviderTest {

  /** A schema with keywords outside LangChain4j's typed schemas: bounds, formats, $defs, $ref. */
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

  ToolSetProviderTest() {
    registry.registerAll(MethodTools.of(weather, "builtin:weather"));
    registry.register(
        new ToolSpec("book_room", "Books a hotel room.", BOOKING_SCHEMA, "builtin:hotel"),
        (call, arguments) -> ToolResult.success("booked"));
    // The subagent profile denies this source: the agent below must not see the tool.
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

  interface Assistant {
    String chat(@MemoryId String user, @UserMessage String message);
  }

  private Assistant assistant() {
    OpenAiChatModel chatModel =
        OpenAiChatModel.builder()
            .baseUrl(model.baseUrl().toString())
            .apiKey("test-key")
            .modelName("gpt-test")
            .timeout(Duration.ofSeconds(10))
            .maxRetries(0)
            .build();
    return AiServices.builder(Assistant.class)
        .chatModel(chatModel)
        .chatMemoryProvider(id -> MessageWindowChatMemory.withMaxMessages(20))
        .toolProvider(ToolSetProvider.of(ToolSet.of(registry, ToolProfiles.SUBAGENT), dispatcher))
        .build();
  }

  @Test
  void aToolTheModelCallsRunsThroughTheDispatcherAndTheAgentAnswers() {
    model
        .enqueue(
            ScriptedReply.toolCalls(
                ScriptedReply.call("call_1", "forecast", "{\"city\": \"Lyon\", \"days\": 2}")))
        .enqueue(ScriptedReply.answer("It will be sunny in Lyon."));

    String answer = assistant().chat("alice", "Weather in Lyon for two days?");

    assertThat(answer).isEqualTo("It will be sunny in Lyon.");
    model.takeRequest();
    JsonNode toolMessage = lastMessage(model.takeRequest());
    assertThat(toolMessage.path("role").asString()).isEqualTo("tool");
    assertThat(toolMessage.path("tool_call_id").asString()).isEqualTo("call_1");
    assertThat(toolMessage.path("content").asString()).isEqualTo("Sunny in Lyon for 2 days");
    // The chat memory id is the call's session id.
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

    String answer = assistant().chat("alice", "Weather in Lyon for two days?");

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

    String answer = assistant().chat("alice", "A table, please.");

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

    String answer = assistant().chat("alice", "A quote, please.");

    assertThat(answer).isEqualTo("The quote timed out.");
    model.takeRequest();
    assertThat(lastMessage(model.takeRequest()).path("content").asString())
        .startsWith("Tool 'slow_quote' did not finish before its deadline and was stopped.");
    assertThat(invocations("slow_quote", "timeout")).isEqualTo(1);
  }

  @Test
  void aToolRegisteredDuringARunIsOfferedFromTheNextModelRequestOn() {
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
        .enqueue(ScriptedReply.answer("Alerts are installed."));

    assistant().chat("alice", "Install the alerts.");

    assertThat(model.takeRequest().json().path("tools").findValuesAsString("name"))
        .doesNotContain("alerts");
    assertThat(model.takeRequest().json().path("tools").findValuesAsString("name"))
        .contains("alerts");
  }

  @Test
  void theToolListSentToTheModelHoldsEachToolsNameDescriptionAndSchema() {
    model.enqueue(ScriptedReply.answer("Nothing to do."));

    assistant().chat("alice", "Hello");

    JsonNode tools = model.takeRequest().json().path("tools");
    assertThat(tools.findValuesAsString("name"))
        .as("the subagent profile's tools, without the denied one")
        .containsExactly("book_room", "forecast");
    JsonNode booking = tools.get(0).path("function");
    assertThat(booking.path("description").asString()).isEqualTo("Books a hotel room.");
    // LangChain4j's OpenAI model sends a top-level additionalProperties only in strict mode; the
    // dispatcher enforces it all the same. Everything else arrives exactly as written.
    ObjectNode expected = BOOKING_SCHEMA.deepCopy();
    expected.remove("additionalProperties");
    assertThat(booking.path("parameters")).isEqualTo(expected);
    assertThat(booking.has("strict")).isFalse();
    JsonNode forecast = tools.get(1).path("function");
    assertThat(forecast.path("description").asString())
        .isEqualTo("Returns the forecast for a city.");
    ObjectNode generated = registry.find("forecast").orElseThrow().spec().parameters();
    generated.remove("additionalProperties");
    assertThat(forecast.path("parameters")).isEqualTo(generated);
  }

  @Test
  void anArgumentTheSchemaForbidsButTheFrameworkDoesNotSendIsStillRefused() {
    model
        .enqueue(
            ScriptedReply.toolCalls(
                ScriptedReply.call(
                    "call_1", "forecast", "{\"city\": \"Lyon\", \"days\": 2, \"units\": \"C\"}")))
        .enqueue(ScriptedReply.answer("Retrying without units."));

    assistant().chat("alice", "Weather in Lyon?");

    model.takeRequest();
    assertThat(lastMessage(model.takeRequest()).path("content").asString())
        .startsWith("The arguments for tool 'forecast' do not match its parameters schema:")
        .contains("units");
    assertThat(weather.sessions).isEmpty();
  }

  @Test
  void aBooleanSchemaBecomesItsObjectForm() {
    ObjectNode schema =
        (ObjectNode)
            JsonMapper.shared()
                .readTree(
                    "{\"type\": \"object\", \"properties\": {\"anything\": true, \"nothing\": false}}");

    JsonObjectSchema parameters =
        ToolSetProvider.specification(new ToolSpec("probe", "Probes.", schema, "builtin:test"))
            .parameters();

    assertThat(parameters.properties())
        .containsEntry("anything", JsonRawSchema.from("{}"))
        .containsEntry("nothing", JsonRawSchema.from("{\"not\": {}}"));
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
