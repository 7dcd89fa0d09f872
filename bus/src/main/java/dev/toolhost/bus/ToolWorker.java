package dev.toolhost.bus;

import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolSet;
import dev.toolhost.core.ToolSpec;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * A tool worker hosts the tools of a registry for remote callers: it consumes its group's queue
 * {@code toolhost.invoke.{group}} (workers of one group compete for it, so a tool scales by
 * starting more workers) and announces its tools on {@value #ANNOUNCE_TOPIC} when it starts, on a
 * heartbeat, and with a goodbye when it closes.
 *
 * <p>It hosts and announces every tool of its registry, so that registry should hold only the tools
 * meant for remote callers: not built-ins every host has of its own (the guide tools of {@code
 * ToolGuides}), whose names a host already holds and would report as a clash.
 *
 * <p>A worker that bridges MCP servers ({@link #mcpServers}) announces them too, and marks each of
 * their tools with its server, so that hosts register those tools with source {@code mcp:{server}}
 * and their MCP management tools see the servers.
 *
 * <p>Requests are handled by an {@link InvokeHandler}, at most {@code concurrency} at once. With a
 * result store that is not {@linkplain ResultStore#shared shared} (in-memory), a request delivered
 * again to this worker is answered from its run, but one delivered to another worker of the group
 * runs again there; the worker logs that warning once, when it starts. It hears {@linkplain
 * CallCancel cancels} on {@code toolhost.cancel.{group}} from before it consumes: the call a cancel
 * names stops here if it runs here, and is answered {@code cancelled} without running if its
 * request comes later. Thread-safe; {@link #close()} says goodbye and stops consuming, and requests
 * still running go back to the queue for another worker.
 */
public final class ToolWorker implements AutoCloseable {

  /** The topic on which workers and tool services announce themselves. */
  public static final String ANNOUNCE_TOPIC = "toolhost.announce";

  private static final Logger LOG = LoggerFactory.getLogger(ToolWorker.class);
  private static final JsonMapper JSON = JsonMapper.shared();

  private final MessageBus bus;
  private final String group;
  private final String workerId = UUID.randomUUID().toString();
  private final ToolRegistry registry;
  private final InvokeHandler handler;
  private final int concurrency;
  private final Duration heartbeat;
  private final boolean sharedResults;
  private volatile Supplier<List<McpServerState>> mcpServers;
  private volatile String mcpRegister = "none";
  private Subscription subscription;
  private Subscription cancels;
  private Thread heartbeats;
  private boolean closed;

  /**
   * A worker for the group, hosting every tool of the registry, whose claims on calls are leases of
   * {@link ResultStore#DEFAULT_LEASE}.
   *
   * @param results where finished results are remembered, for redelivered requests
   * @param concurrency how many requests may run at once
   * @param heartbeat how often the worker announces itself
   */
  public ToolWorker(
      MessageBus bus,
      String group,
      ToolRegistry registry,
      ToolDispatcher dispatcher,
      ResultStore results,
      int concurrency,
      Duration heartbeat) {
    this(
        bus,
        group,
        registry,
        dispatcher,
        results,
        concurrency,
        heartbeat,
        ResultStore.DEFAULT_LEASE);
  }

  /**
   * A worker for the group, hosting every tool of the registry.
   *
   * @param results where finished results are remembered, for redelivered requests
   * @param concurrency how many requests may run at once
   * @param heartbeat how often the worker announces itself
   * @param lease how long the worker's claim on a call holds unless renewed (it renews it every
   *     third of that while the call runs): a call of a worker that died waits about that long
   *     before another worker of the group takes it over
   */
  public ToolWorker(
      MessageBus bus,
      String group,
      ToolRegistry registry,
      ToolDispatcher dispatcher,
      ResultStore results,
      int concurrency,
      Duration heartbeat,
      Duration lease) {
    this.bus = Objects.requireNonNull(bus, "bus");
    this.group = Objects.requireNonNull(group, "group");
    if (!group.matches("[a-z0-9_.-]{1,64}")) {
      throw new IllegalArgumentException(
          "Worker group '" + group + "' is invalid: expected 1 to 64 of a-z, 0-9, '_', '-', '.'.");
    }
    this.registry = Objects.requireNonNull(registry, "registry");
    this.concurrency = concurrency;
    this.heartbeat = Objects.requireNonNull(heartbeat, "heartbeat");
    this.sharedResults = Objects.requireNonNull(results, "results").shared();
    this.handler =
        new InvokeHandler(
            bus,
            group,
            ToolSet.of(registry, ToolProfiles.MAIN),
            dispatcher,
            results,
            Duration.ofMinutes(10),
            lease);
  }

  /** The queue the workers of a group consume. */
  public static String queue(String group) {
    return "toolhost.invoke." + group;
  }

  /** This worker's group. */
  public String group() {
    return group;
  }

  /** This worker's id, unique per process start. */
  public String workerId() {
    return workerId;
  }

  /**
   * Tells the worker which MCP servers its tools come from, asked at every announcement: it
   * announces each server's state and marks each server's tools with the server's name and the
   * tool's name on the server. Set it before {@link #start}.
   */
  public ToolWorker mcpServers(Supplier<List<McpServerState>> servers) {
    this.mcpServers = Objects.requireNonNull(servers, "servers");
    return this;
  }

  /**
   * Tells hosts which MCP servers a model may register on this worker at run time ({@code none},
   * {@code http} or {@code stdio}: its config's {@code mcp.allow_register}); announced with its
   * servers. The worker hosts the registration tools (source {@value
   * McpServerState#MANAGEMENT_SOURCE}) without announcing them.
   */
  public ToolWorker mcpRegistration(String allowed) {
    this.mcpRegister = Objects.requireNonNull(allowed, "allowed");
    return this;
  }

  /** Announces the worker now, as at a heartbeat: after its tools changed, say. */
  public void announceNow() {
    synchronized (this) {
      if (subscription == null || closed) {
        return;
      }
    }
    announce();
  }

  /** Declares the group's queue, starts consuming it, and announces the worker. */
  public synchronized ToolWorker start() {
    if (subscription != null || closed) {
      throw new IllegalStateException("The worker is already started, or closed.");
    }
    bus.declareQueue(queue(group));
    // Cancels first: one published once the worker consumes is heard.
    cancels = bus.subscribe(CallCancel.topic(group), handler::cancel);
    subscription = bus.consume(queue(group), concurrency, handler);
    announce();
    heartbeats =
        Thread.ofVirtual()
            .name("toolhost-worker-heartbeat")
            .start(
                () -> {
                  try {
                    while (!Thread.currentThread().isInterrupted()) {
                      Thread.sleep(heartbeat);
                      announce();
                    }
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                  }
                });
    LOG.info(
        "Worker {} of group '{}' consuming {} with tools: {}",
        workerId,
        group,
        queue(group),
        String.join(", ", registry.specs().stream().map(ToolSpec::name).toList()));
    // Within one process (the in-memory bus) nothing is delivered to another worker again.
    if (!sharedResults && bus.spansProcesses()) {
      LOG.warn(
          "Worker {} of group '{}' keeps call results in this process only: a call in flight when"
              + " the broker connection drops is delivered again, and when another worker of the"
              + " group (or this one after a restart) gets it, it runs and may finish twice. For"
              + " calls that finish once across the group, share results in Redis: toolhost"
              + " worker --results-redis URI (a RedisResultStore).",
          workerId,
          group);
    }
    return this;
  }

  private void announce() {
    ObjectNode body = JSON.createObjectNode();
    body.put("type", "announce");
    body.put("worker_id", workerId);
    body.put("group", group);
    body.put("heartbeat_ms", heartbeat.toMillis());
    // The MCP server of each tool that comes from one, and the tool's name on it.
    Map<String, String[]> bridged = new HashMap<>();
    List<McpServerState> servers = List.of();
    if (mcpServers != null) {
      try {
        servers = mcpServers.get();
      } catch (RuntimeException e) {
        LOG.warn("Worker {} could not list its MCP servers: {}", workerId, e.toString());
      }
      body.put("mcp_register", mcpRegister);
      ArrayNode list = body.putArray("mcp_servers");
      for (McpServerState server : servers) {
        ObjectNode entry = list.addObject();
        entry.put("name", server.name());
        entry.put("state", server.state());
        entry.put("endpoint", server.endpoint());
        if (!server.lastError().isEmpty()) {
          entry.put("last_error", server.lastError());
        }
        server
            .tools()
            .forEach(
                (hosted, onServer) -> bridged.put(hosted, new String[] {server.name(), onServer}));
      }
    }
    ArrayNode tools = body.putArray("tools");
    for (ExecutableTool executable : registry.tools()) {
      ToolSpec spec = executable.spec();
      if (spec.source().equals(McpServerState.MANAGEMENT_SOURCE)) {
        // Reached by a host's own management tools, never a tool of its own.
        continue;
      }
      ObjectNode tool = tools.addObject();
      tool.put("name", spec.name());
      tool.put("description", spec.description());
      tool.set("parameters", spec.parameters());
      Annotations.write(spec.annotations(), tool);
      executable.timeout().ifPresent(timeout -> tool.put("timeout_ms", timeout.toMillis()));
      String[] server = bridged.get(spec.name());
      if (server != null) {
        tool.put("mcp_server", server[0]);
        tool.put("mcp_tool", server[1]);
      }
    }
    try {
      bus.publish(ANNOUNCE_TOPIC, Message.of(body.toString()));
    } catch (BusException e) {
      LOG.warn("Worker {} could not announce itself: {}", workerId, e.getMessage());
    }
  }

  /**
   * Says goodbye, stops the heartbeat, and stops consuming; the claims of calls still running are
   * renewed until they finish, so that the worker that gets them next waits for their results.
   */
  @Override
  public void close() {
    Subscription consuming;
    Subscription hearing;
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      consuming = subscription;
      hearing = cancels;
    }
    if (heartbeats != null) {
      heartbeats.interrupt();
    }
    if (consuming != null) {
      try {
        ObjectNode body = JSON.createObjectNode();
        body.put("type", "goodbye");
        body.put("worker_id", workerId);
        body.put("group", group);
        bus.publish(ANNOUNCE_TOPIC, Message.of(body.toString()));
      } catch (BusException e) {
        LOG.warn("Worker {} could not say goodbye: {}", workerId, e.getMessage());
      }
      consuming.close();
    }
    if (hearing != null) {
      hearing.close();
    }
    handler.close();
  }
}
