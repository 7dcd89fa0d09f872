package dev.toolhost.agent;

import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.MethodTools;
import dev.toolhost.core.Param;
import dev.toolhost.core.Tool;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolCaller;
import dev.toolhost.core.ToolException;
import dev.toolhost.core.ToolProfile;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import dev.toolhost.core.ToolSpec;
import io.opentelemetry.context.Context;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Wisps are small, independent model calls an agent runs in parallel over a batch of tasks
 * (summarise these twenty pages) without the cost of full subagents: {@code spawn_wisps(tasks,
 * instructions?, tools?)}, source {@code wisp}, answers when every wisp has ended, with each task's
 * result in the order of the tasks, marked {@code done}, {@code failed} or {@code timed_out}.
 *
 * <p>Each wisp is one short run of the calling agent's model, with no history, the instructions
 * given and the task as its message. At most {@link Limits#concurrency()} run at once; each has its
 * own deadline ({@link Limits#timeout()}, and never past the call's); a wisp that fails or times
 * out is reported and the others go on. A wisp may use only the tools named in {@code tools}, each
 * of which the caller's own tool set must show; never a subagent tool, another wisp batch or an
 * agent (no recursion), and no tool at all when none is named. Only an agent's run may spawn wisps
 * (the model and its key are the caller's). Thread-safe; a cancelled call stops every wisp of its
 * batch.
 */
public final class Wisps {

  /** The source of {@code spawn_wisps}. */
  public static final String SOURCE = "wisp";

  /**
   * The bounds of wisps: of one batch, and of all the batches on one host, which many sessions, and
   * one run's parallel calls, may spawn together.
   *
   * @param maxTasks the most tasks one call may give
   * @param concurrency the most wisps of one call running at once
   * @param timeout how long one wisp may run
   * @param maxSteps the most model requests one wisp makes (tool calls in between)
   * @param hostConcurrency the most wisps of all calls running at once on the host; a wisp waits
   *     for a free one within its call's deadline, and is timed out if none frees in time
   */
  public record Limits(
      int maxTasks, int concurrency, Duration timeout, int maxSteps, int hostConcurrency) {

    /** 32 tasks, 8 at once, a minute and 4 steps each; 32 wisps at once on the host. */
    public static final Limits DEFAULT = new Limits(32, 8, Duration.ofMinutes(1), 4, 32);

    /** Batch bounds, with four batches' worth of wisps at once on the host. */
    public Limits(int maxTasks, int concurrency, Duration timeout, int maxSteps) {
      this(maxTasks, concurrency, timeout, maxSteps, concurrency * 4);
    }

    public Limits {
      Objects.requireNonNull(timeout, "timeout");
      if (maxTasks < 1 || concurrency < 1 || maxSteps < 1 || hostConcurrency < 1) {
        throw new IllegalArgumentException("Wisp limits must be positive.");
      }
      if (timeout.isNegative() || timeout.isZero()) {
        throw new IllegalArgumentException("A wisp's timeout must be positive, not " + timeout);
      }
    }

    /** How long a whole batch may take: one wisp's timeout per wave, and a margin. */
    Duration batchTimeout() {
      long waves = (maxTasks + concurrency - 1) / concurrency;
      return timeout.multipliedBy(waves).plus(Agents.ANSWER_MARGIN);
    }
  }

  static final String PREAMBLE =
      "You are a wisp: you do one small task on your own, with no one to ask, and answer with its"
          + " result only.";

  private static final JsonMapper JSON = JsonMapper.builder().build();

  private final Agents agents;
  private final ToolRegistry registry;
  private final Limits limits;
  private final Semaphore hostSlots;

  /** Wisps of the given agents, reaching tools in the registry, within the limits. */
  public Wisps(Agents agents, ToolRegistry registry, Limits limits) {
    this.agents = Objects.requireNonNull(agents, "agents");
    this.registry = Objects.requireNonNull(registry, "registry");
    this.limits = Objects.requireNonNull(limits, "limits");
    this.hostSlots = new Semaphore(limits.hostConcurrency(), true);
  }

  /** The {@code spawn_wisps} tool, whose timeout allows its whole batch. */
  public ExecutableTool tool() {
    return MethodTools.of(this, SOURCE).getFirst().withTimeout(limits.batchTimeout());
  }

  /** What became of one task. */
  enum Status {
    DONE("done"),
    FAILED("failed"),
    TIMED_OUT("timed_out");

    final String wireName;

    Status(String wireName) {
      this.wireName = wireName;
    }
  }

  record Outcome(Status status, String text) {}

  @Tool(
      name = "spawn_wisps",
      description =
          "Runs a batch of small, independent tasks in parallel, one quick model call each (map"
              + " work: summarise each of these pages, classify each of these messages), and"
              + " answers every task's result in order, each marked done, failed or timed_out."
              + " Each task must stand alone. Cheaper than subagents; wisps cannot spawn anything.",
      destructive = false,
      openWorld = false)
  public ToolResult spawnWisps(
      ToolCall call,
      @Param(description = "The tasks, one per wisp, each complete on its own.") List<String> tasks,
      @Param(description = "Instructions every wisp follows (format, length, focus).")
          Optional<String> instructions,
      @Param(
              description =
                  "Names of your tools the wisps may use; none when omitted. Never subagent, wisp"
                      + " or agent tools.")
          Optional<List<String>> tools) {
    if (tasks.isEmpty()) {
      throw ToolException.invalidArguments("tasks is empty: give one task per wisp.");
    }
    if (tasks.size() > limits.maxTasks()) {
      throw ToolException.invalidArguments(
          "tasks holds "
              + tasks.size()
              + " tasks; one call runs at most "
              + limits.maxTasks()
              + ". Split the batch.");
    }
    for (int i = 0; i < tasks.size(); i++) {
      if (tasks.get(i) == null || tasks.get(i).isBlank()) {
        throw ToolException.invalidArguments("task " + (i + 1) + " is empty.");
      }
    }
    List<String> chain = AgentChain.current();
    ToolSet caller =
        ToolCaller.toolSet()
            .filter(set -> !chain.isEmpty())
            .orElseThrow(
                () ->
                    ToolException.invalidArguments(
                        "spawn_wisps runs only inside an agent's conversation: wisps use the"
                            + " calling agent's model."));
    Agent parent = agents.agent(chain.getLast());
    ToolSet wispTools = wispTools(caller, tools.orElse(List.of()));
    String system =
        PREAMBLE
            + instructions.filter(text -> !text.isBlank()).map(text -> "\n\n" + text).orElse("");
    // Unique across restarts and hosts: a wisp's session holds its working memory and whiteboard,
    // which a counter would hand to a later batch of the same session after a restart, or on
    // another host sharing the Redis working memory.
    String session = call.sessionId().orElse("wisps") + "/wisps-" + UUID.randomUUID();
    List<Outcome> outcomes = run(parent, system, wispTools, session, tasks, call);
    return answer(tasks, outcomes);
  }

  /** The tools a wisp may use: those named, each shown by the caller's set, none that spawns. */
  private ToolSet wispTools(ToolSet caller, List<String> names) {
    LinkedHashSet<String> wanted = new LinkedHashSet<>();
    for (String name : names) {
      if (name == null || name.isBlank()) {
        throw ToolException.invalidArguments("tools holds an empty name.");
      }
      wanted.add(name.strip());
    }
    ToolSet set =
        ToolSet.within(
            registry,
            ToolProfile.none("wisp").withNames(wanted).withoutSources(SOURCE, Subagents.SOURCE),
            caller);
    for (String name : wanted) {
      Optional<ToolSpec> spec = set.find(name).map(entry -> entry.tool().spec());
      if (spec.isEmpty()) {
        throw ToolException.invalidArguments(
            "tools names '" + name + "', which is not one of your tools that a wisp may use.");
      }
      if (spec.get().source().startsWith(Agents.SOURCE_PREFIX)) {
        throw ToolException.invalidArguments(
            "tools names the agent '" + name + "': a wisp cannot call agents.");
      }
    }
    return set;
  }

  private List<Outcome> run(
      Agent parent,
      String system,
      ToolSet tools,
      String session,
      List<String> tasks,
      ToolCall call) {
    Instant callDeadline = call.deadline();
    Semaphore slots = new Semaphore(limits.concurrency());
    List<Future<Outcome>> futures = new ArrayList<>();
    ExecutorService threads =
        Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("toolhost-wisp-", 0).factory());
    try {
      for (int i = 0; i < tasks.size(); i++) {
        String task = tasks.get(i);
        String wispSession = session + "/" + (i + 1);
        // Under the call's context: each wisp's run is traced as a child of spawn_wisps.
        futures.add(
            threads.submit(
                Context.current()
                    .wrap(
                        () -> {
                          slots.acquire();
                          try {
                            long wait = Duration.between(Instant.now(), callDeadline).toMillis();
                            if (!hostSlots.tryAcquire(Math.max(0, wait), TimeUnit.MILLISECONDS)) {
                              return new Outcome(
                                  Status.TIMED_OUT,
                                  "The host ran its most wisps at once ("
                                      + limits.hostConcurrency()
                                      + ") until the call's deadline; this wisp never started.");
                            }
                            try {
                              return runOne(parent, system, tools, wispSession, task, call);
                            } finally {
                              hostSlots.release();
                            }
                          } finally {
                            slots.release();
                          }
                        })));
      }
      List<Outcome> outcomes = new ArrayList<>();
      for (Future<Outcome> future : futures) {
        try {
          outcomes.add(future.get());
        } catch (ExecutionException e) {
          outcomes.add(new Outcome(Status.FAILED, message(e.getCause())));
        }
      }
      return outcomes;
    } catch (InterruptedException e) {
      // The call was cancelled or passed its deadline: every wisp of the batch stops with it.
      threads.shutdownNow();
      Thread.currentThread().interrupt();
      throw new ToolException(ErrorCode.CANCELLED, "The wisps were stopped with the call.");
    } finally {
      threads.shutdownNow();
      threads.close();
    }
  }

  private Outcome runOne(
      Agent parent, String system, ToolSet tools, String session, String task, ToolCall call) {
    Instant callDeadline = call.deadline();
    Duration left = Duration.between(Instant.now(), callDeadline);
    Duration timeout = left.compareTo(limits.timeout()) < 0 ? left : limits.timeout();
    if (timeout.isNegative() || timeout.isZero()) {
      return new Outcome(Status.TIMED_OUT, "The call's deadline passed before this wisp started.");
    }
    AgentDefinition definition =
        parent
            .definition()
            .withInstructions(system)
            .withLimits(new RunLimits(limits.maxSteps(), limits.maxSteps() * 4, timeout));
    Agent wisp = new Agent(definition, parent.client(), parent.dispatcher(), parent.offered());
    try {
      RunResult result =
          wisp.run(
              Conversation.of(session, tools).madeFor(call.user(), call.principal()),
              task,
              RunListener.NONE);
      return switch (result.stop()) {
        case COMPLETED -> new Outcome(Status.DONE, result.text());
        case TIMEOUT ->
            new Outcome(
                Status.TIMED_OUT, "No answer within " + timeout.toMillis() + " ms; stopped.");
        case MAX_STEPS ->
            new Outcome(
                Status.FAILED,
                "No answer after " + result.steps() + " steps." + lastWords(result.text()));
        case CANCELLED -> new Outcome(Status.FAILED, "Cancelled.");
        // Only a turn with channel tools can skip; a wisp has none.
        case SKIPPED -> new Outcome(Status.FAILED, "It chose not to answer.");
      };
    } catch (RuntimeException e) {
      return new Outcome(Status.FAILED, message(e));
    }
  }

  private static String lastWords(String text) {
    return text.isBlank() ? "" : " Its last words: " + text;
  }

  /** What the model is told of a wisp's failure: its message, never the exception's type. */
  private static String message(Throwable e) {
    return e.getMessage() == null ? "It failed without saying why." : e.getMessage();
  }

  private static ToolResult answer(List<String> tasks, List<Outcome> outcomes) {
    ObjectNode answer = JSON.createObjectNode();
    ArrayNode results = answer.putArray("wisps");
    int done = 0;
    for (int i = 0; i < outcomes.size(); i++) {
      Outcome outcome = outcomes.get(i);
      ObjectNode result =
          results.addObject().put("task", i + 1).put("status", outcome.status().wireName);
      if (outcome.status() == Status.DONE) {
        done++;
        result.put("result", outcome.text());
      } else {
        result.put("error", outcome.text());
      }
    }
    answer.put("done", done).put("not_done", tasks.size() - done);
    return ToolResult.success(answer.toString(), answer);
  }
}
