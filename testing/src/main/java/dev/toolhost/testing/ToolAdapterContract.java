package dev.toolhost.testing;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.MethodTools;
import dev.toolhost.core.Param;
import dev.toolhost.core.Tool;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolException;
import dev.toolhost.core.ToolProfile;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import dev.toolhost.core.ToolSpec;
import dev.toolhost.core.ToolTelemetry;
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
 * The adapter contract is what every adapter of a tool set to an agent framework (LangChain4j,
 * Spring AI) must show, written once: subclass it, and run the framework's own agent on its own
 * OpenAI chat model against the {@link ScriptedModelServer} in {@link #chat}, offering {@link
 * #toolSet()} through the adapter with {@link #dispatcher}.
 *
 * <p>The contract: a call the model makes runs through the dispatcher (measured, validated against
 * the tool's schema, bound by the tool's own timeout) and its result or error is what the model
 * reads next; the user's conversation is the call's session; the model is offered the set's tools
 * with their names, descriptions and schemas, and not a tool the profile denies; a tool registered
 * during a call is offered from the next call on at the latest. The few ways a framework differs
 * are the hooks {@link #schemaAsSent} and {@link #offersToolsRegisteredDuringACall}.
 */
@Timeout(30)
public abstract class ToolAdapterContract {

  /** A schema with more than types: bounds, formats, $defs, $ref. */
  protected static final ObjectNode BOOKING_SCHEMA =
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

  /** The tools; the subagent profile of it is offered. */
  protected final ToolRegistry registry = new ToolRegistry();

  /** The dispatcher the adapter must run every call through; it counts calls by status. */
  protected final ToolDispatcher dispatcher = ToolDispatcher.builder().openTelemetry(otel).build();

  /** The model the framework talks to. */
  protected final ScriptedModelServer model = ScriptedModelServer.start();

  private final Weather weather = new Weather();

  protected ToolAdapterContract() {
    registry.registerAll(MethodTools.of(weather, "builtin:weather"));
    registry.register(
        new ToolSpec("book_room", "Books a hotel room.", BOOKING_SCHEMA, "builtin:hotel"),
        (call, arguments) -> ToolResult.success("booked"));
    // The subagent profile denies this source: the framework's agent must not see the tool.
    registry.register(
        new ToolSpec("spawn_subagent", "Starts a subagent.", BOOKING_SCHEMA, "subagent"),
        (call, arguments) -> ToolResult.success("spawned"));
  }

  /**
   * Asks the framework's agent the question, on a chat model at {@link #model}'s base URL with a
   * timeout of 10 s and no retries, offering {@link #toolSet()} through the adapter, with the user
   * as the framework's conversation (memory) id; returns its answer.
   */
  protected abstract String chat(String user, String question);

  /**
   * The parameters schema the framework sends for a tool that declares {@code declared}; a copy may
   * be changed. By default exactly the declared one.
   */
  protected ObjectNode schemaAsSent(ObjectNode declared) {
    return declared;
  }

  /**
   * Whether a tool registered while a call runs is offered from the call's next model request (the
   * framework asks the adapter before each request) rather than from the next call only.
   */
  protected abstract boolean offersToolsRegisteredDuringACall();

  /**
   * The tool set the adapter offers: the registry through the subagent profile opened to every
   * source, as an operator's profile would (its source denial still holds).
   */
  protected final ToolSet toolSet() {
    return ToolSet.of(registry, ToolProfiles.SUBAGENT.withSources(ToolProfile.ANY_SOURCE));
  }

  @AfterEach
  void closeModelAndTelemetry() {
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

  @Test
  void aToolTheModelCallsRunsThroughTheDispatcherAndTheAgentAnswers() {
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
    // The user's conversation id is the call's session id.
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
                  // Slow on purpose: the tool's timeout, not its work, is under test.
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
  void aToolRegisteredDuringACallIsOfferedFromTheNextCallOnAtTheLatest() {
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

    assertThat(toolNames(model.takeRequest())).doesNotContain("alerts");
    List<String> sameCall = toolNames(model.takeRequest());
    if (offersToolsRegisteredDuringACall()) {
      assertThat(sameCall).contains("alerts");
    } else {
      assertThat(sameCall).doesNotContain("alerts");
    }
    assertThat(toolNames(model.takeRequest())).contains("alerts");
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
    assertThat(booking.path("parameters")).isEqualTo(schemaAsSent(BOOKING_SCHEMA.deepCopy()));
    JsonNode forecast = tools.get(1).path("function");
    assertThat(forecast.path("description").asString())
        .isEqualTo("Returns the forecast for a city.");
    assertThat(forecast.path("parameters"))
        .isEqualTo(schemaAsSent(registry.find("forecast").orElseThrow().spec().parameters()));
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

  /** The last message of a request the model received. */
  protected static JsonNode lastMessage(RecordedRequest request) {
    JsonNode messages = request.json().path("messages");
    return messages.get(messages.size() - 1);
  }

  private static List<String> toolNames(RecordedRequest request) {
    return request.json().path("tools").findValuesAsString("name");
  }

  /** The dispatcher's count of calls of the tool with the status, from its OpenTelemetry meter. */
  protected final long invocations(String tool, String status) {
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
