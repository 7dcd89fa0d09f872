package dev.toolhost.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.metrics.data.LongPointData;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class ToolTelemetryTest {

  private final RecordedTelemetry telemetry = RecordedTelemetry.start();
  private final InMemorySpanExporter spans = telemetry.spans();
  private final InMemoryMetricReader metrics = telemetry.metrics();
  private final OpenTelemetrySdk otel = telemetry.sdk();
  private final ToolRegistry registry = new ToolRegistry();
  private final ToolSet set = ToolSet.of(registry, ToolProfiles.MAIN);

  ToolTelemetryTest() {
    registry.register(
        new ToolSpec("add", "Adds two integers.", Schemas.twoIntegers(), "builtin:math"),
        (call, arguments) ->
            ToolResult.success(
                String.valueOf(arguments.get("a").asInt() + arguments.get("b").asInt())));
    registry.register(
        Schemas.spec("broken", "builtin:test"),
        (call, arguments) -> {
          throw new IllegalStateException("boom");
        });
  }

  @AfterEach
  void close() {
    otel.close();
  }

  private ToolDispatcher dispatcher(boolean recordContent) {
    return ToolDispatcher.builder().openTelemetry(otel).recordContent(recordContent).build();
  }

  @Test
  void eachCallIsASpanFollowingTheGenAiConventionsAsAChildOfTheCaller() {
    Span parent = otel.getTracer("test").spanBuilder("agent turn").startSpan();
    try (Scope ignored = parent.makeCurrent()) {
      dispatcher(false)
          .dispatch(set, ToolCall.of("add", "{\"a\": 1, \"b\": 2}").withCallId("call_7"));
    } finally {
      parent.end();
    }

    SpanData span =
        spans.getFinishedSpanItems().stream()
            .filter(s -> s.getName().equals("execute_tool add"))
            .findFirst()
            .orElseThrow();
    assertThat(span.getParentSpanId()).isEqualTo(parent.getSpanContext().getSpanId());
    assertThat(span.getTraceId()).isEqualTo(parent.getSpanContext().getTraceId());
    assertThat(span.getKind()).isEqualTo(io.opentelemetry.api.trace.SpanKind.INTERNAL);
    assertThat(span.getAttributes().asMap())
        .containsEntry(AttributeKey.stringKey("gen_ai.operation.name"), "execute_tool")
        .containsEntry(AttributeKey.stringKey("gen_ai.tool.name"), "add")
        .containsEntry(AttributeKey.stringKey("gen_ai.tool.call.id"), "call_7")
        .containsEntry(AttributeKey.stringKey("gen_ai.tool.type"), "function")
        .containsEntry(AttributeKey.stringKey("gen_ai.tool.description"), "Adds two integers.");
  }

  @Test
  void aSpanLastsFromTheCallsArrivalToItsResultInWallClockTime() {
    registry.register(
        Schemas.spec("nap", "builtin:test"),
        (call, arguments) -> {
          Thread.sleep(50);
          return ToolResult.success("rested");
        });
    long before = epochNanos(java.time.Instant.now());
    dispatcher(false).dispatch(set, ToolCall.of("nap", "{}"));
    long after = epochNanos(java.time.Instant.now());

    SpanData span = spans.getFinishedSpanItems().getFirst();
    // The clock's own anchor may be up to a second old; a millisecond of slack covers its drift.
    assertThat(span.getStartEpochNanos()).isBetween(before - 1_000_000, after);
    assertThat(span.getEndEpochNanos()).isBetween(span.getStartEpochNanos(), after + 1_000_000);
    assertThat(span.getEndEpochNanos() - span.getStartEpochNanos())
        .isGreaterThanOrEqualTo(50_000_000);
  }

  private static long epochNanos(java.time.Instant instant) {
    return instant.getEpochSecond() * 1_000_000_000L + instant.getNano();
  }

  @Test
  void argumentsAndResultsAreNotRecordedUnlessOptedIn() {
    dispatcher(false).dispatch(set, ToolCall.of("add", "{\"a\": 40, \"b\": 2}"));
    dispatcher(true).dispatch(set, ToolCall.of("add", "{\"a\": 40, \"b\": 2}"));

    List<SpanData> finished = spans.getFinishedSpanItems();
    assertThat(finished.get(0).getAttributes().asMap().keySet())
        .extracting(AttributeKey::getKey)
        .doesNotContain("gen_ai.tool.call.arguments", "gen_ai.tool.call.result");
    assertThat(finished.get(1).getAttributes().asMap())
        .containsEntry(
            AttributeKey.stringKey("gen_ai.tool.call.arguments"), "{\"a\": 40, \"b\": 2}")
        .containsEntry(AttributeKey.stringKey("gen_ai.tool.call.result"), "42");
  }

  @Test
  void aToolNameTheModelMadeUpStaysOutOfTheSpanName() {
    dispatcher(false).dispatch(set, ToolCall.of("made_up_9f3", "{}"));

    SpanData span = spans.getFinishedSpanItems().getFirst();
    assertThat(span.getName()).isEqualTo("execute_tool _unknown");
    assertThat(span.getAttributes().get(AttributeKey.stringKey("gen_ai.tool.name")))
        .isEqualTo("made_up_9f3");
    assertThat(span.getAttributes().get(AttributeKey.stringKey("error.type")))
        .isEqualTo("tool_not_found");
  }

  @Test
  void failedCallMarksTheSpanWithItsErrorType() {
    dispatcher(false).dispatch(set, ToolCall.of("broken", "{}"));

    SpanData span = spans.getFinishedSpanItems().getFirst();
    assertThat(span.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
    assertThat(span.getAttributes().get(AttributeKey.stringKey("error.type")))
        .isEqualTo("execution_failed");
  }

  @Test
  void callsAreCountedAndTimedByToolNameAndStatus() {
    ToolDispatcher dispatcher = dispatcher(false);
    dispatcher.dispatch(set, ToolCall.of("add", "{\"a\": 1, \"b\": 2}"));
    dispatcher.dispatch(set, ToolCall.of("add", "{\"a\": 1, \"b\": 2}"));
    dispatcher.dispatch(set, ToolCall.of("add", "{\"a\": \"x\"}"));
    dispatcher.dispatch(set, ToolCall.of("broken", "{}"));
    dispatcher.dispatch(set, ToolCall.of("no_such_tool", "{}"));

    List<MetricData> collected = List.copyOf(metrics.collectAllMetrics());
    Map<Attributes, Long> counts =
        collected.stream()
            .filter(metric -> metric.getName().equals(ToolTelemetry.INVOCATIONS_METRIC))
            .flatMap(metric -> metric.getLongSumData().getPoints().stream())
            .collect(Collectors.toMap(LongPointData::getAttributes, LongPointData::getValue));
    assertThat(counts)
        .containsEntry(tags("add", "ok"), 2L)
        .containsEntry(tags("add", "invalid_arguments"), 1L)
        .containsEntry(tags("broken", "execution_failed"), 1L)
        .containsEntry(tags("_unknown", "tool_not_found"), 1L)
        .hasSize(4);
    MetricData duration =
        collected.stream()
            .filter(metric -> metric.getName().equals(ToolTelemetry.DURATION_METRIC))
            .findFirst()
            .orElseThrow();
    assertThat(duration.getUnit()).isEqualTo("ms");
    assertThat(duration.getHistogramData().getPoints())
        .anySatisfy(
            point -> {
              assertThat(point.getAttributes()).isEqualTo(tags("add", "ok"));
              assertThat(point.getCount()).isEqualTo(2);
            });
  }

  private static Attributes tags(String tool, String status) {
    return Attributes.of(ToolTelemetry.TOOL_NAME, tool, ToolTelemetry.STATUS, status);
  }
}
