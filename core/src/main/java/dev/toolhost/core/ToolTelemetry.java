package dev.toolhost.core;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.metrics.DoubleHistogram;
import io.opentelemetry.api.metrics.LongCounter;
import io.opentelemetry.api.metrics.Meter;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Scope;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Tool telemetry is the tracing and metrics step of the dispatch path: a span per call following
 * the OpenTelemetry GenAI conventions for tool execution, a duration histogram and an invocation
 * counter, both tagged with the tool name and the status ({@code ok} or the error code).
 *
 * <p>The span is a child of the caller's current context and is current while the tool runs, so the
 * tool's own spans nest under it. Arguments and results are recorded on the span only when {@code
 * recordContent} is on; they may hold secrets. Thread-safe.
 */
public final class ToolTelemetry implements ToolInterceptor {

  /** The instrumentation scope name. */
  public static final String SCOPE = "dev.toolhost.core";

  /**
   * The histogram of call durations, in milliseconds: from the call's arrival on the dispatch path
   * (parsing and validation included) to its result.
   */
  public static final String DURATION_METRIC = "toolhost.tool.invoke.duration";

  /** The counter of calls. */
  public static final String INVOCATIONS_METRIC = "toolhost.tool.invocations";

  /** The status tag of a call that succeeded. */
  public static final String STATUS_OK = "ok";

  static final AttributeKey<String> TOOL_NAME = AttributeKey.stringKey("tool_name");
  static final AttributeKey<String> STATUS = AttributeKey.stringKey("status");
  private static final AttributeKey<String> OPERATION =
      AttributeKey.stringKey("gen_ai.operation.name");
  private static final AttributeKey<String> GEN_AI_TOOL_NAME =
      AttributeKey.stringKey("gen_ai.tool.name");
  private static final AttributeKey<String> GEN_AI_TOOL_CALL_ID =
      AttributeKey.stringKey("gen_ai.tool.call.id");
  private static final AttributeKey<String> GEN_AI_TOOL_DESCRIPTION =
      AttributeKey.stringKey("gen_ai.tool.description");
  private static final AttributeKey<String> GEN_AI_TOOL_TYPE =
      AttributeKey.stringKey("gen_ai.tool.type");
  private static final AttributeKey<String> GEN_AI_TOOL_ARGUMENTS =
      AttributeKey.stringKey("gen_ai.tool.call.arguments");
  private static final AttributeKey<String> GEN_AI_TOOL_RESULT =
      AttributeKey.stringKey("gen_ai.tool.call.result");
  private static final AttributeKey<String> TOOL_SOURCE =
      AttributeKey.stringKey("toolhost.tool.source");
  private static final AttributeKey<String> ERROR_TYPE = AttributeKey.stringKey("error.type");

  /**
   * The tag value under which calls to tools that do not exist are counted, to bound cardinality.
   */
  static final String UNKNOWN_TOOL = "_unknown";

  private final Tracer tracer;
  private final DoubleHistogram duration;
  private final LongCounter invocations;
  private final boolean recordContent;
  // Per tool: its span name and one Attributes per status, so a call allocates none for them.
  private final ConcurrentHashMap<String, PerTool> perTool = new ConcurrentHashMap<>();

  private record PerTool(String spanName, Attributes[] tagsByStatus) {
    static PerTool of(String toolName) {
      Attributes[] tags = new Attributes[ErrorCode.values().length + 1];
      tags[0] = Attributes.of(TOOL_NAME, toolName, STATUS, STATUS_OK);
      for (ErrorCode code : ErrorCode.values()) {
        tags[code.ordinal() + 1] = Attributes.of(TOOL_NAME, toolName, STATUS, code.wireName());
      }
      return new PerTool("execute_tool " + toolName, tags);
    }

    Attributes tags(ToolResult result) {
      return result instanceof ToolResult.Failure failure
          ? tagsByStatus[failure.error().code().ordinal() + 1]
          : tagsByStatus[0];
    }
  }

  /**
   * Telemetry on the given OpenTelemetry.
   *
   * @param recordContent whether to record arguments and results on spans
   */
  public ToolTelemetry(OpenTelemetry openTelemetry, boolean recordContent) {
    this.tracer = openTelemetry.getTracer(SCOPE);
    Meter meter = openTelemetry.getMeter(SCOPE);
    this.duration =
        meter
            .histogramBuilder(DURATION_METRIC)
            .setDescription("Duration of tool calls")
            .setUnit("ms")
            .build();
    this.invocations =
        meter
            .counterBuilder(INVOCATIONS_METRIC)
            .setDescription("Number of tool calls")
            .setUnit("{call}")
            .build();
    this.recordContent = recordContent;
  }

  @Override
  public ToolResult intercept(Chain chain) {
    ToolCall call = chain.call();
    ToolSpec spec = chain.spec();
    long start = chain.startNanos();
    PerTool tool = perTool.computeIfAbsent(spec.name(), PerTool::of);
    Span span =
        spanBuilder(call, tool.spanName(), spec.name(), start)
            .setAttribute(GEN_AI_TOOL_DESCRIPTION, spec.description())
            .setAttribute(TOOL_SOURCE, spec.source())
            .startSpan();
    ToolResult result;
    try (Scope ignored = span.makeCurrent()) {
      result = chain.proceed(call);
    } catch (RuntimeException | Error e) {
      // Only a broken interceptor gets here; the dispatcher turns it into a result.
      end(span, tool, start, ToolResult.failure(ErrorCode.EXECUTION_FAILED));
      throw e;
    }
    if (recordContent) {
      span.setAttribute(GEN_AI_TOOL_ARGUMENTS, call.arguments());
      span.setAttribute(GEN_AI_TOOL_RESULT, result.text());
    }
    end(span, tool, start, result);
    return result;
  }

  /**
   * Records a call that failed before reaching the interceptor chain (an unknown tool, arguments
   * that break the schema), with its own span.
   *
   * @param startNanos the {@link System#nanoTime()} reading taken when the call arrived
   */
  void recordRejected(
      ToolCall call, boolean toolExists, ToolResult.Failure failure, long startNanos) {
    PerTool tool =
        perTool.computeIfAbsent(toolExists ? call.toolName() : UNKNOWN_TOOL, PerTool::of);
    // A name the model made up stays out of the span name, which backends index: it is only an
    // attribute there.
    Span span = spanBuilder(call, tool.spanName(), call.toolName(), startNanos).startSpan();
    if (recordContent) {
      span.setAttribute(GEN_AI_TOOL_ARGUMENTS, call.arguments());
    }
    end(span, tool, startNanos, failure);
  }

  private SpanBuilder spanBuilder(
      ToolCall call, String spanName, String toolName, long startNanos) {
    // Timestamps come from the dispatch path's own clock readings, which the duration metric
    // needs anyway, so that the SDK does not read the clock again for them.
    return tracer
        .spanBuilder(spanName)
        .setStartTimestamp(EpochClock.epochNanos(startNanos), TimeUnit.NANOSECONDS)
        .setSpanKind(SpanKind.INTERNAL)
        .setAttribute(OPERATION, "execute_tool")
        .setAttribute(GEN_AI_TOOL_NAME, toolName)
        .setAttribute(GEN_AI_TOOL_CALL_ID, call.callId())
        .setAttribute(GEN_AI_TOOL_TYPE, "function");
  }

  private void end(Span span, PerTool tool, long start, ToolResult result) {
    if (result instanceof ToolResult.Failure failure) {
      span.setAttribute(ERROR_TYPE, failure.error().code().wireName());
      span.setStatus(StatusCode.ERROR, failure.error().message());
    }
    long end = System.nanoTime();
    Attributes tags = tool.tags(result);
    duration.record((end - start) / 1_000_000.0, tags);
    invocations.add(1, tags);
    span.end(EpochClock.epochNanos(end), TimeUnit.NANOSECONDS);
  }
}
