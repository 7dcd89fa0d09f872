package dev.toolhost.agent;

import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.MethodTools;
import dev.toolhost.core.Param;
import dev.toolhost.core.Tool;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

/**
 * Subagents are background runs a conversation starts to work on one task while it goes on (RockBot
 * and Spacebot's subagents): {@code spawn_subagent} starts one with the {@code subagent} profile
 * and returns its id at once, {@code list_subagents} and {@code cancel_subagent} follow and stop
 * them, and the result comes back to the parent conversation as a notice (a message before its next
 * run).
 *
 * <p>A subagent reports progress with {@code set_status}, a tool bound to its own tool set: the
 * update goes to the parent's status buffer without ever blocking, and is dropped when the buffer
 * is full. Every subagent tool has source {@code subagent}, which the {@code subagent} profile
 * denies, so a subagent cannot spawn subagents.
 *
 * <p>A running subagent is always listed. A finished one (finished, failed or cancelled) stays
 * listed so the model can still see what happened, up to {@link #FINISHED_KEPT} per parent session
 * and {@link #FINISHED_KEPT_IN_ALL} in all: when one more finishes, the one of that session (or,
 * past the overall limit, of any session) that finished longest ago is forgotten, and {@code
 * cancel_subagent} answers for its id as for an id it never knew. Pruning happens as a run
 * finishes, on its own thread; there is no background thread. A run holds its parent conversation
 * only while it runs, to report status and deliver its result; once it has stopped it keeps its id,
 * its parent's session id, its task, its state and its last status, and, when it finished well, its
 * own conversation and agent, so that it is idle: a follow-up routed to it ({@link ChannelTurn}'s
 * {@code route}) runs it again over its own history. A parent conversation is never kept alive by
 * the subagents it spawned. A follow-up routed to a running subagent joins its run before its next
 * model request (or, when its run ends first, starts its next run). Thread-safe; {@link #close()}
 * cancels every running subagent and waits for it to stop.
 */
public final class Subagents implements AutoCloseable {

  /** The source of the subagent tools. */
  public static final String SOURCE = "subagent";

  /** How many finished subagents of one parent session stay listed; older ones are forgotten. */
  public static final int FINISHED_KEPT = 16;

  /**
   * How many finished subagents stay listed across all sessions, so that a host serving many
   * sessions keeps a bounded number; the ones that finished longest ago are forgotten first.
   */
  public static final int FINISHED_KEPT_IN_ALL = 1024;

  private static final ThreadFactory THREADS =
      Thread.ofVirtual().name("toolhost-subagent-", 0).factory();

  private final Agents agents;
  private final Map<String, Parent> parents = new ConcurrentHashMap<>();
  private final Map<String, Run> runs = new ConcurrentHashMap<>();
  private final AtomicInteger ids = new AtomicInteger();

  /** Guards finishing and pruning, so that each prune sees every finished run in finish order. */
  private final Object finishing = new Object();

  private long finishes;

  Subagents(Agents agents) {
    this.agents = agents;
  }

  /** A subagent's state. */
  public enum State {
    RUNNING,
    FINISHED,
    FAILED,
    CANCELLED
  }

  /**
   * What one subagent is doing.
   *
   * @param id its id, such as {@code sub-1}
   * @param parentSession the session that spawned it
   * @param task what it was asked to do
   * @param state its state
   * @param status its latest status report (empty before the first)
   */
  public record Info(String id, String parentSession, String task, State state, String status) {}

  /**
   * The subagents spawned by the given session, oldest first: every running one and the last {@link
   * #FINISHED_KEPT} to finish.
   */
  public List<Info> list(String parentSession) {
    return runs.values().stream()
        .filter(run -> run.parentSession.equals(parentSession))
        .sorted((a, b) -> Integer.compare(a.number, b.number))
        .map(Run::info)
        .toList();
  }

  List<ExecutableTool> tools() {
    return MethodTools.of(new Tools(), SOURCE);
  }

  /**
   * Makes the conversation a parent while one of its runs is going on: its session is known to the
   * subagent tools from the start of each run to its end, and forgotten after, so that the map
   * holds only running conversations. Subagents it spawned keep their parent and still deliver.
   */
  void track(String agentName, Conversation conversation) {
    Parent parent = new Parent(agentName, conversation);
    conversation.runScope(
        () -> {
          parents.put(conversation.sessionId(), parent);
          return () -> parents.remove(conversation.sessionId(), parent);
        });
  }

  /** How many conversations are known as parents now: those with a run going on. */
  int trackedParents() {
    return parents.size();
  }

  /** The tools the model calls; public for {@link MethodTools}, not for callers. */
  public final class Tools {
    private Tools() {}

    @Tool(
        name = "spawn_subagent",
        description =
            "Starts a subagent that works on one task in the background and returns its id at"
                + " once. Its result arrives later as a message. Use it for long, independent"
                + " work; keep talking to the user meanwhile.",
        destructive = false)
    public String spawn(
        ToolCall call,
        @Param(description = "The task, complete enough to do without asking questions.")
            String task) {
      Parent parent = parentOf(call);
      int number = ids.incrementAndGet();
      String id = "sub-" + number;
      Agent parentAgent = agents.agent(parent.agentName);
      AgentDefinition definition =
          parentAgent
              .definition()
              .withProfile("subagent")
              .withInstructions(
                  parentAgent.definition().instructions()
                      + "\n\nYou are a subagent working in the background on one task. Report"
                      + " progress with set_status; your final answer is your result.");
      Conversation conversation =
          Conversation.of(
                  parent.conversation.sessionId() + "/" + id,
                  agents.toolSet(definition, "subagent"))
              .madeFor(parent.conversation.user(), parent.conversation.principal());
      Agent agent =
          new Agent(
                  definition, parentAgent.client(), parentAgent.dispatcher(), parentAgent.offered())
              .withContextHints(parentAgent.hints());
      Run run = new Run(number, id, parent.conversation, task, agent, conversation);
      conversation.tools().add(statusTool(run));
      // A virtual thread keeps its task after it ends: the task holds the run only, which lets go
      // of the agent and both conversations when it finishes.
      run.thread = THREADS.newThread(() -> execute(run, task));
      runs.put(id, run);
      run.thread.start();
      return "Started subagent "
          + id
          + ". Its result will arrive as a message when it finishes; check on it with"
          + " list_subagents, stop it with cancel_subagent.";
    }

    @Tool(
        name = "list_subagents",
        description = "Lists this conversation's subagents: id, state, task and latest status.",
        readOnly = true,
        destructive = false,
        idempotent = true,
        openWorld = false)
    public String list(ToolCall call) {
      List<Info> mine = Subagents.this.list(parentOf(call).conversation.sessionId());
      if (mine.isEmpty()) {
        return "No subagents.";
      }
      return mine.stream()
          .map(
              info ->
                  "- "
                      + info.id()
                      + " ["
                      + info.state().name().toLowerCase(java.util.Locale.ROOT)
                      + "] "
                      + info.task()
                      + (info.status().isEmpty() ? "" : " (status: " + info.status() + ")"))
          .collect(Collectors.joining("\n"));
    }

    @Tool(
        name = "cancel_subagent",
        description = "Stops a running subagent of this conversation.",
        idempotent = true,
        openWorld = false)
    public String cancel(
        ToolCall call, @Param(description = "The subagent's id, such as sub-1.") String id) {
      String session = parentOf(call).conversation.sessionId();
      Run run = runs.get(id);
      // A forgotten run answers as one that never was.
      if (run == null || !run.parentSession.equals(session)) {
        throw ToolException.invalidArguments(
            "there is no subagent '" + id + "' in this conversation; see list_subagents");
      }
      if (run.state != State.RUNNING) {
        return "Subagent " + id + " had already stopped (" + run.state + ").";
      }
      run.cancel();
      return "Subagent " + id + " was cancelled.";
    }
  }

  private Parent parentOf(ToolCall call) {
    Parent parent = call.sessionId().map(parents::get).orElse(null);
    if (parent == null) {
      throw ToolException.invalidArguments(
          "this conversation cannot have subagents (it was not started from the agents config)");
    }
    return parent;
  }

  private ExecutableTool statusTool(Run run) {
    return MethodTools.of(new StatusTool(run), SOURCE).getFirst();
  }

  /** The {@code set_status} tool of one subagent; public for {@link MethodTools}. */
  public static final class StatusTool {
    private final Run run;

    private StatusTool(Run run) {
      this.run = run;
    }

    @Tool(
        name = "set_status",
        description =
            "Reports your progress to the conversation that started you, in one short line. Never"
                + " waits; an update may be dropped when many are pending.",
        destructive = false,
        idempotent = true,
        openWorld = false)
    public String setStatus(@Param(description = "What you are doing now.") String status) {
      run.status = status;
      Conversation parent = run.parent;
      if (parent != null) {
        parent.offerStatus(run.id + ": " + status);
      }
      return "Noted.";
    }
  }

  @Override
  public void close() {
    List<Run> all = new ArrayList<>(runs.values());
    all.forEach(Run::cancel);
    for (Run run : all) {
      if (run.thread != null) {
        try {
          if (!run.thread.join(Duration.ofSeconds(30))) {
            throw new IllegalStateException("Subagent " + run.id + " did not stop");
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
      }
    }
  }

  /** Where a follow-up went. */
  enum Routing {
    /** To a running subagent, before its next model request. */
    INJECTED,
    /** To an idle subagent, which runs again with it. */
    RESUMED,
    /** Nowhere: the subagent failed or was cancelled and cannot take input. */
    NOT_ROUTED
  }

  /**
   * Sends a follow-up to a subagent of the given parent conversation.
   *
   * @return where it went; empty when the parent has no subagent of that id (or it was forgotten)
   */
  Optional<Routing> route(Conversation parent, String id, String message) {
    Run run = runs.get(id);
    if (run == null || !run.parentSession.equals(parent.sessionId())) {
      return Optional.empty();
    }
    synchronized (run) {
      if (run.state == State.RUNNING) {
        run.conversation.followUp(message);
        return Optional.of(Routing.INJECTED);
      }
      if (run.state != State.FINISHED || run.conversation == null) {
        return Optional.of(Routing.NOT_ROUTED);
      }
      run.state = State.RUNNING;
      run.parent = parent;
      run.thread = THREADS.newThread(() -> execute(run, message));
      run.thread.start();
      return Optional.of(Routing.RESUMED);
    }
  }

  /**
   * Stops a subagent of the given parent session at once: a running one is interrupted (its notice
   * says it was cancelled), an idle one is cancelled and lets go of its conversation.
   *
   * @return its state before; empty when the session has no subagent of that id
   */
  Optional<State> cancel(String parentSession, String id) {
    Run run = runs.get(id);
    if (run == null || !run.parentSession.equals(parentSession)) {
      return Optional.empty();
    }
    synchronized (run) {
      State before = run.state;
      if (before == State.RUNNING) {
        run.cancel();
      } else if (before == State.FINISHED) {
        run.state = State.CANCELLED;
        run.release(State.CANCELLED);
      }
      return Optional.of(before);
    }
  }

  /**
   * The session that spawned the subagent running in the given session, if one runs there: for the
   * whiteboard, which a subagent shares with its parent only while it runs.
   */
  Optional<String> parentSessionOf(String sessionId) {
    for (Run run : runs.values()) {
      Conversation own = run.conversation;
      if (run.state == State.RUNNING && own != null && own.sessionId().equals(sessionId)) {
        return Optional.of(run.parentSession);
      }
    }
    return Optional.empty();
  }

  /** The run of the given id, while it is known. */
  Optional<Run> run(String id) {
    return Optional.ofNullable(runs.get(id));
  }

  private void execute(Run run, String message) {
    String next = message;
    while (true) {
      Outcome outcome = runOnce(run, next);
      Conversation parent;
      synchronized (run) {
        // A follow-up routed while the run was ending: run again with it rather than lose it.
        List<String> left =
            outcome.state == State.FINISHED ? run.conversation.takeFollowUps() : List.of();
        if (!left.isEmpty()) {
          next = String.join("\n\n", left);
          continue;
        }
        parent = finishLocked(run, outcome.state);
      }
      // Outside the lock: whoever hears the notice may route to this subagent at once.
      parent.deliver(outcome.notice);
      return;
    }
  }

  private record Outcome(State state, String notice) {}

  private Outcome runOnce(Run run, String message) {
    State state = State.FAILED;
    String notice = "[subagent " + run.id + " failed]";
    try {
      RunResult result = run.agent.run(run.conversation, message, RunListener.NONE);
      switch (result.stop()) {
        case COMPLETED -> {
          state = State.FINISHED;
          notice = "[subagent " + run.id + " finished] " + result.text();
        }
        case CANCELLED -> {
          state = State.CANCELLED;
          notice = "[subagent " + run.id + " was cancelled]";
        }
        default -> {
          state = State.FAILED;
          notice =
              "[subagent "
                  + run.id
                  + " stopped: "
                  + result.stop().name().toLowerCase(java.util.Locale.ROOT)
                  + "] "
                  + result.text();
        }
      }
    } catch (RuntimeException e) {
      state = State.FAILED;
      notice = "[subagent " + run.id + " failed] " + e.getMessage();
    }
    return new Outcome(state, notice);
  }

  /**
   * Ends a run, its lock held: sets its state, forgets the oldest finished runs of its session
   * beyond the limit and lets go of what it no longer needs; returns the parent to deliver the
   * notice to, so whoever hears the notice finds the list already pruned.
   */
  private Conversation finishLocked(Run run, State state) {
    synchronized (finishing) {
      run.state = state;
      run.finished = ++finishes;
      List<Finished> finished =
          runs.values().stream()
              .filter(other -> other.state != State.RUNNING)
              .map(other -> new Finished(other.id, other.parentSession, other.finished))
              .toList();
      for (String id : forgotten(finished, FINISHED_KEPT, FINISHED_KEPT_IN_ALL)) {
        runs.remove(id);
      }
    }
    Conversation parent = run.parent;
    run.release(state);
    return parent;
  }

  /** A finished run as pruning sees it: its id, its parent's session, and when it finished. */
  record Finished(String id, String session, long order) {}

  /**
   * The ids of the finished runs to forget: in each session all but the {@code perSession} that
   * finished last, then overall all but the {@code inAll} that finished last.
   */
  static List<String> forgotten(List<Finished> finished, int perSession, int inAll) {
    List<Finished> byAge =
        finished.stream().sorted(Comparator.comparingLong(Finished::order).reversed()).toList();
    Map<String, Integer> kept = new HashMap<>();
    List<String> forgotten = new ArrayList<>();
    int keptInAll = 0;
    for (Finished run : byAge) {
      int inSession = kept.merge(run.session(), 1, Integer::sum);
      if (inSession > perSession || keptInAll >= inAll) {
        forgotten.add(run.id());
      } else {
        keptInAll++;
      }
    }
    return forgotten;
  }

  private record Parent(String agentName, Conversation conversation) {}

  /**
   * One subagent's run. While it runs it holds its agent, its own conversation and its parent's;
   * when it finishes it lets go of all three and keeps what {@code list_subagents} and {@code
   * cancel_subagent} need.
   */
  static final class Run {
    final int number;
    final String id;
    final String parentSession;
    final String task;
    volatile State state = State.RUNNING;
    volatile String status = "";
    volatile Thread thread;
    volatile Conversation parent;
    volatile Agent agent;
    volatile Conversation conversation;

    /** The order it finished in, 0 while it runs; guarded by {@code finishing}. */
    long finished;

    Run(
        int number,
        String id,
        Conversation parent,
        String task,
        Agent agent,
        Conversation conversation) {
      this.number = number;
      this.id = id;
      this.parent = Objects.requireNonNull(parent);
      this.parentSession = parent.sessionId();
      this.task = task;
      this.agent = Objects.requireNonNull(agent);
      this.conversation = Objects.requireNonNull(conversation);
    }

    Info info() {
      return new Info(id, parentSession, task, state, status);
    }

    /** Whether it still holds its parent conversation: only while it runs. */
    boolean holdsParent() {
      return parent != null;
    }

    void cancel() {
      if (state == State.RUNNING && thread != null) {
        thread.interrupt();
      }
    }

    /** Lets go of the parent; of its own conversation and agent too, unless it is idle. */
    private void release(State state) {
      parent = null;
      if (state != State.FINISHED) {
        agent = null;
        conversation = null;
      }
    }
  }
}
