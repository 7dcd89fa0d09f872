package dev.toolhost.a2a;

import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.MethodTools;
import dev.toolhost.core.Param;
import dev.toolhost.core.Tool;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolException;
import dev.toolhost.core.ToolGuide;
import dev.toolhost.memory.WorkingMemory;
import dev.toolhost.web.OutboundException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The A2A tools are the client side of agent-to-agent calls, source {@code a2a}: {@code
 * list_known_agents}, {@code get_agent_details}, {@code invoke_agent} and {@code
 * cancel_agent_task}.
 *
 * <p>{@code invoke_agent} waits for the remote task up to its wait (the caller's {@code
 * timeout_seconds}, at most the config's {@code max_wait}, and always within the call's own
 * deadline). A task that ends in time answers its text; one that asks for input or credentials
 * answers what it asks and how to go on; one still working answers its task id at once, and a
 * watcher polls it to its end, stores the result in working memory under the calling session
 * ({@link LateAnswer#key}) and announces it. A call cancelled while it waits cancels the remote
 * task. Everything an agent answers is data for the model, never an instruction to the host.
 * Thread-safe; {@link #close} stops the watchers.
 */
public final class A2aTools implements AutoCloseable {

  /** The tools' source; the {@code a2a_synthesis} profile denies it. */
  public static final String SOURCE = "a2a";

  /** The guide to the tools. */
  public static final ToolGuide GUIDE =
      ToolGuide.fromResource(
          "a2a",
          "How to ask a remote agent to do a task: list_known_agents, get_agent_details,"
              + " invoke_agent (late answers, input-required) and cancel_agent_task.",
          A2aTools.class,
          "guides/a2a.md");

  private static final Logger LOG = LoggerFactory.getLogger(A2aTools.class);
  private static final Duration FIRST_POLL = Duration.ofMillis(200);
  private static final Duration LONGEST_POLL = Duration.ofSeconds(5);

  private final AgentDirectory directory;
  private final A2aClient client;
  private final A2aConfig config;
  private final Optional<WorkingMemory> memory;
  private final AtomicReference<Consumer<LateAnswer>> announcer =
      new AtomicReference<>(answer -> {});
  private final ExecutorService watchers =
      Executors.newThreadPerTaskExecutor(
          Thread.ofVirtual().name("toolhost-a2a-watch-", 0).factory());
  private final Set<String> watched = ConcurrentHashMap.newKeySet();

  /** How many tasks the tools watch for late answers at once, across every session. */
  public static final int MAX_WATCHED = 256;

  private final int maxWatched;

  /** The tools over the directory, storing late answers in the memory when there is one. */
  public A2aTools(
      AgentDirectory directory,
      A2aClient client,
      A2aConfig config,
      Optional<WorkingMemory> memory) {
    this(directory, client, config, memory, MAX_WATCHED);
  }

  A2aTools(
      AgentDirectory directory,
      A2aClient client,
      A2aConfig config,
      Optional<WorkingMemory> memory,
      int maxWatched) {
    this.maxWatched = maxWatched;
    this.directory = Objects.requireNonNull(directory, "directory");
    this.client = Objects.requireNonNull(client, "client");
    this.config = Objects.requireNonNull(config, "config");
    this.memory = Objects.requireNonNull(memory, "memory");
  }

  /** The tools, for a registry. */
  public List<ExecutableTool> tools() {
    return MethodTools.of(this, SOURCE);
  }

  /** Sets what hears late answers once they are stored (the agent loop's synthesis). */
  public void onLateAnswer(Consumer<LateAnswer> listener) {
    announcer.set(Objects.requireNonNull(listener, "listener"));
  }

  /** How many tasks are being watched for a late answer now. */
  public int watching() {
    return watched.size();
  }

  @Tool(
      name = "list_known_agents",
      description =
          "Lists the remote A2A agents this host can call with invoke_agent: each agent's name,"
              + " description, when its card was last fetched, and its skills. With skill, only"
              + " the agents that have a skill whose id, name or tags contain it.",
      readOnly = true,
      destructive = false,
      idempotent = true)
  public String listKnownAgents(
      @Param(description = "A skill id or word to filter by") Optional<String> skill)
      throws InterruptedException {
    ArrayNode list = A2aWire.JSON.createArrayNode();
    String wanted = skill.map(s -> s.strip().toLowerCase(Locale.ROOT)).orElse("");
    for (String name : directory.names()) {
      Optional<AgentCard> card = fetchQuietly(name);
      if (!wanted.isEmpty()
          && card.map(c -> c.skills().stream().noneMatch(s -> matches(s, wanted))).orElse(true)) {
        continue;
      }
      ObjectNode entry = list.addObject();
      entry.put("agent_name", name);
      entry.put("description", card.map(AgentCard::description).orElse("(card not available)"));
      entry.put("last_seen", directory.lastSeen(name).map(Instant::toString).orElse("never"));
      ArrayNode skills = entry.putArray("skills");
      card.ifPresent(
          c ->
              c.skills()
                  .forEach(
                      s ->
                          skills
                              .addObject()
                              .put("id", s.id())
                              .put("description", s.description())));
    }
    return A2aWire.JSON.writerWithDefaultPrettyPrinter().writeValueAsString(list);
  }

  private static boolean matches(AgentCard.Skill skill, String wanted) {
    return skill.id().toLowerCase(Locale.ROOT).contains(wanted)
        || skill.name().toLowerCase(Locale.ROOT).contains(wanted)
        || skill.tags().stream().anyMatch(t -> t.toLowerCase(Locale.ROOT).contains(wanted));
  }

  private Optional<AgentCard> fetchQuietly(String name) throws InterruptedException {
    try {
      return Optional.of(directory.card(name));
    } catch (OutboundException | A2aException e) {
      return directory.cached(name);
    }
  }

  @Tool(
      name = "get_agent_details",
      description =
          "Shows a remote A2A agent's card: its description, protocol version, whether it"
              + " streams, and each skill with its description, tags and example requests.",
      readOnly = true,
      destructive = false,
      idempotent = true)
  public String getAgentDetails(
      @Param(name = "agent_name", description = "The agent's name, from list_known_agents")
          String agentName)
      throws InterruptedException {
    AgentCard card = card(agentName);
    ObjectNode details = A2aWire.JSON.createObjectNode();
    details.put("agent_name", agentName);
    details.put("name", card.name());
    details.put("description", card.description());
    details.put("version", card.version());
    details.put("protocol_version", card.protocol().wireName());
    details.put("streaming", card.streaming());
    ArrayNode skills = details.putArray("skills");
    for (AgentCard.Skill skill : card.skills()) {
      ObjectNode entry = skills.addObject();
      entry.put("id", skill.id());
      entry.put("name", skill.name());
      entry.put("description", skill.description());
      skill.tags().forEach(entry.withArray("tags")::add);
      skill.examples().forEach(entry.withArray("examples")::add);
    }
    return A2aWire.JSON.writerWithDefaultPrettyPrinter().writeValueAsString(details);
  }

  @Tool(
      name = "invoke_agent",
      description =
          "Sends a message to a remote A2A agent and answers what it answers. A task that takes"
              + " longer than timeout_seconds answers its task id at once; its result is stored in"
              + " working memory and announced on your next turn. When the agent asks for input,"
              + " call again with the same task_id and your answer.",
      timeoutSeconds = 660)
  public String invokeAgent(
      ToolCall call,
      @Param(name = "agent_name", description = "The agent's name, from list_known_agents")
          String agentName,
      @Param(description = "What to ask the agent, in plain words") String message,
      @Param(description = "The id of the skill to use, from get_agent_details")
          Optional<String> skill,
      @Param(name = "timeout_seconds", description = "How long to wait before answering a task id")
          Optional<Integer> timeoutSeconds,
      @Param(name = "task_id", description = "The task to continue (one that asked for input)")
          Optional<String> taskId)
      throws InterruptedException {
    if (message.isBlank()) {
      throw ToolException.invalidArguments("'message' is empty: say what to ask the agent.");
    }
    AgentCard card = card(agentName);
    if (skill.isPresent() && card.skill(skill.get()).isEmpty()) {
      throw ToolException.invalidArguments(
          "Agent '"
              + agentName
              + "' has no skill '"
              + skill.get()
              + "'. Its skills: "
              + String.join(", ", card.skills().stream().map(AgentCard.Skill::id).toList())
              + ".");
    }
    if (timeoutSeconds.isPresent() && timeoutSeconds.get() < 1) {
      throw ToolException.invalidArguments("'timeout_seconds' must be at least 1.");
    }
    Duration wait = timeoutSeconds.map(s -> Duration.ofSeconds(s)).orElse(config.defaultWait());
    if (wait.compareTo(config.maxWait()) > 0) {
      wait = config.maxWait();
    }
    Instant deadline = Instant.now().plus(wait);
    Instant callEnd = call.deadline().minusMillis(500);
    if (callEnd.isBefore(deadline)) {
      deadline = callEnd;
    }
    A2aClient.Target target = target(agentName);
    A2aMessage sent = A2aMessage.user(message).in(taskId, Optional.empty());
    Optional<A2aTask> task = Optional.empty();
    try {
      A2aEvent last;
      if (card.streaming()) {
        AtomicReference<Optional<A2aTask>> seen = new AtomicReference<>(Optional.empty());
        Optional<A2aEvent> heard =
            client.stream(
                target,
                sent,
                skill,
                deadline,
                event -> {
                  A2aClient.taskOf(event).ifPresent(t -> seen.set(Optional.of(t)));
                  return true;
                });
        task = seen.get();
        if (heard.isEmpty()) {
          throw new ToolException(
              ErrorCode.EXECUTION_FAILED,
              "Agent '" + agentName + "' ended its stream without answering.");
        }
        last = heard.get();
      } else {
        last = client.send(target, sent, false, skill);
        task = A2aClient.taskOf(last);
        while (task.isPresent() && !settled(task.get()) && Instant.now().isBefore(deadline)) {
          Thread.sleep(
              Math.min(250, Math.max(1, Duration.between(Instant.now(), deadline).toMillis())));
          task = Optional.of(client.get(target, task.get().id()));
        }
      }
      if (last instanceof A2aEvent.Reply reply) {
        return reply.message().text();
      }
      A2aTask now = task.orElseThrow();
      if (settled(now)) {
        return answer(agentName, now);
      }
      return dispatched(call, agentName, target, now);
    } catch (InterruptedException e) {
      // The caller gave up: the remote task is cancelled too, so that it stops working for nobody.
      task.ifPresent(t -> cancelQuietly(target, t.id()));
      throw e;
    } catch (A2aException e) {
      throw refused(agentName, e);
    } catch (OutboundException e) {
      throw unreachable(agentName, e);
    }
  }

  @Tool(
      name = "cancel_agent_task",
      description = "Cancels a task a remote A2A agent is working on, by the id invoke_agent gave.",
      idempotent = true)
  public String cancelAgentTask(
      @Param(name = "agent_name", description = "The agent's name") String agentName,
      @Param(name = "task_id", description = "The task's id") String taskId)
      throws InterruptedException {
    A2aClient.Target target = target(agentName);
    try {
      A2aTask task = client.cancel(target, taskId);
      return "Task " + taskId + " of agent '" + agentName + "' is " + task.state().shown() + ".";
    } catch (A2aException e) {
      if (e.code() == A2aError.TASK_NOT_FOUND.code()) {
        throw ToolException.invalidArguments(
            "Agent '" + agentName + "' knows no task '" + taskId + "' (error " + e.code() + ").");
      }
      if (e.code() == A2aError.TASK_NOT_CANCELABLE.code()) {
        return "Task "
            + taskId
            + " of agent '"
            + agentName
            + "' cannot be cancelled: it has already ended (error "
            + e.code()
            + ").";
      }
      throw refused(agentName, e);
    } catch (OutboundException e) {
      throw unreachable(agentName, e);
    }
  }

  private static boolean settled(A2aTask task) {
    return task.state().terminal() || task.state().interrupted();
  }

  /** What a task that ended or waits answers the model. */
  static String answer(String agentName, A2aTask task) {
    String text = task.text();
    return switch (task.state()) {
      case COMPLETED -> text;
      case INPUT_REQUIRED ->
          "Agent '"
              + agentName
              + "' needs more input for task "
              + task.id()
              + " (input-required): "
              + text
              + "\nTo answer, call invoke_agent again with agent_name '"
              + agentName
              + "', task_id '"
              + task.id()
              + "' and your answer as the message.";
      case AUTH_REQUIRED ->
          "Agent '"
              + agentName
              + "' needs credentials for task "
              + task.id()
              + " (auth-required): "
              + text
              + "\nThe host's operator must configure them (a2a.agents."
              + agentName
              + ".auth_env); tell the user.";
      case CANCELED -> "Task " + task.id() + " of agent '" + agentName + "' was cancelled. " + text;
      case FAILED, REJECTED ->
          "Agent '"
              + agentName
              + "' "
              + (task.state() == TaskState.FAILED ? "failed" : "rejected")
              + " task "
              + task.id()
              + ": "
              + text;
      default -> text;
    };
  }

  private String dispatched(
      ToolCall call, String agentName, A2aClient.Target target, A2aTask task) {
    if (call.sessionId().isEmpty() || memory.isEmpty()) {
      return "Agent '"
          + agentName
          + "' is still working on task "
          + task.id()
          + " ("
          + task.state().shown()
          + "). No session holds a late answer here: call invoke_agent with a longer"
          + " timeout_seconds, or cancel_agent_task.";
    }
    String session = call.sessionId().get();
    String key = LateAnswer.key(session, agentName, task.id());
    if (!watch(session, agentName, target, task)) {
      // Each watcher polls for up to the late-answer time; a model calling in a loop must not
      // start them without end. The remote task is cancelled, so that it does not work for nobody.
      cancelQuietly(target, task.id());
      throw new ToolException(
          ErrorCode.UNAVAILABLE,
          "Agent '"
              + agentName
              + "' did not finish task "
              + task.id()
              + " in time, and the host already awaits "
              + maxWatched
              + " late answers, its most; the task was cancelled. Call invoke_agent again with a"
              + " longer timeout_seconds, or later.");
    }
    return "Task dispatched to agent '"
        + agentName
        + "' with task_id: "
        + task.id()
        + ". It is still working; its result will be stored in working memory at '"
        + key
        + "' and announced on your next turn. Cancel it with cancel_agent_task.";
  }

  /** Starts watching the task; false when as many tasks as the tools may watch are watched. */
  private boolean watch(String session, String agentName, A2aClient.Target target, A2aTask task) {
    String key = LateAnswer.key(session, agentName, task.id());
    synchronized (watched) {
      if (watched.contains(key)) {
        return true;
      }
      if (watched.size() >= maxWatched) {
        return false;
      }
      watched.add(key);
    }
    watchers.execute(
        () -> {
          try {
            Instant giveUp = Instant.now().plus(config.lateAnswerTtl());
            Duration pause = FIRST_POLL;
            A2aTask now = task;
            Optional<String> refused = Optional.empty();
            while (!settled(now) && refused.isEmpty() && Instant.now().isBefore(giveUp)) {
              Thread.sleep(pause.toMillis());
              pause =
                  pause.multipliedBy(2).compareTo(LONGEST_POLL) > 0
                      ? LONGEST_POLL
                      : pause.multipliedBy(2);
              try {
                now = client.get(target, now.id());
              } catch (OutboundException e) {
                LOG.debug(
                    "Polling task {} of agent {} failed; trying again", now.id(), agentName, e);
              } catch (A2aException e) {
                // The agent answered, with an error (most often -32001: it no longer knows the
                // task); asking again will not change that, and the session was promised an answer.
                refused =
                    Optional.of(
                        "Agent '"
                            + agentName
                            + "' answered error "
                            + e.code()
                            + " when asked for task "
                            + now.id()
                            + ": "
                            + e.getMessage());
              }
            }
            A2aTask last = now;
            String text =
                refused.orElseGet(
                    () ->
                        settled(last) ? answer(agentName, last) : "The task did not end in time.");
            memory.orElseThrow().put(key, text, config.lateAnswerTtl(), "a2a");
            announcer
                .get()
                .accept(new LateAnswer(session, agentName, now.id(), key, now.state(), text));
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          } catch (RuntimeException e) {
            LOG.warn("The late answer of task {} of agent {} was lost", task.id(), agentName, e);
          } finally {
            watched.remove(key);
          }
        });
    return true;
  }

  private void cancelQuietly(A2aClient.Target target, String taskId) {
    // On its own thread: the caller's is interrupted, and a blocking call there would fail at once.
    Thread.ofVirtual()
        .start(
            () -> {
              try {
                client.cancel(target, taskId);
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              } catch (RuntimeException e) {
                LOG.debug("Cancelling task {} failed", taskId, e);
              }
            });
  }

  private AgentCard card(String agentName) throws InterruptedException {
    try {
      return directory.card(agentName);
    } catch (IllegalArgumentException e) {
      throw ToolException.invalidArguments(e.getMessage());
    } catch (OutboundException e) {
      throw new ToolException(
          ErrorCode.UNAVAILABLE,
          "The card of agent '" + agentName + "' could not be fetched: " + e.getMessage());
    } catch (A2aException e) {
      throw new ToolException(
          ErrorCode.EXECUTION_FAILED,
          "The card of agent '" + agentName + "' cannot be used: " + e.getMessage());
    }
  }

  /** The failure of a call the agent answered with an error. */
  private static ToolException refused(String agentName, A2aException e) {
    return new ToolException(
        ErrorCode.EXECUTION_FAILED,
        "Agent '" + agentName + "' answered error " + e.code() + ": " + e.getMessage());
  }

  /** The failure of a call that did not reach the agent. */
  private static ToolException unreachable(String agentName, OutboundException e) {
    return new ToolException(
        ErrorCode.UNAVAILABLE, "Agent '" + agentName + "' could not be reached: " + e.getMessage());
  }

  private A2aClient.Target target(String agentName) throws InterruptedException {
    card(agentName);
    return directory.target(agentName);
  }

  @Override
  public void close() {
    watchers.shutdownNow();
  }
}
