package dev.toolhost.benchmarks;

import com.networknt.schema.Error;
import com.networknt.schema.Schema;
import dev.toolhost.core.ParametersSchema;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolInterceptor;
import dev.toolhost.core.ToolProfile;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import dev.toolhost.core.ToolSpec;
import dev.toolhost.core.ToolTelemetry;
import io.opentelemetry.context.Context;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The dispatch cost benchmark takes the full path of {@link DispatchBenchmark} apart, to show where
 * its extra cost over the raw baseline goes: each step on its own (the telemetry step with each
 * OpenTelemetry signal on and off), the full path with its telemetry off, the full path without its
 * thread hop, and both paths called from a virtual thread rather than a platform one.
 *
 * <p>Two of them copy core code that is not public, and must be kept in step with it by hand.
 * {@link #deadlineHop} does what {@code ToolDeadline} does, line for line (a {@code FutureTask} on
 * a new virtual thread from a shared named factory, awaited until the deadline), around a tool that
 * does nothing. {@link #fullPathWithoutHop} is the dispatch path put back together from core's
 * public parts (tool set lookup, parse, {@code ParametersSchema} validation, the {@link
 * ToolTelemetry} step, the executor) with the tool run on the caller's thread: a model of the
 * dispatch path without the deadline step's hop, not the dispatch path itself.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class DispatchCostBenchmark {

  private static final JsonMapper MAPPER = JsonMapper.shared();
  private static final ToolResult FIVE = ToolResult.success("5");
  private static final int CALLS_PER_THREAD = 100;
  // As ToolDeadline names its threads.
  private static final ThreadFactory TOOL_THREADS =
      Thread.ofVirtual().name("toolhost-tool-", 0).factory();

  private SdkTelemetry telemetry;
  private ToolTelemetry telemetryStep;
  private ToolDispatcher dispatcher;
  private ToolDispatcher untracedDispatcher;
  private Map<String, AddTool.Raw> rawTools;
  private String arguments = AddTool.ARGUMENTS;
  private ToolSet tools;
  private ToolCall call;
  private ToolInterceptor.Chain endOfChain;
  private String name = AddTool.NAME;
  private ParametersSchema validatedBy;
  private Schema rawSchema;
  private JsonNode parsedArguments;

  @Setup(Level.Trial)
  public void setUp() {
    telemetry = new SdkTelemetry();
    telemetryStep = new ToolTelemetry(telemetry.openTelemetry(), false);
    dispatcher = ToolDispatcher.builder().openTelemetry(telemetry.openTelemetry()).build();
    untracedDispatcher = ToolDispatcher.create();
    rawTools = AddTool.rawTools();
    tools = AddTool.toolSet();
    call = AddTool.call();
    ToolSpec spec = tools.find(AddTool.NAME).orElseThrow().tool().spec();
    endOfChain = new ConstantChain(call, spec);
    validatedBy = tools.find(AddTool.NAME).orElseThrow().tool().schema();
    rawSchema = rawTools.get(AddTool.NAME).schema();
    parsedArguments = MAPPER.readTree(AddTool.ARGUMENTS);
    // Every trial calls through the telemetry at least once, so that the teardown check holds.
    if (!fullPathWithoutHop().text().equals("5")) {
      throw new IllegalStateException("The full path without its hop does not answer 5");
    }
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    telemetry.close();
  }

  /** The tool set lookup, which the raw baseline does with one {@code HashMap.get}. */
  @Benchmark
  public Optional<ToolSet.Entry> toolSetFind() {
    return tools.find(name);
  }

  /** Validation of the parsed arguments by the tool's {@code ParametersSchema}. */
  @Benchmark
  public List<String> coreValidation() {
    return validatedBy.violations(parsedArguments);
  }

  /** Validation of the parsed arguments by the raw baseline's schema. */
  @Benchmark
  public List<Error> rawValidation() {
    return rawSchema.validate(parsedArguments);
  }

  /**
   * The telemetry step around a chain that answers at once (one span, one histogram, a counter),
   * with each signal on and off.
   */
  @Benchmark
  public ToolResult telemetryStep(TelemetrySignals signals) {
    return signals.step.intercept(endOfChain);
  }

  /** What the deadline step does around a tool that answers at once: one virtual-thread hop. */
  @Benchmark
  public ToolResult deadlineHop() throws InterruptedException, ExecutionException {
    long remaining = Instant.now().until(call.deadline(), ChronoUnit.NANOS);
    FutureTask<ToolResult> task = new FutureTask<>(Context.current().wrap(() -> FIVE));
    TOOL_THREADS.newThread(task).start();
    try {
      return task.get(remaining, TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      throw new IllegalStateException("A tool that does nothing passed its deadline", e);
    }
  }

  /** The full path with the default, no-op OpenTelemetry: everything but the telemetry SDK. */
  @Benchmark
  public ToolResult fullPathUntraced() {
    return untracedDispatcher.dispatch(tools, call);
  }

  /** The model of the full path with the tool run on the caller's thread; see the class comment. */
  @Benchmark
  public ToolResult fullPathWithoutHop() {
    ToolSet.Entry entry = tools.find(call.toolName()).orElseThrow();
    JsonNode parsed = MAPPER.readTree(call.arguments());
    if (!parsed.isObject()) {
      throw new IllegalStateException("The arguments are not an object");
    }
    List<String> violations = entry.tool().schema().violations(parsed);
    if (!violations.isEmpty()) {
      throw new IllegalStateException("Invalid arguments: " + violations);
    }
    return telemetryStep.intercept(new InlineChain(entry, call, parsed, System.nanoTime()));
  }

  /**
   * {@link DispatchBenchmark#fullPath}, {@value #CALLS_PER_THREAD} times in a row on one virtual
   * thread, as a server that serves each request on a virtual thread calls it; the one thread start
   * is shared by the calls.
   */
  @Benchmark
  @OperationsPerInvocation(CALLS_PER_THREAD)
  public int fullPathFromVirtualThread() throws InterruptedException, ExecutionException {
    return onVirtualThread(
        () -> {
          int length = 0;
          for (int i = 0; i < CALLS_PER_THREAD; i++) {
            length += dispatcher.dispatch(tools, call).text().length();
          }
          return length;
        });
  }

  /** {@link DispatchBenchmark#rawBaseline} as {@link #fullPathFromVirtualThread} calls it. */
  @Benchmark
  @OperationsPerInvocation(CALLS_PER_THREAD)
  public int rawBaselineFromVirtualThread() throws InterruptedException, ExecutionException {
    return onVirtualThread(
        () -> {
          int sum = 0;
          for (int i = 0; i < CALLS_PER_THREAD; i++) {
            sum += AddTool.callRaw(rawTools, name, arguments);
          }
          return sum;
        });
  }

  private static int onVirtualThread(Callable<Integer> calls)
      throws InterruptedException, ExecutionException {
    FutureTask<Integer> task = new FutureTask<>(calls);
    Thread.ofVirtual().start(task);
    return task.get();
  }

  /** {@link #deadlineHop} with 64 concurrent callers. */
  @Benchmark
  @Threads(64)
  public ToolResult deadlineHop64() throws InterruptedException, ExecutionException {
    return deadlineHop();
  }

  /** {@link #telemetryStep} with traces and metrics and 64 concurrent callers. */
  @Benchmark
  @Threads(64)
  public ToolResult telemetryStep64() {
    return telemetryStep.intercept(endOfChain);
  }

  /** {@link #fullPathWithoutHop} with 64 concurrent callers. */
  @Benchmark
  @Threads(64)
  public ToolResult fullPathWithoutHop64() {
    return fullPathWithoutHop();
  }

  /** The telemetry step on an SDK with some of its signals on. */
  @State(Scope.Benchmark)
  public static class TelemetrySignals {
    /** Which signals the SDK records; "none" is the OpenTelemetry API's no-op. */
    @Param({"traces+metrics", "traces", "metrics", "none"})
    public String signals;

    private SdkTelemetry telemetry;
    ToolTelemetry step;

    @Setup(Level.Trial)
    public void setUp() {
      telemetry = new SdkTelemetry(signals.contains("traces"), signals.contains("metrics"));
      step = new ToolTelemetry(telemetry.openTelemetry(), false);
      ToolCall call = AddTool.call();
      ToolRegistry registry = new ToolRegistry();
      AddTool.register(registry);
      ToolSpec spec = registry.find(AddTool.NAME).orElseThrow().spec();
      step.intercept(new ConstantChain(call, spec));
    }

    @TearDown(Level.Trial)
    public void tearDown() {
      telemetry.close();
    }
  }

  /** The end of a chain that runs the tool's executor on the caller's thread. */
  private record InlineChain(
      ToolSet.Entry entry, ToolCall call, JsonNode arguments, long startNanos)
      implements ToolInterceptor.Chain {
    @Override
    public ToolSpec spec() {
      return entry.tool().spec();
    }

    @Override
    public ToolProfile profile() {
      return ToolProfiles.MAIN;
    }

    @Override
    public ToolResult proceed(ToolCall next) {
      try {
        return entry.tool().executor().execute(next, arguments);
      } catch (Exception e) {
        throw new IllegalStateException("The add tool failed", e);
      }
    }
  }

  /** The end of a chain: answers 5 without running anything. */
  private record ConstantChain(ToolCall call, ToolSpec spec) implements ToolInterceptor.Chain {
    @Override
    public JsonNode arguments() {
      throw new UnsupportedOperationException("The telemetry step does not read the arguments");
    }

    @Override
    public ToolProfile profile() {
      return ToolProfiles.MAIN;
    }

    /** A fresh reading on every call, as the dispatcher takes one per call. */
    @Override
    public long startNanos() {
      return System.nanoTime();
    }

    @Override
    public ToolResult proceed(ToolCall next) {
      return FIVE;
    }
  }
}
