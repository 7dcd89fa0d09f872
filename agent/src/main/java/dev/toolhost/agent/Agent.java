package dev.toolhost.agent;

import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolCaller;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import dev.toolhost.core.ToolSpec;
import dev.toolhost.memory.WorkingMemory;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import tools.jackson.databind.node.ObjectNode;

/**
 * An agent is one model with instructions running the agent loop over a conversation's tool set:
 * send the history and the tools, run the calls the model makes, send their results back, until the
 * model answers.
 *
 * <p>The history stays in the wire format: the assistant message with its {@code tool_calls}, then
 * one {@code tool} message per call with its {@code tool_call_id}. The tools offered are those of
 * the conversation's tool set (its profile, plus bound tools), under OpenAI-safe names (see {@link
 * ToolAliases}). The calls of one turn run concurrently through the {@link ToolDispatcher}, each
 * starting as soon as it has finished streaming, each carrying the model's name and the session id.
 * Tool errors, an unknown tool included, go back to the model as results.
 *
 * <p>A context hint provider, when given, is asked once per turn with the user's message; the hint
 * it returns (the services that match the request, say) is added to the system prompt of every
 * request of that turn, and never to the history. A provider that throws fails the turn.
 *
 * <p>Every request is fitted to the model's context window before it is sent (see {@link
 * ContextBudget} and the compactor): old tool results are sent as their working-memory key and a
 * digest, the oldest turns as a summary the model writes, each shrinking told to the listener as a
 * {@link Compaction}; a refusal of the request as too long is recovered once by trimming and
 * compaction. The conversation's history keeps every message whole. With {@link
 * AgentDefinition#textToolCalls()}, tool calls the model writes as text ({@link TextToolCalls}) run
 * as native ones do.
 *
 * <p>A run is bounded by its {@link RunLimits}: steps, tool calls and a deadline. When the deadline
 * passes or the calling thread is interrupted, the stream and the running tools are stopped, every
 * call left without a result gets a {@code cancelled} one (so the history stays valid), and the run
 * returns with {@link RunResult.Stop#TIMEOUT} or {@link RunResult.Stop#CANCELLED} (the interrupt
 * status kept). A model that cannot answer throws {@link ModelException}. Thread-safe: one agent
 * may run many conversations at once; one conversation should run one turn at a time.
 */
public final class Agent {

  private static final ThreadFactory RUNS = Thread.ofVirtual().name("toolhost-run-", 0).factory();
  private static final ThreadFactory CALLS =
      Thread.ofVirtual().name("toolhost-run-call-", 0).factory();
  private static final Duration GRACE = Duration.ofSeconds(30);

  private final AgentDefinition definition;
  private final ModelClient client;
  private final ToolDispatcher dispatcher;
  private final Predicate<ToolSpec> offered;
  private final Function<String, Optional<String>> hints;
  private final AgentTelemetry telemetry;
  private final Optional<WorkingMemory> memory;
  private final Compactor compactor;

  /** An agent that offers every tool of the conversation's tool set. */
  public Agent(AgentDefinition definition, ModelClient client, ToolDispatcher dispatcher) {
    this(definition, client, dispatcher, spec -> true);
  }

  /**
   * An agent that offers only the tools the predicate accepts; the others stay callable (a call to
   * a hidden tool reaches it, so a disabled agent can say it is disabled).
   */
  public Agent(
      AgentDefinition definition,
      ModelClient client,
      ToolDispatcher dispatcher,
      Predicate<ToolSpec> offered) {
    this(definition, client, dispatcher, offered, message -> Optional.empty());
  }

  private Agent(
      AgentDefinition definition,
      ModelClient client,
      ToolDispatcher dispatcher,
      Predicate<ToolSpec> offered,
      Function<String, Optional<String>> hints) {
    this(definition, client, dispatcher, offered, hints, Optional.empty());
  }

  private Agent(
      AgentDefinition definition,
      ModelClient client,
      ToolDispatcher dispatcher,
      Predicate<ToolSpec> offered,
      Function<String, Optional<String>> hints,
      Optional<WorkingMemory> memory) {
    this.definition = Objects.requireNonNull(definition, "definition");
    this.client = Objects.requireNonNull(client, "client");
    this.dispatcher = Objects.requireNonNull(dispatcher, "dispatcher");
    this.offered = Objects.requireNonNull(offered, "offered");
    this.hints = Objects.requireNonNull(hints, "hints");
    this.memory = Objects.requireNonNull(memory, "memory");
    this.telemetry = new AgentTelemetry(dispatcher.openTelemetry());
    this.compactor =
        new Compactor(
            definition, client, TokenCounter.forModel(definition.endpoint().model()), memory);
  }

  /**
   * This agent with a context hint provider: given a turn's user message, it returns text for the
   * system prompt of that turn, or nothing.
   */
  public Agent withContextHints(Function<String, Optional<String>> hints) {
    return new Agent(definition, client, dispatcher, offered, hints, memory);
  }

  /**
   * This agent keeping in the given working memory the tool results it moves out of its requests to
   * fit its model's window, so that the model can read them again by key; without one, only a
   * digest of such a result stays in the request.
   */
  public Agent withWorkingMemory(WorkingMemory memory) {
    return new Agent(definition, client, dispatcher, offered, hints, Optional.of(memory));
  }

  /** The counter this agent's requests are counted with, before they are sent. */
  public TokenCounter tokenCounter() {
    return compactor.counter();
  }

  /** What this agent is. */
  public AgentDefinition definition() {
    return definition;
  }

  ModelClient client() {
    return client;
  }

  ToolDispatcher dispatcher() {
    return dispatcher;
  }

  Predicate<ToolSpec> offered() {
    return offered;
  }

  Function<String, Optional<String>> hints() {
    return hints;
  }

  /** Runs one turn: the user's message, then the loop until the model answers. */
  public RunResult run(Conversation conversation, String message, RunListener listener) {
    return run(conversation, message, listener, List.of());
  }

  /**
   * Runs one turn with tools bound to this turn alone (a {@code reply} tool bound to the turn's
   * response channel, say): they are added to the conversation's tool set before the first model
   * request and removed when the turn ends, however it ends, so that a late call is refused.
   *
   * @throws IllegalArgumentException when the tool set already shows a tool of a turn tool's name
   */
  public RunResult run(
      Conversation conversation,
      String message,
      RunListener listener,
      List<ExecutableTool> turnTools) {
    return run(conversation, message, listener, turnTools, () -> false);
  }

  /**
   * Runs one turn with a channel's tools bound to it ({@code reply}, {@code skip}, {@code react},
   * {@code route}, {@code cancel}): they are added for this turn and removed when it ends, and when
   * the model calls {@code skip} the turn ends after that step's calls with {@link
   * RunResult.Stop#SKIPPED} and no text. The turn's replies, reactions and skip are read from the
   * channel turn afterwards; closing it is the caller's.
   *
   * @throws IllegalArgumentException when the tool set already shows a tool of a channel tool's
   *     name
   */
  public RunResult run(
      Conversation conversation, String message, RunListener listener, ChannelTurn turn) {
    return run(conversation, message, listener, turn.tools(), turn::skipped);
  }

  private RunResult run(
      Conversation conversation,
      String message,
      RunListener listener,
      List<ExecutableTool> turnTools,
      BooleanSupplier ended) {
    ToolSet tools = conversation.tools();
    List<String> bound = new ArrayList<>();
    Runnable leave = conversation.enterRun();
    try {
      for (ExecutableTool tool : turnTools) {
        tools.add(tool);
        bound.add(tool.name());
      }
      return runWithDeadline(conversation, message, listener, ended);
    } finally {
      bound.forEach(tools::remove);
      leave.run();
    }
  }

  // The run's span is a child of the caller's context; the body, its model requests and its tool
  // calls run under it.
  private RunResult runWithDeadline(
      Conversation conversation, String message, RunListener listener, BooleanSupplier ended) {
    Span span = telemetry.startRun(definition, conversation.sessionId());
    RunResult result;
    try {
      // The run is part of the agent chain its tool calls see: an agent it calls knows who called.
      Context context = AgentChain.with(Context.current().with(span), definition.name());
      result = runWithDeadline(conversation, message, listener, ended, context);
    } catch (RuntimeException | Error e) {
      AgentTelemetry.fail(span, e);
      throw e;
    }
    telemetry.endRun(span, result);
    return result;
  }

  private RunResult runWithDeadline(
      Conversation conversation,
      String message,
      RunListener listener,
      BooleanSupplier ended,
      Context context) {
    Instant deadline = Instant.now().plus(definition.limits().timeout());
    AtomicReference<RunResult.Stop> stop = new AtomicReference<>(RunResult.Stop.CANCELLED);
    Turn turn = new Turn(conversation, message, listener, ended, deadline, stop, context);
    CompletableFuture<RunResult> result = new CompletableFuture<>();
    Thread body =
        RUNS.newThread(
            context.wrap(
                () -> {
                  try {
                    result.complete(turn.run());
                  } catch (Throwable e) {
                    result.completeExceptionally(e);
                  }
                }));
    body.start();
    try {
      return unwrap(result, Duration.between(Instant.now(), deadline));
    } catch (TimeoutException e) {
      stop.set(RunResult.Stop.TIMEOUT);
      body.interrupt();
      return afterStop(result);
    } catch (InterruptedException e) {
      stop.set(RunResult.Stop.CANCELLED);
      body.interrupt();
      RunResult cancelled = afterStop(result);
      Thread.currentThread().interrupt();
      return cancelled;
    }
  }

  // The body stops promptly once interrupted (the stream read and the tool waits are
  // interruptible); wait for it so that the history it leaves is complete.
  private static RunResult afterStop(CompletableFuture<RunResult> result) {
    boolean interrupted = false;
    Instant until = Instant.now().plus(GRACE);
    try {
      while (true) {
        try {
          return unwrap(result, Duration.between(Instant.now(), until));
        } catch (InterruptedException e) {
          interrupted = true;
        } catch (TimeoutException e) {
          throw new IllegalStateException("The agent run did not stop within " + GRACE, e);
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private static RunResult unwrap(CompletableFuture<RunResult> result, Duration wait)
      throws InterruptedException, TimeoutException {
    try {
      return result.get(Math.max(0, wait.toNanos()), TimeUnit.NANOSECONDS);
    } catch (ExecutionException e) {
      switch (e.getCause()) {
        case RuntimeException runtime -> throw runtime;
        case Error error -> throw error;
        default -> throw new IllegalStateException(e.getCause());
      }
    }
  }

  /** One turn of one conversation, run on its own thread. */
  private final class Turn {
    private final Conversation conversation;
    private final String message;
    private final RunListener listener;
    // Whether a channel tool ended the turn (skip).
    private final BooleanSupplier ended;
    private final Instant deadline;
    private final AtomicReference<RunResult.Stop> stop;
    // The run's span: model requests and tool calls are its children, side by side.
    private final Context context;
    private final List<ChatMessage> added = new ArrayList<>();
    private final Map<ModelToolCall, FutureTask<ToolResult>> running = new LinkedHashMap<>();
    private String system = "";
    private int steps;
    private int toolCalls;
    private String lastText = "";
    // The sum over this run's model requests whose server reported usage.
    private Optional<TokenUsage> usage = Optional.empty();

    Turn(
        Conversation conversation,
        String message,
        RunListener listener,
        BooleanSupplier ended,
        Instant deadline,
        AtomicReference<RunResult.Stop> stop,
        Context context) {
      this.conversation = conversation;
      this.message = message;
      this.listener = listener;
      this.ended = ended;
      this.deadline = deadline;
      this.stop = stop;
      this.context = context;
    }

    RunResult run() {
      for (String notice : conversation.takeNotices()) {
        added.add(new ChatMessage.UserMessage(notice));
      }
      takeFollowUps();
      added.add(new ChatMessage.UserMessage(message));
      system = systemPrompt();
      try {
        while (steps < definition.limits().maxSteps()) {
          steps++;
          boolean mustAnswer =
              steps == definition.limits().maxSteps()
                  || toolCalls >= definition.limits().maxToolCalls();
          ModelReply reply = step(mustAnswer);
          reply.content().ifPresent(text -> lastText = text);
          if (reply.toolCalls().isEmpty()) {
            return new RunResult(lastText, RunResult.Stop.COMPLETED, steps, toolCalls, usage);
          }
          for (ModelToolCall call : reply.toolCalls()) {
            FutureTask<ToolResult> task = running.get(call);
            ToolResult result = task.get();
            added.add(new ChatMessage.ToolMessage(call.id(), result.text()));
          }
          running.clear();
          if (ended.getAsBoolean()) {
            return new RunResult("", RunResult.Stop.SKIPPED, steps, toolCalls, usage);
          }
          // A follow-up routed here while the calls ran is heard before the next request.
          takeFollowUps();
        }
        return new RunResult(lastText, RunResult.Stop.MAX_STEPS, steps, toolCalls, usage);
      } catch (InterruptedException | CancellationException e) {
        return stopped();
      } catch (ExecutionException e) {
        throw new IllegalStateException("The dispatch path threw", e.getCause());
      } finally {
        running.values().forEach(task -> task.cancel(true));
        conversation.append(added);
      }
    }

    private void takeFollowUps() {
      for (String followUp : conversation.takeFollowUps()) {
        added.add(new ChatMessage.UserMessage(followUp));
      }
    }

    private String systemPrompt() {
      Optional<String> hint;
      // Asked as the conversation's own tools would ask: a hint names nothing they hide.
      try (Scope ignored = ToolCaller.enter(conversation.tools())) {
        hint = hints.apply(message).filter(text -> !text.isBlank());
      }
      if (hint.isEmpty()) {
        return definition.instructions();
      }
      return definition.instructions().isBlank()
          ? hint.get()
          : definition.instructions() + "\n\n" + hint.get();
    }

    private ModelReply step(boolean mustAnswer) throws InterruptedException {
      List<ToolSpec> specs = conversation.tools().specs().stream().filter(offered).toList();
      ToolAliases aliases = ToolAliases.of(specs);
      List<ObjectNode> tools = aliases.wireTools();
      ModelRequest.ToolChoice choice =
          mustAnswer ? ModelRequest.ToolChoice.NONE : ModelRequest.ToolChoice.AUTO;
      Compactor.Prepared prepared = compactor.prepare(conversation, system, added, tools, listener);
      ModelReply reply;
      try {
        reply = send(prepared, tools, choice, aliases);
      } catch (ModelException refused) {
        if (!refused.contextOverflow()) {
          throw refused;
        }
        // Too long for the model after all: trim, compact, and try once more.
        Compactor.Prepared retried =
            compactor.recover(conversation, system, added, tools, listener, prepared, refused);
        try {
          reply = send(retried, tools, choice, aliases);
        } catch (ModelException again) {
          throw again.contextOverflow() ? compactor.exhausted(refused, again, retried) : again;
        }
      }
      if (reply.usage().isPresent()) {
        TokenUsage used = reply.usage().get();
        usage = Optional.of(usage.map(used::plus).orElse(used));
        AgentTelemetry.setUsage(Span.fromContext(context), usage.get());
      }
      if (definition.textToolCalls()
          && !mustAnswer
          && reply.toolCalls().isEmpty()
          && reply.content().isPresent()) {
        reply = textToolCalls(reply, tools, aliases);
      }
      added.add(reply.toMessage());
      return reply;
    }

    private ModelReply send(
        Compactor.Prepared prepared,
        List<ObjectNode> tools,
        ModelRequest.ToolChoice choice,
        ToolAliases aliases)
        throws InterruptedException {
      ModelRequest request = new ModelRequest(prepared.messages(), tools, choice, true);
      AgentTelemetry.Chat chat = telemetry.startChat(definition.endpoint());
      ModelReply reply;
      try {
        reply =
            client.complete(
                request,
                new ModelListener() {
                  @Override
                  public void onText(String delta) {
                    listener.onText(delta);
                  }

                  @Override
                  public void onToolCall(ModelToolCall call) {
                    start(call, aliases);
                  }
                });
      } catch (InterruptedException | RuntimeException | Error e) {
        chat.fail(e);
        throw e;
      }
      chat.end(reply);
      return reply;
    }

    // The calls the model wrote in its text run as its native calls do; one that cannot be read
    // is answered with an error, as a native call's bad arguments are.
    private ModelReply textToolCalls(
        ModelReply reply, List<ObjectNode> tools, ToolAliases aliases) {
      Set<String> names =
          tools.stream()
              .map(tool -> tool.path("function").path("name").asString())
              .collect(Collectors.toSet());
      Optional<TextToolCalls.Parsed> parsed = TextToolCalls.parse(reply.content().get(), names);
      if (parsed.isEmpty()) {
        return reply;
      }
      List<ModelToolCall> calls = new ArrayList<>();
      for (TextToolCalls.Found found : parsed.get().calls()) {
        ModelToolCall call = found.call();
        calls.add(call);
        if (found.problem().isPresent()) {
          ToolResult unreadable =
              ToolResult.failure(ErrorCode.INVALID_ARGUMENTS, found.problem().get());
          FutureTask<ToolResult> task = new FutureTask<>(() -> unreadable);
          task.run();
          running.put(call, task);
        } else {
          start(call, aliases);
        }
      }
      return new ModelReply(
          parsed.get().text(),
          calls,
          "tool_calls",
          reply.usage(),
          reply.responseId(),
          reply.responseModel());
    }

    private void start(ModelToolCall modelCall, ToolAliases aliases) {
      ToolCall call =
          ToolCall.of(aliases.toolName(modelCall.name()), modelCall.arguments())
              .withCallId(modelCall.id())
              .withSessionId(conversation.sessionId())
              .withAgent(definition.name())
              .withModel(definition.endpoint().model());
      call = conversation.user().map(call::withUser).orElse(call);
      call = conversation.principal().map(call::withPrincipal).orElse(call);
      Instant toolDeadline =
          Instant.now().plus(conversation.tools().defaultTimeout(call.toolName()));
      call = call.withDeadline(toolDeadline.isBefore(deadline) ? toolDeadline : deadline);
      ToolCall dispatched = call;
      FutureTask<ToolResult> task;
      if (toolCalls >= definition.limits().maxToolCalls()) {
        // Core has no limit code. Not invalid_arguments (the arguments may be fine), not
        // unavailable (retryable: a retry in this run is refused again), not execution_failed
        // (the tool never ran). Cancelled is what it is: the run stopped the call before it ran,
        // and calling again will not help.
        ToolResult refused =
            ToolResult.failure(
                ErrorCode.CANCELLED,
                "Not run: this run has used its "
                    + definition.limits().maxToolCalls()
                    + " tool calls. Answer with what you have.");
        listener.onToolCall(dispatched);
        listener.onToolResult(dispatched, refused);
        task = new FutureTask<>(() -> refused);
        task.run();
      } else {
        toolCalls++;
        task =
            new FutureTask<>(
                context.wrap(
                    () -> {
                      listener.onToolCall(dispatched);
                      ToolResult result = dispatcher.dispatch(conversation.tools(), dispatched);
                      listener.onToolResult(dispatched, result);
                      return result;
                    }));
        CALLS.newThread(task).start();
      }
      running.put(modelCall, task);
    }

    // Stopped mid-turn: stop the tools, and answer every call of the last assistant message that
    // has no result yet, so that the next request's history is valid.
    private RunResult stopped() {
      running.values().forEach(task -> task.cancel(true));
      if (!added.isEmpty() && added.getLast() instanceof ChatMessage.AssistantMessage assistant) {
        for (ModelToolCall call : assistant.toolCalls()) {
          added.add(
              new ChatMessage.ToolMessage(
                  call.id(), "The call was cancelled before it finished: the run was stopped."));
        }
      } else {
        int answered = 0;
        for (int i = added.size() - 1; i >= 0; i--) {
          if (added.get(i) instanceof ChatMessage.ToolMessage) {
            answered++;
          } else if (added.get(i) instanceof ChatMessage.AssistantMessage assistant) {
            for (ModelToolCall call :
                assistant.toolCalls().subList(answered, assistant.toolCalls().size())) {
              added.add(
                  new ChatMessage.ToolMessage(
                      call.id(),
                      "The call was cancelled before it finished: the run was stopped."));
            }
            break;
          } else {
            break;
          }
        }
      }
      return new RunResult(lastText, stop.get(), steps, toolCalls, usage);
    }
  }
}
