package dev.toolhost.a2a;

import dev.toolhost.core.ApiError;
import dev.toolhost.core.spi.Principal;
import dev.toolhost.core.spi.Route;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.NullNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The A2A server publishes the host's configured agents over A2A: a card per agent at {@code
 * /a2a/{agent}/.well-known/agent-card.json} naming the public URL, and JSON-RPC of both versions at
 * {@code /a2a/{agent}} (send, stream over server-sent events, get, cancel), the version chosen by
 * the {@code A2A-Version} header.
 *
 * <p>Each message starts a task (or continues one that asked for input) that runs the agent on a
 * virtual thread; a blocking send waits for it up to the configured time. Tasks are kept in a
 * bounded store: past its size the oldest finished task goes first, then the oldest at all
 * (cancelled). Errors are the protocol's: -32001 for an unknown task, -32002 for cancelling an
 * ended one, -32601 for a method the version does not have, -32009 for a version not spoken here.
 * Its routes sit behind the host's request guard. Thread-safe; {@link #close} cancels what runs.
 */
public final class A2aServer implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(A2aServer.class);

  /** Runs one of the host's agents on a message, in a context, and answers its text. */
  @FunctionalInterface
  public interface AgentRunner {
    /**
     * The agent's answer.
     *
     * @param context the conversation's key on this host: the calling principal's name and the
     *     message's {@code contextId} ({@code alice/ctx-1}), so that two callers' contexts of one
     *     id are two conversations
     * @param principal the calling principal: the agent's calls are made as its user
     * @throws InterruptedException when the task is cancelled
     */
    String run(String agent, String context, Principal principal, String message)
        throws InterruptedException;
  }

  /**
   * What a card says of one of the host's agents, and the profile it runs under.
   *
   * @param name the agent's name
   * @param description what it does
   * @param profile the profile the agent runs under: only a principal that may use it may read the
   *     card or talk to the agent
   * @param skills its skills: its own, and its tools
   */
  public record Published(
      String name, String description, String profile, List<AgentCard.Skill> skills) {
    public Published {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(description, "description");
      Objects.requireNonNull(profile, "profile");
      skills = List.copyOf(skills);
    }
  }

  private static final java.util.regex.Pattern CONTEXT_ID =
      java.util.regex.Pattern.compile("[A-Za-z0-9._-]{1,128}");

  private final A2aConfig.Server settings;
  private final Function<String, Optional<Published>> agents;
  private final AgentRunner runner;
  private final Map<String, Entry> tasks = new LinkedHashMap<>();

  private static final class Entry {
    volatile A2aTask task;
    final String agent;
    // The principal that started the task: no other may read, continue or cancel it, and the
    // agent's calls are made as its user.
    final Principal principal;
    final String owner;
    volatile Thread thread;
    volatile CompletableFuture<A2aTask> done = new CompletableFuture<>();

    Entry(A2aTask task, String agent, Principal principal) {
      this.task = task;
      this.agent = agent;
      this.principal = principal;
      this.owner = principal.name();
    }
  }

  /** A server of the agents the function finds, run by the runner. */
  public A2aServer(
      A2aConfig.Server settings, Function<String, Optional<Published>> agents, AgentRunner runner) {
    this.settings = Objects.requireNonNull(settings, "settings");
    this.agents = Objects.requireNonNull(agents, "agents");
    this.runner = Objects.requireNonNull(runner, "runner");
  }

  /** The routes: each agent's card and its JSON-RPC endpoint. */
  public List<Route> routes() {
    return List.of(cardRoute, rpcRoute);
  }

  private final Route cardRoute =
      new Route("GET", "/a2a/{agent}/.well-known/agent-card.json", this::card);
  private final Route rpcRoute = new Route("POST", "/a2a/{agent}", this::rpc);

  /** How many tasks the store holds. */
  public synchronized int taskCount() {
    return tasks.size();
  }

  private String base(String agent) {
    String url = settings.publicUrl().toString();
    return (url.endsWith("/") ? url.substring(0, url.length() - 1) : url) + "/a2a/" + agent;
  }

  Route.Answer card(Route.Request request) {
    String name = cardRoute.variable(request.path()).orElseThrow();
    Optional<Published> agent = agents.apply(name);
    if (agent.isEmpty()) {
      return Route.Answer.error(ApiError.NOT_FOUND, "No agent '" + name + "' is published here.");
    }
    Principal principal = request.principal();
    if (!principal.mayUse(agent.get().profile())) {
      return Route.Answer.error(
          ApiError.FORBIDDEN, principal.profileRefusal(agent.get().profile()));
    }
    return Route.Answer.json(A2aWire.JSON.writeValueAsString(cardOf(agent.get())));
  }

  /** The card of one agent: both versions' fields, 1.0's interface first. */
  ObjectNode cardOf(Published agent) {
    String url = base(agent.name());
    ObjectNode card = A2aWire.JSON.createObjectNode();
    card.put("name", agent.name());
    card.put("description", agent.description());
    card.put("url", url);
    card.put("version", "0.1.0");
    card.put("protocolVersion", "0.3.0");
    card.put("preferredTransport", "JSONRPC");
    var interfaces = card.putArray("supportedInterfaces");
    interfaces
        .addObject()
        .put("url", url)
        .put("protocolBinding", "JSONRPC")
        .put("protocolVersion", "1.0");
    interfaces
        .addObject()
        .put("url", url)
        .put("protocolBinding", "JSONRPC")
        .put("protocolVersion", "0.3");
    card.putArray("additionalInterfaces").addObject().put("url", url).put("transport", "JSONRPC");
    card.putObject("capabilities")
        .put("streaming", true)
        .put("pushNotifications", false)
        .put("stateTransitionHistory", false);
    card.putArray("defaultInputModes").add("text/plain");
    card.putArray("defaultOutputModes").add("text/plain");
    var skills = card.putArray("skills");
    for (AgentCard.Skill skill : agent.skills()) {
      ObjectNode node = skills.addObject();
      node.put("id", skill.id());
      node.put("name", skill.name());
      node.put("description", skill.description());
      skill.tags().forEach(node.putArray("tags")::add);
      if (!node.has("tags")) {
        node.putArray("tags");
      }
      skill.examples().forEach(node.withArray("examples")::add);
    }
    return card;
  }

  Route.Answer rpc(Route.Request request) throws InterruptedException {
    String agent = rpcRoute.variable(request.path()).orElseThrow();
    JsonNode id = NullNode.getInstance();
    try {
      JsonNode body;
      try {
        body = A2aWire.JSON.readTree(request.body());
      } catch (JacksonException e) {
        throw new A2aException(A2aError.PARSE_ERROR, "The body is not valid JSON.");
      }
      if (body == null || !body.isObject()) {
        throw new A2aException(A2aError.INVALID_REQUEST, "A JSON-RPC request is an object.");
      }
      id = body.has("id") ? body.get("id") : NullNode.getInstance();
      Optional<String> header = request.header(A2aVersion.HEADER);
      A2aVersion version =
          A2aVersion.fromHeader(header)
              .orElseThrow(
                  () ->
                      new A2aException(
                          A2aError.VERSION_NOT_SUPPORTED,
                          "A2A-Version '"
                              + header.orElse("")
                              + "' is not supported; this server speaks 0.3 and 1.0."));
      if (!body.path("jsonrpc").asString("").equals("2.0") || !body.path("method").isString()) {
        throw new A2aException(
            A2aError.INVALID_REQUEST,
            "A JSON-RPC request needs \"jsonrpc\": \"2.0\" and a \"method\".");
      }
      String method = body.get("method").asString();
      A2aVersion.Operation operation =
          version
              .operation(method)
              .orElseThrow(
                  () ->
                      new A2aException(
                          A2aError.METHOD_NOT_FOUND,
                          "Method '"
                              + method
                              + "' does not exist in A2A "
                              + version.wireName()
                              + "; its methods are "
                              + String.join(
                                  ", ",
                                  java.util.Arrays.stream(A2aVersion.Operation.values())
                                      .map(version::method)
                                      .toList())
                              + "."));
      Published published =
          agents
              .apply(agent)
              .orElseThrow(
                  () ->
                      new A2aException(
                          A2aError.INVALID_PARAMS, "No agent '" + agent + "' is published here."));
      Principal principal = request.principal();
      if (!principal.mayUse(published.profile())) {
        // The agent runs under its profile: a principal that may not use it may not talk to it.
        return new Route.Answer(
            ApiError.FORBIDDEN.status(),
            "application/json",
            A2aWire.JSON.writeValueAsBytes(
                A2aWire.failure(
                    id, A2aError.FORBIDDEN.code(), principal.profileRefusal(published.profile()))));
      }
      JsonNode params = body.path("params");
      String owner = principal.name();
      return switch (operation) {
        case SEND ->
            ok(
                id,
                A2aWire.event(send(agent, principal, params, A2aWire.blocking(params)), version));
        case STREAM -> stream(agent, principal, id, params, version);
        case GET -> ok(id, A2aWire.task(find(agent, owner, A2aWire.taskId(params)).task, version));
        case CANCEL -> ok(id, A2aWire.task(cancel(agent, owner, A2aWire.taskId(params)), version));
      };
    } catch (A2aException e) {
      return Route.Answer.json(
          A2aWire.JSON.writeValueAsString(A2aWire.failure(id, e.code(), e.getMessage())));
    }
  }

  private static Route.Answer ok(JsonNode id, JsonNode result) {
    return Route.Answer.json(A2aWire.JSON.writeValueAsString(A2aWire.success(id, result)));
  }

  private A2aEvent send(String agent, Principal owner, JsonNode params, boolean blocking)
      throws InterruptedException {
    Entry entry = start(agent, owner, params);
    if (blocking) {
      try {
        entry.done.get(settings.sendWait().toMillis(), TimeUnit.MILLISECONDS);
      } catch (TimeoutException | ExecutionException e) {
        // The task as it stands is the answer.
      }
    }
    return new A2aEvent.TaskSnapshot(entry.task);
  }

  private Entry start(String agent, Principal owner, JsonNode params) {
    A2aMessage message = A2aWire.readMessage(params.path("message"));
    Entry entry;
    if (message.taskId().isPresent()) {
      entry = find(agent, owner.name(), message.taskId().get());
      synchronized (entry) {
        if (entry.task.state().terminal()) {
          throw new A2aException(
              A2aError.INVALID_PARAMS,
              "Task " + entry.task.id() + " has ended (" + entry.task.state().shown() + ").");
        }
        if (entry.thread != null && entry.thread.isAlive()) {
          throw new A2aException(
              A2aError.INVALID_PARAMS, "Task " + entry.task.id() + " is still working.");
        }
        entry.done = new CompletableFuture<>();
        entry.task = entry.task.with(TaskState.WORKING, Optional.empty());
      }
    } else {
      String contextId = message.contextId().orElseGet(() -> UUID.randomUUID().toString());
      if (!CONTEXT_ID.matcher(contextId).matches()) {
        // It names the agent's conversation and its working-memory namespace.
        throw new A2aException(
            A2aError.INVALID_PARAMS,
            "The message's contextId must be 1 to 128 of A-Z a-z 0-9 . _ - (it was '"
                + contextId.substring(0, Math.min(40, contextId.length()))
                + "').");
      }
      A2aTask task =
          new A2aTask(
              UUID.randomUUID().toString(),
              contextId,
              TaskState.SUBMITTED,
              Optional.empty(),
              List.of());
      entry = new Entry(task, agent, owner);
      store(entry);
    }
    Entry running = entry;
    running.thread =
        Thread.ofVirtual()
            .name("toolhost-a2a-task-" + running.task.id())
            .start(() -> execute(running, message.text()));
    return running;
  }

  private void execute(Entry entry, String text) {
    synchronized (entry) {
      if (entry.task.state().terminal()) {
        entry.done.complete(entry.task);
        return;
      }
      entry.task = entry.task.with(TaskState.WORKING, Optional.empty());
    }
    A2aTask finished;
    try {
      String answer =
          runner.run(
              entry.agent, entry.owner + "/" + entry.task.contextId(), entry.principal, text);
      A2aTask base = entry.task;
      finished =
          base.withArtifact(new A2aTask.Artifact(UUID.randomUUID().toString(), "answer", answer))
              .with(
                  TaskState.COMPLETED,
                  Optional.of(A2aMessage.agent(answer, base.id(), base.contextId())));
    } catch (InterruptedException e) {
      finished =
          entry.task.with(
              TaskState.CANCELED,
              Optional.of(
                  A2aMessage.agent(
                      "The task was cancelled.", entry.task.id(), entry.task.contextId())));
    } catch (RuntimeException e) {
      LOG.warn("A2A task {} of agent {} failed", entry.task.id(), entry.agent, e);
      finished =
          entry.task.with(
              TaskState.FAILED,
              Optional.of(
                  A2aMessage.agent(
                      "The agent failed; the failure was logged.",
                      entry.task.id(),
                      entry.task.contextId())));
    }
    synchronized (entry) {
      if (!entry.task.state().terminal()) {
        entry.task = finished;
      }
      entry.done.complete(entry.task);
    }
  }

  /** The task of that id the owner started with the agent; another's is as one that never was. */
  private Entry find(String agent, String owner, String taskId) {
    Entry entry;
    synchronized (this) {
      entry = tasks.get(taskId);
    }
    if (entry == null || !entry.agent.equals(agent) || !entry.owner.equals(owner)) {
      throw new A2aException(A2aError.TASK_NOT_FOUND, "Task '" + taskId + "' was not found.");
    }
    return entry;
  }

  private A2aTask cancel(String agent, String owner, String taskId) {
    Entry entry = find(agent, owner, taskId);
    synchronized (entry) {
      if (entry.task.state().terminal()) {
        throw new A2aException(
            A2aError.TASK_NOT_CANCELABLE,
            "Task "
                + taskId
                + " cannot be canceled: it has already ended ("
                + entry.task.state().shown()
                + ").");
      }
      entry.task =
          entry.task.with(
              TaskState.CANCELED,
              Optional.of(
                  A2aMessage.agent("The task was cancelled.", taskId, entry.task.contextId())));
      Thread thread = entry.thread;
      if (thread != null) {
        thread.interrupt();
      }
      entry.done.complete(entry.task);
      return entry.task;
    }
  }

  /**
   * Keeps a new task, dropping the oldest ended one when the store is full. A store full of tasks
   * still running refuses the new one: dropping a running task would cancel another caller's work.
   */
  private synchronized void store(Entry entry) {
    if (tasks.size() >= settings.maxTasks()) {
      Iterator<Map.Entry<String, Entry>> oldest = tasks.entrySet().iterator();
      boolean dropped = false;
      while (oldest.hasNext() && !dropped) {
        if (oldest.next().getValue().task.state().terminal()) {
          oldest.remove();
          dropped = true;
        }
      }
      if (!dropped) {
        throw new A2aException(
            A2aError.INTERNAL_ERROR,
            "This agent is running its most tasks at once ("
                + settings.maxTasks()
                + "); send again once one has ended.");
      }
    }
    tasks.put(entry.task.id(), entry);
  }

  private Route.Answer stream(
      String agent, Principal owner, JsonNode id, JsonNode params, A2aVersion version) {
    Entry entry = start(agent, owner, params);
    return Route.Answer.eventStream(
        out -> {
          event(out, id, new A2aEvent.TaskSnapshot(entry.task), version);
          A2aTask ended;
          try {
            ended = entry.done.get(settings.sendWait().toMillis(), TimeUnit.MILLISECONDS);
          } catch (TimeoutException e) {
            // The stream ends here; the task goes on and can be got.
            event(out, id, new A2aEvent.StatusUpdate(entry.task, true), version);
            return;
          }
          for (A2aTask.Artifact artifact : ended.artifacts()) {
            event(out, id, new A2aEvent.ArtifactUpdate(ended, artifact), version);
          }
          event(out, id, new A2aEvent.StatusUpdate(ended, true), version);
        });
  }

  private static void event(OutputStream out, JsonNode id, A2aEvent event, A2aVersion version)
      throws java.io.IOException {
    String data =
        A2aWire.JSON.writeValueAsString(A2aWire.success(id, A2aWire.event(event, version)));
    out.write(("data: " + data + "\n\n").getBytes(StandardCharsets.UTF_8));
    out.flush();
  }

  @Override
  public void close() {
    List<Entry> running;
    synchronized (this) {
      running = new ArrayList<>(tasks.values());
    }
    for (Entry entry : running) {
      Thread thread = entry.thread;
      if (thread != null) {
        thread.interrupt();
      }
    }
  }
}
