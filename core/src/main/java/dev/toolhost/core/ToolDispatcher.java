package dev.toolhost.core;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.context.Context;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;

/**
 * The tool dispatcher is the one path every tool call takes: find the tool in the caller's tool
 * set, parse and validate the arguments against its schema, then run the interceptor chain around
 * the executor.
 *
 * <p>It never throws at the caller: every failure is a {@link ToolResult.Failure} whose message the
 * model can act on, with no stack trace or exception class name in it. A tool the caller's set does
 * not show answers {@code tool_not_found} exactly as a tool that does not exist, naming up to three
 * visible tools with the closest names. Arguments that are not a JSON object, or break the schema,
 * answer {@code invalid_arguments} listing every violation before the tool runs.
 *
 * <p>Blocking and thread-safe: call it from any thread, virtual or not. {@link #dispatchAll} runs
 * the calls of one model turn concurrently on virtual threads, each with its own deadline.
 */
public final class ToolDispatcher {

  private static final Logger LOG = LoggerFactory.getLogger(ToolDispatcher.class);
  private static final int CLOSEST_NAMES = 3;
  private static final ThreadFactory THREADS =
      Thread.ofVirtual().name("toolhost-dispatch-", 0).factory();

  private final ObjectMapper mapper;
  private final OpenTelemetry openTelemetry;
  private final ToolTelemetry telemetry;
  private final ToolDeadline deadline = new ToolDeadline();
  private final List<ToolInterceptor> chain;
  private final List<CallRecorder> recorders;

  private ToolDispatcher(Builder builder) {
    this.mapper = builder.mapper;
    this.openTelemetry = builder.openTelemetry;
    this.telemetry = new ToolTelemetry(builder.openTelemetry, builder.recordContent);
    this.chain = interceptors(builder.added);
    this.recorders = List.copyOf(builder.recorders);
  }

  /** A dispatcher with no telemetry backend and no optional steps. */
  public static ToolDispatcher create() {
    return builder().build();
  }

  /** A builder of a dispatcher. */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * The OpenTelemetry this dispatcher traces and measures with, for what calls through it (the
   * agent loop) to trace with the same.
   */
  public OpenTelemetry openTelemetry() {
    return openTelemetry;
  }

  /**
   * The interceptor chain, outermost first: stage by stage in {@link DispatchStage}'s order (the
   * one place the stages' order and reasons are written), the dispatcher's own step first in its
   * stage, then the added ones in the order they were added.
   */
  private List<ToolInterceptor> interceptors(Map<DispatchStage, List<ToolInterceptor>> added) {
    List<ToolInterceptor> steps = new ArrayList<>();
    for (DispatchStage stage : DispatchStage.values()) {
      switch (stage) {
        case TELEMETRY -> steps.add(telemetry);
        case DEADLINE -> steps.add(deadline);
        default -> {}
      }
      steps.addAll(added.getOrDefault(stage, List.of()));
    }
    return List.copyOf(steps);
  }

  /**
   * Dispatches one call through the given tool set and returns its result, then tells the
   * recorders.
   */
  public ToolResult dispatch(ToolSet tools, ToolCall call) {
    if (recorders.isEmpty()) {
      return answer(tools, call, System.nanoTime());
    }
    Instant at = Instant.now();
    long startNanos = System.nanoTime();
    ToolResult result = answer(tools, call, startNanos);
    record(tools, call, result, at, startNanos);
    return result;
  }

  private void record(ToolSet tools, ToolCall call, ToolResult result, Instant at, long start) {
    CallRecord record =
        new CallRecord(
            call,
            tools.profile().name(),
            tools.find(call.toolName()).map(entry -> entry.tool().spec().source()),
            result,
            at,
            Duration.ofNanos(System.nanoTime() - start));
    for (CallRecorder recorder : recorders) {
      try {
        recorder.record(record);
      } catch (RuntimeException e) {
        LOG.error("A call recorder failed on tool '{}'", call.toolName(), e);
      }
    }
  }

  private ToolResult answer(ToolSet tools, ToolCall call, long startNanos) {
    Optional<ToolSet.Entry> found = tools.find(call.toolName());
    if (found.isEmpty()) {
      ToolResult.Failure failure = notFound(tools, call.toolName());
      telemetry.recordRejected(call, false, failure, startNanos);
      return failure;
    }
    ToolSet.Entry entry = found.get();
    JsonNode arguments;
    try {
      arguments = parse(entry.tool(), call.arguments());
    } catch (InvalidArguments e) {
      telemetry.recordRejected(call, true, e.failure, startNanos);
      return e.failure;
    }
    try {
      return new DispatchChain(tools, entry, call, arguments, startNanos, 0).proceed(call);
    } catch (RuntimeException e) {
      LOG.error("The dispatch path failed on tool '{}'", call.toolName(), e);
      return classify(call.toolName(), e);
    }
  }

  /**
   * Dispatches the calls of one model turn concurrently, each on a virtual thread with its own
   * deadline, and returns their results in call order. When the calling thread is interrupted,
   * every unfinished call is cancelled and answers {@code cancelled}.
   */
  public List<ToolResult> dispatchAll(ToolSet tools, List<ToolCall> calls) {
    if (calls.size() == 1) {
      return List.of(dispatch(tools, calls.getFirst()));
    }
    Context context = Context.current();
    List<FutureTask<ToolResult>> tasks = new ArrayList<>(calls.size());
    for (ToolCall call : calls) {
      FutureTask<ToolResult> task = new FutureTask<>(context.wrap(() -> dispatch(tools, call)));
      tasks.add(task);
      THREADS.newThread(task).start();
    }
    List<ToolResult> results = new ArrayList<>(calls.size());
    boolean cancelled = false;
    for (int i = 0; i < tasks.size(); i++) {
      FutureTask<ToolResult> task = tasks.get(i);
      ToolCall call = calls.get(i);
      if (cancelled) {
        task.cancel(true);
      }
      try {
        results.add(task.get());
      } catch (InterruptedException | CancellationException e) {
        cancelled = true;
        task.cancel(true);
        results.add(cancelled(call.toolName()));
      } catch (ExecutionException e) {
        results.add(classify(call.toolName(), e.getCause()));
      }
    }
    if (cancelled) {
      Thread.currentThread().interrupt();
    }
    return List.copyOf(results);
  }

  private JsonNode parse(ExecutableTool tool, String text) throws InvalidArguments {
    String name = tool.name();
    JsonNode arguments;
    if (text.isBlank()) {
      // Models send "" for a tool without parameters.
      arguments = mapper.createObjectNode();
    } else {
      try {
        arguments = mapper.readTree(text);
      } catch (JacksonException e) {
        throw new InvalidArguments(
            "The arguments for tool '"
                + name
                + "' are not valid JSON: "
                + jsonProblem(e)
                + ". Send one JSON object that matches the tool's parameters schema.");
      }
    }
    if (!arguments.isObject()) {
      throw new InvalidArguments(
          "The arguments for tool '"
              + name
              + "' must be a JSON object, not "
              + arguments.getNodeType().name().toLowerCase(Locale.ROOT)
              + ".");
    }
    List<String> violations = tool.schema().violations(arguments);
    if (!violations.isEmpty()) {
      throw new InvalidArguments(
          "The arguments for tool '"
              + name
              + "' do not match its parameters schema:\n- "
              + String.join("\n- ", violations));
    }
    return arguments;
  }

  /**
   * What is wrong with a JSON text, and where, in a person's words: Jackson's first clause without
   * its parser's details ("Unrecognized token 'tool'"), then the line and column.
   */
  static String jsonProblem(JacksonException e) {
    String message = e.getOriginalMessage() == null ? "" : e.getOriginalMessage();
    message = message.lines().findFirst().orElse("");
    int colon = message.indexOf(": ");
    if (colon > 0) {
      message = message.substring(0, colon);
    }
    message = message.replaceAll(" \\(code -?[0-9]+\\)", "");
    if (message.isBlank()) {
      message = "it does not parse";
    }
    var location = e.getLocation();
    if (location == null || location.getLineNr() < 1) {
      return message;
    }
    return message + " at line " + location.getLineNr() + ", column " + location.getColumnNr();
  }

  private static ToolResult.Failure notFound(ToolSet tools, String name) {
    List<String> closest = closestNames(name, tools.names(), CLOSEST_NAMES);
    String message =
        closest.isEmpty()
            ? "Tool '" + name + "' does not exist. No tools are available."
            : "Tool '"
                + name
                + "' does not exist. The closest available tools are: "
                + String.join(", ", closest)
                + ".";
    return ToolResult.failure(ErrorCode.TOOL_NOT_FOUND, message);
  }

  /**
   * The up to {@code limit} names most like {@code name}, most alike first: by the Dice coefficient
   * of their character bigrams (ignoring case), then by name.
   */
  static List<String> closestNames(String name, List<String> names, int limit) {
    Set<String> target = bigrams(name);
    return names.stream()
        .distinct()
        .sorted(
            Comparator.comparingDouble(
                    (String candidate) -> -similarity(target, bigrams(candidate)))
                .thenComparing(Comparator.naturalOrder()))
        .limit(limit)
        .toList();
  }

  // Bigram similarity is a few lines and ranks misspellings and reorderings of tool names well;
  // not worth a dependency (commons-text) in core.
  static double similarity(Set<String> a, Set<String> b) {
    if (a.isEmpty() && b.isEmpty()) {
      return 1;
    }
    long common = a.stream().filter(b::contains).count();
    return 2.0 * common / (a.size() + b.size());
  }

  static Set<String> bigrams(String text) {
    String lower = text.toLowerCase(Locale.ROOT);
    Set<String> bigrams = new HashSet<>();
    for (int i = 0; i + 2 <= lower.length(); i++) {
      bigrams.add(lower.substring(i, i + 2));
    }
    return bigrams;
  }

  /**
   * Turns an exception into a failure: a {@link ToolException} is its own error, a timeout
   * exception is {@code timeout} (retryable), an interruption is {@code cancelled}, anything else
   * is {@code execution_failed} with a message that says nothing internal. An {@link
   * IllegalArgumentException} is anything else too: a library throws it deep inside a tool, and its
   * text is neither the model's fault nor the model's to read. The model never sees a stack trace,
   * an exception class name or an exception's text; the operator gets them in the detail and the
   * log.
   */
  static ToolResult.Failure classify(String toolName, Throwable thrown) {
    if (thrown instanceof ToolException refused) {
      return new ToolResult.Failure(refused.error());
    }
    String detail = thrown.getClass().getName() + ": " + thrown.getMessage();
    return switch (thrown) {
      case TimeoutException e ->
          ToolResult.failure(
              ErrorCode.TIMEOUT,
              "Tool '"
                  + toolName
                  + "' timed out waiting on something it depends on. You may retry.",
              detail);
      case InterruptedException e ->
          ToolResult.failure(
              ErrorCode.CANCELLED,
              "The call to tool '"
                  + toolName
                  + "' was cancelled while it ran; some of its work may have been done.",
              detail);
      default -> {
        LOG.warn("Tool '{}' failed", toolName, thrown);
        yield ToolResult.failure(
            ErrorCode.EXECUTION_FAILED,
            "Tool '"
                + toolName
                + "' failed while running. The failure was logged for the operator; try another"
                + " approach or different arguments.",
            detail);
      }
    };
  }

  /** The result of a call cancelled before its tool finished. */
  static ToolResult.Failure cancelled(String toolName) {
    return ToolResult.failure(
        ErrorCode.CANCELLED, "The call to tool '" + toolName + "' was cancelled.");
  }

  /** Thrown inside the dispatcher to carry an invalid-arguments failure out of parsing. */
  private static final class InvalidArguments extends Exception {
    private static final long serialVersionUID = 1L;
    final transient ToolResult.Failure failure;

    InvalidArguments(String message) {
      super(message, null, false, false);
      this.failure = ToolResult.failure(ErrorCode.INVALID_ARGUMENTS, message);
    }
  }

  /** One position in the chain; immutable, and proceeds at most once. */
  final class DispatchChain implements ToolInterceptor.Chain {
    private final ToolSet tools;
    private final ToolSet.Entry entry;
    private final ToolCall call;
    private final JsonNode arguments;
    private final long startNanos;
    private final int index;
    // One thread at a time proceeds (the deadline step hands the chain to the tool's thread, which
    // starting that thread orders); a plain flag catches an interceptor that proceeds twice.
    private boolean proceeded;

    DispatchChain(
        ToolSet tools,
        ToolSet.Entry entry,
        ToolCall call,
        JsonNode arguments,
        long startNanos,
        int index) {
      this.tools = tools;
      this.entry = entry;
      this.call = call;
      this.arguments = arguments;
      this.startNanos = startNanos;
      this.index = index;
    }

    @Override
    public ToolCall call() {
      return call;
    }

    @Override
    public ToolProfile profile() {
      return tools.profile();
    }

    /** Whether the tool runs on the caller's thread. */
    boolean inline() {
      return entry.tool().inline();
    }

    @Override
    public ToolSpec spec() {
      return entry.tool().spec();
    }

    @Override
    public JsonNode arguments() {
      return arguments;
    }

    @Override
    public long startNanos() {
      return startNanos;
    }

    @Override
    public ToolResult proceed(ToolCall next) {
      Objects.requireNonNull(next, "call");
      if (proceeded) {
        ToolInterceptor culprit = chain.get(index - 1);
        throw new IllegalStateException(
            "interceptor " + culprit.getClass().getName() + " must call proceed() at most once");
      }
      proceeded = true;
      JsonNode nextArguments = arguments;
      if (!next.arguments().equals(call.arguments())) {
        try {
          nextArguments = parse(entry.tool(), next.arguments());
        } catch (InvalidArguments e) {
          return e.failure;
        }
      }
      if (index < chain.size()) {
        ToolInterceptor interceptor = chain.get(index);
        ToolResult result =
            interceptor.intercept(
                new DispatchChain(tools, entry, next, nextArguments, startNanos, index + 1));
        if (result == null) {
          throw new IllegalStateException(
              "interceptor " + interceptor.getClass().getName() + " returned null");
        }
        return result;
      }
      return execute(next, nextArguments);
    }

    private ToolResult execute(ToolCall next, JsonNode nextArguments) {
      if (!entry.live()) {
        return ToolResult.failure(
            ErrorCode.TOOL_NOT_FOUND,
            "Tool '" + next.toolName() + "' was removed and can no longer be called.");
      }
      if (Thread.currentThread().isInterrupted()) {
        return cancelled(next.toolName());
      }
      // A tool that reaches other tools on its caller's behalf reaches at most the caller's set.
      ToolSet before = ToolCaller.swap(tools);
      try {
        ToolResult result = entry.tool().executor().execute(next, nextArguments);
        return Objects.requireNonNull(result, "executor returned null");
      } catch (Exception | LinkageError | AssertionError e) {
        return classify(next.toolName(), e);
      } finally {
        ToolCaller.restore(before);
      }
    }
  }

  /** A builder of a {@link ToolDispatcher}. */
  public static final class Builder {
    private ObjectMapper mapper = JsonMapper.shared();
    private OpenTelemetry openTelemetry = OpenTelemetry.noop();
    private boolean recordContent;
    private final Map<DispatchStage, List<ToolInterceptor>> added =
        new EnumMap<>(DispatchStage.class);
    private final List<CallRecorder> recorders = new ArrayList<>();

    private Builder() {}

    /** The OpenTelemetry to trace and measure with; no-op by default. */
    public Builder openTelemetry(OpenTelemetry openTelemetry) {
      this.openTelemetry = Objects.requireNonNull(openTelemetry, "openTelemetry");
      return this;
    }

    /** Whether spans record arguments and results; off by default, as they may hold secrets. */
    public Builder recordContent(boolean recordContent) {
      this.recordContent = recordContent;
      return this;
    }

    /**
     * Adds an interceptor at a stage of the chain ({@link DispatchStage}), after those already
     * added there: the result chunker at {@link DispatchStage#RESULT_SHAPING}, a leak scanner at
     * {@link DispatchStage#OUTPUT_SCAN}.
     */
    public Builder interceptor(DispatchStage stage, ToolInterceptor interceptor) {
      added
          .computeIfAbsent(Objects.requireNonNull(stage, "stage"), ignored -> new ArrayList<>())
          .add(Objects.requireNonNull(interceptor, "interceptor"));
      return this;
    }

    /** Adds a recorder, told of every call the dispatcher answers ({@link CallRecorder}). */
    public Builder recorder(CallRecorder recorder) {
      recorders.add(Objects.requireNonNull(recorder, "recorder"));
      return this;
    }

    /** The mapper that parses arguments. */
    public Builder mapper(ObjectMapper mapper) {
      this.mapper = Objects.requireNonNull(mapper, "mapper");
      return this;
    }

    /** Builds the dispatcher. */
    public ToolDispatcher build() {
      return new ToolDispatcher(this);
    }
  }
}
