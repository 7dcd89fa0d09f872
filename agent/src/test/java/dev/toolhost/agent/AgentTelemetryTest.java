package dev.toolhost.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import dev.toolhost.core.MethodTools;
import dev.toolhost.core.RecordedTelemetry;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolSet;
import dev.toolhost.testing.ScriptedModelServer;
import dev.toolhost.testing.ScriptedReply;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.metrics.data.HistogramPointData;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The agent loop's spans and metrics, on a real OpenTelemetry SDK, against a model server that
 * answers in the OpenAI streaming format, with the usage chunk {@code stream_options.include_usage}
 * asks for.
 */
@Timeout(30)
class AgentTelemetryTest {

  private static final AttributeKey<Long> INPUT_TOKENS =
      AttributeKey.longKey("gen_ai.usage.input_tokens");
  private static final AttributeKey<Long> OUTPUT_TOKENS =
      AttributeKey.longKey("gen_ai.usage.output_tokens");

  private final ScriptedModelServer server = ScriptedModelServer.start();
  private final RecordedTelemetry telemetry = RecordedTelemetry.start();
  private final InMemorySpanExporter spans = telemetry.spans();
  private final InMemoryMetricReader metrics = telemetry.metrics();
  private final OpenTelemetrySdk openTelemetry = telemetry.sdk();
  private final ToolRegistry registry = new ToolRegistry();
  private final ModelClient client =
      ModelClient.builder(new ModelEndpoint(server.baseUrl(), "gpt-observed", "KEY"))
          .environment(Map.of())
          .build();
  private final ToolDispatcher dispatcher =
      ToolDispatcher.builder().openTelemetry(openTelemetry).build();

  AgentTelemetryTest() {
    registry.registerAll(MethodTools.of(new AgentLoopTest.Weather(), "builtin:weather"));
  }

  @AfterEach
  void close() {
    client.close();
    server.close();
    openTelemetry.close();
  }

  private RunResult run(String message) {
    return new Agent(AgentDefinition.of("assistant", client.endpoint()), client, dispatcher)
        .run(
            Conversation.of("session-9", ToolSet.of(registry, ToolProfiles.MAIN)),
            message,
            RunListener.NONE);
  }

  /** The model's first step: a call of get_weather for Oslo, up to its finish. */
  private static ScriptedReply.StreamBuilder weatherCall() {
    return ScriptedReply.stream()
        .toolCallStart(0, "call_1", "get_weather")
        .toolCallArguments(0, "{\"city\":\"Oslo\"}")
        .finish("tool_calls");
  }

  // A tool call, then an answer, each with its own usage.
  private void enqueueTwoSteps() {
    server.enqueue(weatherCall().usage(100, 7).done().build());
    server.enqueue(
        ScriptedReply.stream().text("Sunny in Oslo.").finish("stop").usage(130, 9).done().build());
  }

  private SpanData run() {
    return spans.getFinishedSpanItems().stream()
        .filter(span -> span.getName().equals("invoke_agent assistant"))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no run span in " + spans));
  }

  private List<SpanData> chats() {
    return spans.getFinishedSpanItems().stream()
        .filter(span -> span.getName().equals("chat gpt-observed"))
        .toList();
  }

  private MetricData metric(String name) {
    return metrics.collectAllMetrics().stream()
        .filter(data -> data.getName().equals(name))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no metric " + name));
  }

  private List<HistogramPointData> points(String metricName) {
    return metrics.collectAllMetrics().stream()
        .filter(metric -> metric.getName().equals(metricName))
        .flatMap(metric -> metric.getHistogramData().getPoints().stream())
        .toList();
  }

  private List<HistogramPointData> tokenUsagePoints() {
    return points("gen_ai.client.token.usage");
  }

  // What every measurement of a model request is tagged with; the scripted server answers as the
  // model asked for.
  private Attributes requestTags() {
    return Attributes.builder()
        .put("gen_ai.operation.name", "chat")
        .put("gen_ai.provider.name", "openai")
        .put("gen_ai.request.model", "gpt-observed")
        .put("server.address", server.baseUrl().getHost())
        .put("server.port", (long) server.baseUrl().getPort())
        .build();
  }

  private Attributes tokenTags(String tokenType) {
    return requestTags().toBuilder()
        .put("gen_ai.response.model", "gpt-observed")
        .put("gen_ai.token.type", tokenType)
        .build();
  }

  private List<HistogramPointData> durationPoints() {
    return points("gen_ai.client.operation.duration");
  }

  @Test
  void aChatSpanCarriesTheInputAndOutputTokenCountsTheServerReported() {
    server.enqueue(
        ScriptedReply.stream().text("Sunny in Oslo.").finish("stop").usage(321, 12).done().build());

    RunResult result = run("Weather?");

    assertThat(result.stop()).isEqualTo(RunResult.Stop.COMPLETED);
    SpanData chat = chats().getFirst();
    assertThat(chat.getAttributes().get(INPUT_TOKENS)).isEqualTo(321L);
    assertThat(chat.getAttributes().get(OUTPUT_TOKENS)).isEqualTo(12L);
    assertThat(
            chat.getAttributes().get(AttributeKey.stringArrayKey("gen_ai.response.finish_reasons")))
        .containsExactly("stop");
  }

  @Test
  void aRunSpanCarriesTheSumOverItsModelRequestsAndSoDoesItsResult() {
    enqueueTwoSteps();

    RunResult result = run("Weather in Oslo?");

    assertThat(result.stop()).isEqualTo(RunResult.Stop.COMPLETED);
    assertThat(result.steps()).isEqualTo(2);
    assertThat(result.usage()).contains(new TokenUsage(230, 16));
    assertThat(chats())
        .extracting(
            chat -> chat.getAttributes().get(INPUT_TOKENS),
            chat -> chat.getAttributes().get(OUTPUT_TOKENS))
        .containsExactly(tuple(100L, 7L), tuple(130L, 9L));
    assertThat(run().getAttributes().get(INPUT_TOKENS)).isEqualTo(230L);
    assertThat(run().getAttributes().get(OUTPUT_TOKENS)).isEqualTo(16L);
  }

  @Test
  void theTokenUsageHistogramRecordsInputAndOutputTaggedWithTheRequestAndTheModelThatAnswered() {
    enqueueTwoSteps();

    run("Weather in Oslo?");

    MetricData metric = metric("gen_ai.client.token.usage");
    assertThat(metric.getUnit()).isEqualTo("{token}");
    assertThat(metric.getInstrumentationScopeInfo().getName()).isEqualTo("dev.toolhost.agent");
    List<HistogramPointData> points = List.copyOf(metric.getHistogramData().getPoints());
    assertThat(points).hasSize(2);
    HistogramPointData input =
        points.stream()
            .filter(point -> point.getAttributes().equals(tokenTags("input")))
            .findFirst()
            .orElseThrow(() -> new AssertionError("no input point in " + points));
    HistogramPointData output =
        points.stream()
            .filter(point -> point.getAttributes().equals(tokenTags("output")))
            .findFirst()
            .orElseThrow(() -> new AssertionError("no output point in " + points));
    // One record per model request: two requests, two records of each type.
    assertThat(input.getCount()).isEqualTo(2);
    assertThat(input.getSum()).isEqualTo(230.0);
    assertThat(input.getMin()).isEqualTo(100.0);
    assertThat(input.getMax()).isEqualTo(130.0);
    assertThat(output.getCount()).isEqualTo(2);
    assertThat(output.getSum()).isEqualTo(16.0);
    // The buckets are the ones the GenAI conventions advise.
    assertThat(input.getBoundaries())
        .containsExactly(
            1.0,
            4.0,
            16.0,
            64.0,
            256.0,
            1024.0,
            4096.0,
            16384.0,
            65536.0,
            262144.0,
            1048576.0,
            4194304.0,
            16777216.0,
            67108864.0);
    // Nothing the user, the model or a tool said is on a metric.
    assertThat(points.toString())
        .doesNotContain("Weather")
        .doesNotContain("Oslo")
        .doesNotContain("Sunny");
  }

  @Test
  void aChatSpanNamesTheCompletionAndTheModelThatAnswered() {
    server.answerAs("gpt-observed-2026-01-01");
    server.enqueue(ScriptedReply.answer("Sunny."));

    run("Weather?");

    assertThat(chats().getFirst().getAttributes().asMap())
        .containsEntry(AttributeKey.stringKey("gen_ai.response.id"), "chatcmpl-scripted")
        .containsEntry(AttributeKey.stringKey("gen_ai.response.model"), "gpt-observed-2026-01-01")
        .containsEntry(AttributeKey.stringKey("gen_ai.request.model"), "gpt-observed");
  }

  @Test
  void eachModelRequestIsTimedOnTheOperationDurationHistogramInSeconds() {
    enqueueTwoSteps();

    run("Weather in Oslo?");

    MetricData metric = metric("gen_ai.client.operation.duration");
    assertThat(metric.getUnit()).isEqualTo("s");
    HistogramPointData point = metric.getHistogramData().getPoints().iterator().next();
    assertThat(metric.getHistogramData().getPoints()).hasSize(1);
    assertThat(point.getAttributes())
        .isEqualTo(requestTags().toBuilder().put("gen_ai.response.model", "gpt-observed").build());
    assertThat(point.getCount()).isEqualTo(2);
    // Two requests to a local server: more than nothing, far less than a minute.
    assertThat(point.getSum()).isPositive().isLessThan(60.0);
    assertThat(point.getBoundaries()).startsWith(0.01, 0.02, 0.04).endsWith(40.96, 81.92);
  }

  @Test
  void aModelRequestThatFailsIsTimedTooTaggedWithItsErrorType() {
    server.enqueue(ScriptedReply.status(404, "{\"error\": {\"message\": \"no such model\"}}"));

    try {
      run("Hello?");
    } catch (ModelException expected) {
      // The run fails with the model's refusal; the request is still measured.
    }

    assertThat(durationPoints())
        .singleElement()
        .satisfies(
            point -> {
              assertThat(point.getAttributes())
                  .isEqualTo(requestTags().toBuilder().put("error.type", "404").build());
              assertThat(point.getCount()).isEqualTo(1);
            });
    assertThat(tokenUsagePoints()).isEmpty();
  }

  @Test
  void aServerThatSendsNoUsageLeavesTheCountsOutAndTheRunStillSucceeds() {
    server.enqueue(weatherCall().done().build());
    server.enqueue(ScriptedReply.stream().text("Sunny in Oslo.").finish("stop").done().build());

    RunResult result = run("Weather in Oslo?");

    assertThat(result.stop()).isEqualTo(RunResult.Stop.COMPLETED);
    assertThat(result.text()).isEqualTo("Sunny in Oslo.");
    assertThat(result.usage()).isEmpty();
    assertThat(chats()).hasSize(2);
    assertThat(spans.getFinishedSpanItems())
        .allSatisfy(
            span ->
                assertThat(span.getAttributes().asMap())
                    .doesNotContainKeys(INPUT_TOKENS, OUTPUT_TOKENS));
    assertThat(tokenUsagePoints()).isEmpty();
  }

  @Test
  void aRunSpanSumsOnlyTheModelRequestsThatReportedUsage() {
    server.enqueue(weatherCall().done().build());
    server.enqueue(
        ScriptedReply.stream().text("Sunny in Oslo.").finish("stop").usage(130, 9).done().build());

    RunResult result = run("Weather in Oslo?");

    assertThat(result.usage()).contains(new TokenUsage(130, 9));
    assertThat(chats().getFirst().getAttributes().asMap())
        .doesNotContainKeys(INPUT_TOKENS, OUTPUT_TOKENS);
    assertThat(run().getAttributes().get(INPUT_TOKENS)).isEqualTo(130L);
    assertThat(run().getAttributes().get(OUTPUT_TOKENS)).isEqualTo(9L);
  }

  @Test
  void aUsageChunkWithAMalformedCountDoesNotFailTheRunAndIsLeftOut() {
    server.enqueue(
        ScriptedReply.stream()
            .text("Sunny in Oslo.")
            .finish("stop")
            .raw(
                "data: {\"object\": \"chat.completion.chunk\", \"choices\": [], \"usage\":"
                    + " {\"prompt_tokens\": \"many\", \"completion_tokens\": 9,"
                    + " \"total_tokens\": 9}}")
            .done()
            .build());

    RunResult result = run("Weather?");

    assertThat(result.stop()).isEqualTo(RunResult.Stop.COMPLETED);
    assertThat(result.text()).isEqualTo("Sunny in Oslo.");
    assertThat(result.usage()).isEmpty();
    assertThat(chats().getFirst().getAttributes().asMap())
        .doesNotContainKeys(INPUT_TOKENS, OUTPUT_TOKENS);
    assertThat(tokenUsagePoints()).isEmpty();
  }

  private Agent agent(RunLimits limits) {
    return new Agent(
        AgentDefinition.of("assistant", client.endpoint())
            .withDescription("Answers questions.")
            .withLimits(limits),
        client,
        dispatcher);
  }

  private static Conversation conversation() {
    return Conversation.of("session-7", ToolSet.of(new ToolRegistry(), ToolProfiles.MAIN));
  }

  private SpanData named(String name) {
    return spans.getFinishedSpanItems().stream()
        .filter(span -> span.getName().equals(name))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no span " + name + " in " + spans));
  }

  @Test
  void aRunIsOneSpanWithItsModelRequestsAndToolCallsSideBySideUnderIt() {
    server.enqueue(
        ScriptedReply.toolCalls(
            ScriptedReply.call("call_1", "get_weather", "{\"city\":\"Oslo\"}")));
    server.enqueue(ScriptedReply.answer("Sunny in Oslo."));
    Conversation conversation =
        Conversation.of("session-7", ToolSet.of(registry, ToolProfiles.MAIN));

    RunResult result = agent(RunLimits.DEFAULT).run(conversation, "Weather?", RunListener.NONE);

    assertThat(result.stop()).isEqualTo(RunResult.Stop.COMPLETED);
    SpanData run = named("invoke_agent assistant");
    List<SpanData> chats =
        spans.getFinishedSpanItems().stream()
            .filter(span -> span.getName().equals("chat gpt-observed"))
            .toList();
    SpanData tool = named("execute_tool get_weather");
    assertThat(chats).hasSize(2);
    assertThat(run.getParentSpanContext().isValid()).isFalse();
    assertThat(chats)
        .allSatisfy(chat -> assertThat(chat.getParentSpanId()).isEqualTo(run.getSpanId()));
    assertThat(tool.getParentSpanId()).isEqualTo(run.getSpanId());
    assertThat(run.getKind()).isEqualTo(SpanKind.INTERNAL);
    assertThat(run.getStatus().getStatusCode()).isEqualTo(StatusCode.UNSET);
    assertThat(run.getAttributes().asMap())
        .containsEntry(AttributeKey.stringKey("gen_ai.operation.name"), "invoke_agent")
        .containsEntry(AttributeKey.stringKey("gen_ai.provider.name"), "openai")
        .containsEntry(AttributeKey.stringKey("gen_ai.agent.name"), "assistant")
        .containsEntry(AttributeKey.stringKey("gen_ai.agent.description"), "Answers questions.")
        .containsEntry(AttributeKey.stringKey("gen_ai.conversation.id"), "session-7")
        .containsEntry(AttributeKey.stringKey("gen_ai.request.model"), "gpt-observed");
    SpanData first = chats.getFirst();
    assertThat(first.getKind()).isEqualTo(SpanKind.CLIENT);
    assertThat(first.getAttributes().asMap())
        .containsEntry(AttributeKey.stringKey("gen_ai.operation.name"), "chat")
        .containsEntry(AttributeKey.stringKey("gen_ai.request.model"), "gpt-observed")
        .containsEntry(AttributeKey.stringKey("server.address"), server.baseUrl().getHost())
        .containsEntry(AttributeKey.longKey("server.port"), (long) server.baseUrl().getPort())
        .containsEntry(
            AttributeKey.stringArrayKey("gen_ai.response.finish_reasons"), List.of("tool_calls"));
    assertThat(
            chats
                .getLast()
                .getAttributes()
                .get(AttributeKey.stringArrayKey("gen_ai.response.finish_reasons")))
        .containsExactly("stop");
    // Nothing the user or the model said is on any span.
    assertThat(spans.getFinishedSpanItems())
        .allSatisfy(
            span ->
                assertThat(span.getAttributes().asMap().values().toString())
                    .doesNotContain("Weather?")
                    .doesNotContain("Sunny in Oslo")
                    .doesNotContain("Oslo"));
  }

  @Test
  void aRunThatTimesOutSaysSoOnItsSpan() {
    server.enqueue(ScriptedReply.stream().pause(Duration.ofSeconds(20)).done().build());

    RunResult result =
        agent(new RunLimits(5, 5, Duration.ofMillis(300)))
            .run(conversation(), "Take your time.", RunListener.NONE);

    assertThat(result.stop()).isEqualTo(RunResult.Stop.TIMEOUT);
    SpanData run = named("invoke_agent assistant");
    assertThat(run.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
    assertThat(run.getAttributes().get(AttributeKey.stringKey("error.type"))).isEqualTo("timeout");
    SpanData chat = named("chat gpt-observed");
    assertThat(chat.getParentSpanId()).isEqualTo(run.getSpanId());
    assertThat(chat.getAttributes().get(AttributeKey.stringKey("error.type")))
        .isEqualTo("cancelled");
  }

  @Test
  void aModelThatRefusesTheRequestIsAnErrorOnTheChatSpanNamingTheStatus() {
    server.enqueue(ScriptedReply.status(404, "{\"error\": {\"message\": \"no such model\"}}"));

    try {
      agent(RunLimits.DEFAULT).run(conversation(), "Hello?", RunListener.NONE);
    } catch (ModelException expected) {
      // The run fails with the model's refusal; its spans say why.
    }

    SpanData chat = named("chat gpt-observed");
    assertThat(chat.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
    assertThat(chat.getAttributes().get(AttributeKey.stringKey("error.type"))).isEqualTo("404");
    assertThat(chat.getStatus().getDescription()).doesNotContain("no such model");
    SpanData run = named("invoke_agent assistant");
    assertThat(run.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
  }
}
