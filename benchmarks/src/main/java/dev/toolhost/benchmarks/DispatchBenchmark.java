package dev.toolhost.benchmarks;

import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import java.util.Map;
import java.util.concurrent.TimeUnit;
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

/**
 * The dispatch benchmark measures one call of a trivial tool through the whole Toolhost dispatch
 * path beside the same work done by hand, with one caller and with 64.
 *
 * <p>The tool is {@link AddTool}. {@link #fullPath} sends it through {@link
 * ToolDispatcher#dispatch}: tool set lookup, JSON parse, schema validation, the interceptor chain
 * (telemetry, deadline) and the executor, with a real OpenTelemetry SDK behind the telemetry
 * ({@link SdkTelemetry}). {@link #rawBaseline} does the same lookup, parse, validation and call
 * with a {@code HashMap}, Jackson and the networknt validator, and nothing else. {@link
 * #telemetryFloor} wraps that same raw call in the span and metrics every call owes, written
 * straight against the SDK ({@link TelemetryFloor}): the SDK's work with nothing of Toolhost's. All
 * check their answer at setup and the telemetry is checked at teardown, so none can measure a
 * failure path or a no-op.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class DispatchBenchmark {

  /** {@link #fullPathInlineSampled} records one root span in this many. */
  static final int SAMPLED_ONE_IN = 10;

  private SdkTelemetry telemetry;
  private ToolDispatcher dispatcher;
  private ToolDispatcher untracedDispatcher;
  private ToolSet tools;
  private ToolCall call;
  private ToolCall inlineCall;
  private Map<String, AddTool.Raw> rawTools;
  // Read from fields, not constants, so that the compiler cannot fold them.
  private String name = AddTool.NAME;
  private String arguments = AddTool.ARGUMENTS;

  @Setup(Level.Trial)
  public void setUp() {
    telemetry = new SdkTelemetry();
    dispatcher = ToolDispatcher.builder().openTelemetry(telemetry.openTelemetry()).build();
    untracedDispatcher = ToolDispatcher.create();
    tools = AddTool.toolSet();
    call = AddTool.call();
    inlineCall = AddTool.inlineCall();
    rawTools = AddTool.rawTools();

    ToolResult result = fullPath();
    if (!(result instanceof ToolResult.Success success) || !success.content().equals("5")) {
      throw new IllegalStateException("The full path does not answer 5: " + result);
    }
    ToolResult inline = fullPathInline();
    if (!(inline instanceof ToolResult.Success inlineSuccess)
        || !inlineSuccess.content().equals("5")) {
      throw new IllegalStateException("The inline full path does not answer 5: " + inline);
    }
    if (rawBaseline() != 5) {
      throw new IllegalStateException("The raw baseline does not answer 5");
    }
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    telemetry.close();
  }

  /** One call through the Toolhost dispatch path. */
  @Benchmark
  public ToolResult fullPath() {
    return dispatcher.dispatch(tools, call);
  }

  /** One call of the same tool registered inline: no thread hop. */
  @Benchmark
  public ToolResult fullPathInline() {
    return dispatcher.dispatch(tools, inlineCall);
  }

  /**
   * {@link #fullPathInline} with telemetry on the no-op OpenTelemetry API: what the path costs
   * without the SDK's span and metrics. Not part of the target; it shows the SDK's share.
   */
  @Benchmark
  public ToolResult fullPathInlineUntraced() {
    return untracedDispatcher.dispatch(tools, inlineCall);
  }

  /**
   * The inline call on an SDK of its own that records one root span in {@value #SAMPLED_ONE_IN}. It
   * is a state of its own, so that only the forks of {@link #fullPathInlineSampled} build it: calls
   * through it elsewhere would show the dispatch path's call sites a second kind of span (the SDK's
   * non-recording one), and the JIT would compile the always-on path for both.
   */
  @State(Scope.Benchmark)
  public static class Sampled {
    private SdkTelemetry telemetry;
    private ToolDispatcher dispatcher;
    private ToolSet tools;
    private ToolCall call;

    @Setup(Level.Trial)
    public void setUp() {
      telemetry = SdkTelemetry.sampling(SAMPLED_ONE_IN);
      dispatcher = ToolDispatcher.builder().openTelemetry(telemetry.openTelemetry()).build();
      tools = AddTool.toolSet();
      call = AddTool.inlineCall();
      if (!(dispatcher.dispatch(tools, call) instanceof ToolResult.Success success)
          || !success.content().equals("5")) {
        throw new IllegalStateException("The sampled inline path does not answer 5");
      }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
      telemetry.close();
    }
  }

  /**
   * {@link #fullPathInline} on an SDK that records one root span in {@value #SAMPLED_ONE_IN} (a
   * parent-based trace-id ratio sampler), as an operator who samples runs the host. Not the target
   * (that is always-on sampling); it shows what a sampled host's tool call costs.
   */
  @Benchmark
  public ToolResult fullPathInlineSampled(Sampled sampled) {
    return sampled.dispatcher.dispatch(sampled.tools, sampled.call);
  }

  /** {@link #fullPathInlineUntraced} with 64 concurrent callers; shows the SDK's share there. */
  @Benchmark
  @Threads(64)
  public ToolResult fullPathInlineUntraced64() {
    return fullPathInlineUntraced();
  }

  /**
   * A caller whose thread has a span of this process current, as the agent loop's tool calls run
   * inside their run's {@code invoke_agent} span: the tool's span is then a child, and takes its
   * trace id and its clock anchor from the parent instead of making them. The run's span comes from
   * a tracer provider of its own, so that the call counts still match at teardown.
   */
  @State(Scope.Thread)
  public static class InsideARun {
    private SdkTracerProvider runs;
    private Span run;
    private io.opentelemetry.context.Scope current;

    @Setup(Level.Trial)
    public void enter() {
      runs =
          SdkTracerProvider.builder()
              // With no processor at all the SDK hands out a no-op tracer, whose spans are not
              // spans of this process.
              .addSpanProcessor(new SdkTelemetry.CountingSpanProcessor())
              .build();
      run = runs.get("benchmark").spanBuilder("invoke_agent benchmark").startSpan();
      current = run.makeCurrent();
    }

    @TearDown(Level.Trial)
    public void leave() {
      current.close();
      run.end();
      runs.close();
    }
  }

  /**
   * {@link #fullPathInline} from inside a run's span, as the agent loop calls. Not the target (that
   * is the worst case, a root span); it shows what a traced agent's tool call costs.
   */
  @Benchmark
  public ToolResult fullPathInlineInsideARun(InsideARun caller) {
    return fullPathInline();
  }

  /** {@link #fullPathInline} with 64 concurrent callers. */
  @Benchmark
  @Threads(64)
  public ToolResult fullPathInline64() {
    return fullPathInline();
  }

  /** The same lookup, parse, validation and call by hand. */
  @Benchmark
  public int rawBaseline() {
    return AddTool.callRaw(rawTools, name, arguments);
  }

  /**
   * The telemetry floor on an SDK of its own; a state of its own, so that only the forks of {@link
   * #telemetryFloor} build it and call through it.
   */
  @State(Scope.Benchmark)
  public static class Floor {
    private SdkTelemetry telemetry;
    private TelemetryFloor floor;

    @Setup(Level.Trial)
    public void setUp() {
      telemetry = new SdkTelemetry();
      floor = new TelemetryFloor(telemetry);
      if (floor.call(AddTool.rawTools(), AddTool.NAME, AddTool.ARGUMENTS, "call_0") != 5) {
        throw new IllegalStateException("The telemetry floor does not answer 5");
      }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
      telemetry.close();
    }
  }

  /**
   * The raw baseline inside the telemetry every call owes, written against the SDK directly ({@link
   * TelemetryFloor}): what a path that traces and measures each call costs with nothing of its own.
   */
  @Benchmark
  public int telemetryFloor(Floor floor) {
    return floor.floor.call(rawTools, name, arguments, inlineCall.callId());
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
}
