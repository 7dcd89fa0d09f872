package dev.toolhost.benchmarks;

import com.networknt.schema.Error;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import dev.toolhost.core.ToolSpec;
import io.opentelemetry.context.Context;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader;
import io.opentelemetry.sdk.trace.ReadWriteSpan;
import io.opentelemetry.sdk.trace.ReadableSpan;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.SpanProcessor;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * The dispatch benchmark measures one call of a trivial tool through the whole Toolhost dispatch
 * path beside the same work done by hand, with one caller and with 64.
 *
 * <p>The tool is {@code add(a, b)}. {@link #fullPath} sends it through {@link
 * ToolDispatcher#dispatch}: tool set lookup, JSON parse, schema validation, the interceptor chain
 * (telemetry, deadline) and the executor, with a real OpenTelemetry SDK behind the telemetry (an
 * always-on sampler, a span processor that only counts ended spans, an in-memory metric reader).
 * {@link #rawBaseline} does the same lookup, parse, validation and call with a {@code HashMap},
 * Jackson and the networknt validator, and nothing else. Both check their answer once at setup, and
 * the telemetry is checked at teardown, so neither can measure a failure path or a no-op.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class DispatchBenchmark {

  static final String TOOL_NAME = "add";
  static final String ARGUMENTS = "{\"a\": 2, \"b\": 3}";
  static final String PARAMETERS =
      """
      {"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},\
      "required":["a","b"],"additionalProperties":false}""";

  private final JsonMapper mapper = JsonMapper.shared();

  private ToolDispatcher dispatcher;
  private ToolSet tools;
  private ToolCall call;
  private SdkTracerProvider tracerProvider;
  private SdkMeterProvider meterProvider;
  private InMemoryMetricReader metricReader;
  private CountingSpanProcessor spans;

  private Map<String, RawTool> rawTools;

  /** The tool's body, shared by both paths. */
  static int add(int a, int b) {
    return a + b;
  }

  /** What the raw baseline keeps per tool: its schema, compiled once, and its function. */
  record RawTool(Schema schema, AddFunction function) {}

  /** The raw baseline's tool function. */
  @FunctionalInterface
  interface AddFunction {
    int apply(int a, int b);
  }

  @Setup(Level.Trial)
  public void setUp() {
    spans = new CountingSpanProcessor();
    tracerProvider = SdkTracerProvider.builder().addSpanProcessor(spans).build();
    metricReader = InMemoryMetricReader.create();
    meterProvider = SdkMeterProvider.builder().registerMetricReader(metricReader).build();
    OpenTelemetrySdk openTelemetry =
        OpenTelemetrySdk.builder()
            .setTracerProvider(tracerProvider)
            .setMeterProvider(meterProvider)
            .build();
    dispatcher = ToolDispatcher.builder().openTelemetry(openTelemetry).build();

    ObjectNode parameters = (ObjectNode) mapper.readTree(PARAMETERS);
    ToolRegistry registry = new ToolRegistry();
    registry.register(
        new ToolSpec(TOOL_NAME, "Adds two integers.", parameters, "builtin:benchmark"),
        (toolCall, arguments) ->
            ToolResult.success(
                Integer.toString(add(arguments.get("a").asInt(), arguments.get("b").asInt()))));
    tools = ToolSet.of(registry, ToolProfiles.MAIN);
    // A call as it comes off the wire: its id and arguments are the model's. The deadline is far
    // enough that a long run never reaches it; it is checked on every call all the same.
    call =
        new ToolCall(
            "call_0",
            TOOL_NAME,
            ARGUMENTS,
            Optional.empty(),
            Optional.empty(),
            Instant.now().plus(Duration.ofDays(1)));

    Schema schema =
        SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12)
            .getSchema(mapper.readTree(PARAMETERS));
    schema.initializeValidators();
    rawTools = new HashMap<>();
    rawTools.put(TOOL_NAME, new RawTool(schema, DispatchBenchmark::add));

    ToolResult result = fullPath();
    if (!(result instanceof ToolResult.Success success) || !success.content().equals("5")) {
      throw new IllegalStateException("The full path does not answer 5: " + result);
    }
    if (rawBaseline() != 5) {
      throw new IllegalStateException("The raw baseline does not answer 5");
    }
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    long ended = spans.ended.sum();
    long counted = invocationsCounted();
    tracerProvider.close();
    meterProvider.close();
    // Calls through the full path made spans and metrics; if not, the numbers measured a no-op.
    if (ended == 0 || counted == 0 || counted != ended) {
      throw new IllegalStateException(
          "Telemetry did not see the calls: " + ended + " spans, " + counted + " counted calls");
    }
  }

  private long invocationsCounted() {
    return metricReader.collectAllMetrics().stream()
        .filter(metric -> metric.getName().equals("toolhost.tool.invocations"))
        .map(MetricData::getLongSumData)
        .flatMap(sum -> sum.getPoints().stream())
        .mapToLong(point -> point.getValue())
        .sum();
  }

  /** One call through the Toolhost dispatch path. */
  @Benchmark
  public ToolResult fullPath() {
    return dispatcher.dispatch(tools, call);
  }

  /** The same lookup, parse, validation and call by hand. */
  @Benchmark
  public int rawBaseline() {
    RawTool tool = rawTools.get(TOOL_NAME);
    JsonNode arguments = mapper.readTree(ARGUMENTS);
    List<Error> errors = tool.schema().validate(arguments);
    if (!errors.isEmpty()) {
      throw new IllegalStateException("Invalid arguments: " + errors);
    }
    return tool.function().apply(arguments.get("a").asInt(), arguments.get("b").asInt());
  }

  /** {@link #fullPath} with 64 concurrent callers. */
  @Benchmark
  @Threads(64)
  public ToolResult fullPath64() {
    return fullPath();
  }

  /** {@link #rawBaseline} with 64 concurrent callers. */
  @Benchmark
  @Threads(64)
  public int rawBaseline64() {
    return rawBaseline();
  }

  /** Drops every span, counting those that ended so that teardown can check tracing ran. */
  static final class CountingSpanProcessor implements SpanProcessor {
    final LongAdder ended = new LongAdder();

    @Override
    public void onStart(Context parentContext, ReadWriteSpan span) {}

    @Override
    public boolean isStartRequired() {
      return false;
    }

    @Override
    public void onEnd(ReadableSpan span) {
      ended.increment();
    }

    @Override
    public boolean isEndRequired() {
      return true;
    }
  }
}
