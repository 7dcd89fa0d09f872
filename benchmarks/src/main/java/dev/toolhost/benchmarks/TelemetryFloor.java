package dev.toolhost.benchmarks;

import dev.toolhost.core.ToolTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.metrics.DoubleHistogram;
import io.opentelemetry.api.metrics.LongCounter;
import io.opentelemetry.api.metrics.Meter;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Scope;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The telemetry floor is the raw baseline with, around its direct call, exactly the telemetry the
 * dispatch path owes every call, written straight against the OpenTelemetry API with no Toolhost
 * code: a clock reading at the start and at the end, a sampled span following the GenAI conventions
 * for tool execution (the same six attributes, current while the tool runs, ended with the end
 * reading), and the two metric records (a duration histogram and an invocation counter, tagged with
 * the tool name and status).
 *
 * <p>It shares only names with Toolhost (the metrics' and the status tag's), so that its series are
 * the ones the dispatch path records.
 *
 * <p>It is the work any dispatch path that traces and measures every call must do on the same SDK,
 * so its ratio to the raw baseline is the ratio such a path reaches with nothing of its own. Not a
 * model of Toolhost: a bound on the work, though not always on the time, because the JIT compiles
 * it into a shape of its own (on 2026-11-23 it measured slower than the full path in two runs).
 */
final class TelemetryFloor {

  private static final AttributeKey<String> OPERATION =
      AttributeKey.stringKey("gen_ai.operation.name");
  private static final AttributeKey<String> TOOL_NAME = AttributeKey.stringKey("gen_ai.tool.name");
  private static final AttributeKey<String> CALL_ID = AttributeKey.stringKey("gen_ai.tool.call.id");
  private static final AttributeKey<String> TOOL_TYPE = AttributeKey.stringKey("gen_ai.tool.type");
  private static final AttributeKey<String> DESCRIPTION =
      AttributeKey.stringKey("gen_ai.tool.description");
  private static final AttributeKey<String> SOURCE = AttributeKey.stringKey("toolhost.tool.source");

  // Wall-clock time from nanoTime readings, as the dispatch path derives it: one anchor.
  private final long anchorEpochNanos;
  private final long anchorNanoTime;
  private final Tracer tracer;
  private final DoubleHistogram duration;
  private final LongCounter invocations;
  private final Attributes tags =
      Attributes.of(
          AttributeKey.stringKey("tool_name"),
          AddTool.NAME,
          AttributeKey.stringKey("status"),
          ToolTelemetry.STATUS_OK);

  TelemetryFloor(SdkTelemetry telemetry) {
    this.anchorNanoTime = System.nanoTime();
    Instant now = Instant.now();
    this.anchorEpochNanos = now.getEpochSecond() * 1_000_000_000L + now.getNano();
    this.tracer = telemetry.openTelemetry().getTracer("dev.toolhost.benchmarks");
    Meter meter = telemetry.openTelemetry().getMeter("dev.toolhost.benchmarks");
    this.duration = meter.histogramBuilder(ToolTelemetry.DURATION_METRIC).setUnit("ms").build();
    this.invocations = meter.counterBuilder(ToolTelemetry.INVOCATIONS_METRIC).build();
  }

  /** {@link AddTool#callRaw} inside the telemetry every call owes. */
  int call(Map<String, AddTool.Raw> tools, String name, String arguments, String callId) {
    long start = System.nanoTime();
    Span span =
        tracer
            .spanBuilder("execute_tool add")
            .setStartTimestamp(epochNanos(start), TimeUnit.NANOSECONDS)
            .setSpanKind(SpanKind.INTERNAL)
            .setAttribute(OPERATION, "execute_tool")
            .setAttribute(TOOL_NAME, name)
            .setAttribute(CALL_ID, callId)
            .setAttribute(TOOL_TYPE, "function")
            .setAttribute(DESCRIPTION, "Adds two integers.")
            .setAttribute(SOURCE, "builtin:benchmark")
            .startSpan();
    int sum;
    try (Scope ignored = span.makeCurrent()) {
      sum = AddTool.callRaw(tools, name, arguments);
    }
    long end = System.nanoTime();
    duration.record((end - start) / 1_000_000.0, tags);
    invocations.add(1, tags);
    span.end(epochNanos(end), TimeUnit.NANOSECONDS);
    return sum;
  }

  private long epochNanos(long nanoTime) {
    return anchorEpochNanos + (nanoTime - anchorNanoTime);
  }
}
