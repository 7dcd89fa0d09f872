package dev.toolhost.bus;

import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * Remote tools are the tools that workers announce, kept in a host's registry while a worker of
 * their group is alive: the host side of self-announcement.
 *
 * <p>It listens on {@value ToolWorker#ANNOUNCE_TOPIC}. A worker's announcement registers its tools
 * with source {@code remote:{group}} and a {@link RemoteToolExecutor}; two workers of one group
 * announcing the same tool are one tool; when they announce different definitions of it, the
 * definition of the worker that joined last is the one registered (replaced in one step, see {@link
 * ToolRegistry#replace}). A tool is unregistered when the last worker hosting it says goodbye or
 * misses three heartbeats. A tool whose name is taken by another source is not registered, with a
 * warning logged once for that name and group (not on every heartbeat), naming the source that has
 * the name: another group, or a built-in of the host; the warning comes again only if the clash
 * ends and begins anew. Tool-service announcements go to the {@link ToolServices} given, if any.
 *
 * <p>A tool a worker marks with an MCP server ({@code mcp_server}) is registered with source {@code
 * mcp:{server}} instead, and called with the server's name in the request's {@code
 * toolhost_mcp_server} header; the servers the workers announce are listed by {@link
 * #mcpServers()}, by group, and a server whose group has no live worker left stays listed as {@link
 * RemoteMcpServer#UNAVAILABLE} until a worker of that group announces again.
 *
 * <p>Each change logs one line at INFO: the tools a worker's announcement registered, or the tools
 * unregistered when a worker left. Thread-safe.
 */
public final class RemoteTools implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(RemoteTools.class);
  private static final JsonMapper JSON = JsonMapper.shared();
  private static final int MISSED_HEARTBEATS = 3;

  private final MessageBus bus;
  private final ToolRegistry registry;
  private final ToolServices services;
  private final Map<String, Worker> workers = new HashMap<>();
  private final Map<String, Set<String>> hostsOf = new HashMap<>();
  // The group whose workers host each registered tool.
  private final Map<String, String> groupOf = new HashMap<>();
  // The MCP servers of groups whose last worker left, by group, as they were then.
  private final Map<String, List<RemoteMcpServer>> departed = new HashMap<>();
  private final List<Runnable> mcpListeners = new CopyOnWriteArrayList<>();
  // Tool name and group of each clash already logged, to the source that holds the name.
  private final Map<List<String>, String> clashes = new HashMap<>();
  private Subscription subscription;
  private Thread reaper;

  private record Worker(
      String group,
      Set<String> tools,
      Map<String, McpServerState> mcpServers,
      String mcpRegister,
      long lapsesAtNanos) {}

  /** Remote tools for the registry, with tool-service announcements going to {@code services}. */
  public RemoteTools(MessageBus bus, ToolRegistry registry, ToolServices services) {
    this.bus = Objects.requireNonNull(bus, "bus");
    this.registry = Objects.requireNonNull(registry, "registry");
    this.services = Objects.requireNonNull(services, "services");
  }

  /** Starts listening for announcements. */
  public synchronized RemoteTools start() {
    subscription =
        bus.subscribe(
            ToolWorker.ANNOUNCE_TOPIC,
            delivery -> {
              delivery.ack();
              heard(delivery.message().body());
            });
    reaper =
        Thread.ofVirtual()
            .name("toolhost-remote-tools-reaper")
            .start(
                () -> {
                  try {
                    while (!Thread.currentThread().isInterrupted()) {
                      Thread.sleep(200);
                      reap();
                    }
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                  }
                });
    return this;
  }

  /** Handles one announcement's JSON text; anything that is not one is logged and ignored. */
  void heard(String text) {
    JsonNode body;
    try {
      body = JSON.readTree(text);
    } catch (JacksonException e) {
      LOG.warn("Ignored an announcement that is not JSON: {}", e.getOriginalMessage());
      return;
    }
    if (body == null || !body.isObject()) {
      LOG.warn("Ignored an announcement that is not a JSON object");
      return;
    }
    if (body.has("service")) {
      services.heard(body);
      return;
    }
    String type = body.path("type").asString("");
    String workerId = body.path("worker_id").asString("");
    String group = body.path("group").asString("");
    if (workerId.isEmpty() || group.isEmpty()) {
      LOG.warn("Ignored an announcement with no worker_id or group");
      return;
    }
    switch (type) {
      case "announce" -> announced(workerId, group, body);
      case "goodbye" -> gone(workerId, "said goodbye");
      default -> LOG.warn("Ignored an announcement of unknown type '{}'", type);
    }
  }

  /**
   * The timeout an announced tool names ({@code timeout_ms}, a positive whole number of
   * milliseconds), if it names a valid one; an invalid one is logged and ignored, so the tool keeps
   * the default.
   */
  private static Optional<Duration> timeout(String workerId, String tool, JsonNode timeoutMs) {
    if (timeoutMs == null || timeoutMs.isNull()) {
      return Optional.empty();
    }
    if (timeoutMs.isIntegralNumber() && timeoutMs.canConvertToLong() && timeoutMs.asLong() > 0) {
      return Optional.of(Duration.ofMillis(timeoutMs.asLong()));
    }
    LOG.warn(
        "Tool '{}' announced by worker {} has timeout_ms {} (expected a positive whole number of"
            + " milliseconds); it gets the default timeout",
        tool,
        workerId,
        timeoutMs);
    return Optional.empty();
  }

  private synchronized void announced(String workerId, String group, JsonNode body) {
    long interval = Math.max(100, body.path("heartbeat_ms").asLong(5_000));
    Map<String, ToolSpec> specs = new LinkedHashMap<>();
    Map<String, Duration> timeouts = new HashMap<>();
    Map<String, McpServerState> servers = mcpServers(workerId, body, group);
    String register = body.path("mcp_register").asString("none");
    for (JsonNode tool : body.path("tools")) {
      try {
        JsonNode parameters = tool.path("parameters");
        String name = tool.path("name").asString("");
        McpServerState server =
            servers.get(tool.path("mcp_server").asString("").toLowerCase(Locale.ROOT));
        if (tool.hasNonNull("mcp_server") && server == null) {
          throw new IllegalArgumentException(
              "tool '"
                  + name
                  + "' names MCP server '"
                  + tool.path("mcp_server").asString("")
                  + "', which the worker does not announce in mcp_servers");
        }
        ToolSpec spec =
            new ToolSpec(
                name,
                tool.path("description").asString(""),
                parameters.isObject()
                    ? (ObjectNode) parameters
                    : JSON.createObjectNode().put("type", "object"),
                server == null
                    ? RemoteToolExecutor.source(group)
                    : McpServerState.source(server.name()),
                Annotations.read(tool));
        specs.put(spec.name(), spec);
        timeout(workerId, spec.name(), tool.get("timeout_ms"))
            .ifPresent(timeout -> timeouts.put(spec.name(), timeout));
      } catch (IllegalArgumentException e) {
        LOG.warn("Ignored a tool announced by worker {}: {}", workerId, e.getMessage());
      }
    }
    Worker before = workers.get(workerId);
    Set<String> hosted = new HashSet<>();
    List<String> registered = new ArrayList<>();
    for (ToolSpec spec : specs.values()) {
      Set<String> hosts = hostsOf.get(spec.name());
      if (hosts == null) {
        ExecutableTool tool;
        try {
          tool = executable(spec, group, timeouts.get(spec.name()));
        } catch (IllegalArgumentException e) {
          LOG.warn(
              "Tool '{}' of group '{}' is not registered: {}", spec.name(), group, e.getMessage());
          continue;
        }
        if (!registry.registerIfAbsent(tool)) {
          clash(spec.name(), group, workerId);
          continue;
        }
        clashes.remove(List.of(spec.name(), group));
        hosts = new HashSet<>();
        hostsOf.put(spec.name(), hosts);
        groupOf.put(spec.name(), group);
        registered.add(spec.name());
      } else {
        Optional<ExecutableTool> ours =
            registry
                .find(spec.name())
                .filter(
                    t ->
                        t.spec().source().equals(spec.source())
                            && group.equals(groupOf.get(t.name())));
        if (ours.isEmpty()) {
          clash(spec.name(), group, workerId);
          continue;
        }
        if (before == null) {
          adopt(workerId, group, ours.get(), spec, timeouts.get(spec.name()));
        }
      }
      hosts.add(workerId);
      hosted.add(spec.name());
    }
    registered.sort(null);
    if (!registered.isEmpty()) {
      LOG.info(
          "Registered remote tools of group '{}', announced by worker {}: {}",
          group,
          workerId,
          String.join(", ", registered));
    }
    if (before != null) {
      List<String> dropped = new ArrayList<>();
      for (String tool : before.tools()) {
        if (!hosted.contains(tool) && drop(workerId, tool)) {
          dropped.add(tool);
        }
      }
      dropped.sort(null);
      if (!dropped.isEmpty()) {
        LOG.info(
            "Unregistered remote tools of group '{}' that worker {} no longer announces and no"
                + " other worker hosts: {}",
            group,
            workerId,
            String.join(", ", dropped));
      }
    }
    workers.put(
        workerId,
        new Worker(
            group,
            hosted,
            servers,
            register,
            System.nanoTime() + Duration.ofMillis(interval * MISSED_HEARTBEATS).toNanos()));
    boolean news = departed.remove(group) != null;
    if (before == null
        ? !servers.isEmpty() || !register.equals("none")
        : !before.mcpServers().keySet().equals(servers.keySet())
            || !before.mcpRegister().equals(register)) {
      news = true;
    }
    if (news) {
      mcpChanged();
    }
  }

  /** The MCP servers an announcement lists, by lower-case name; invalid entries are logged. */
  private static Map<String, McpServerState> mcpServers(
      String workerId, JsonNode body, String group) {
    Map<String, Map<String, String>> toolsOf = new HashMap<>();
    for (JsonNode tool : body.path("tools")) {
      String server = tool.path("mcp_server").asString("");
      if (!server.isEmpty()) {
        toolsOf
            .computeIfAbsent(server.toLowerCase(Locale.ROOT), key -> new HashMap<>())
            .put(
                tool.path("name").asString(""),
                tool.path("mcp_tool").asString(tool.path("name").asString("")));
      }
    }
    Map<String, McpServerState> servers = new TreeMap<>();
    for (JsonNode server : body.path("mcp_servers")) {
      try {
        String name = server.path("name").asString("");
        McpServerState state =
            new McpServerState(
                name,
                server.path("state").asString("connected"),
                server.path("endpoint").asString(""),
                server.path("last_error").asString(""),
                toolsOf.getOrDefault(name.toLowerCase(Locale.ROOT), Map.of()));
        servers.put(name.toLowerCase(Locale.ROOT), state);
      } catch (IllegalArgumentException e) {
        LOG.warn(
            "Ignored an MCP server announced by worker {} of group '{}': {}",
            workerId,
            group,
            e.getMessage());
      }
    }
    return servers;
  }

  /**
   * Calls the action whenever the MCP servers the workers announce change: a server appears, or a
   * group's last worker leaves. It runs on the thread that heard of the change, and must not block.
   */
  public void onMcpServers(Runnable action) {
    mcpListeners.add(Objects.requireNonNull(action, "action"));
  }

  private void mcpChanged() {
    for (Runnable listener : mcpListeners) {
      try {
        listener.run();
      } catch (RuntimeException e) {
        LOG.warn("An MCP server listener failed", e);
      }
    }
  }

  /**
   * The MCP servers workers bridge, by name and then group: live ones as their workers announce
   * them, and those whose group's last worker left as {@link RemoteMcpServer#UNAVAILABLE}.
   */
  public synchronized List<RemoteMcpServer> mcpServers() {
    Map<List<String>, List<McpServerState>> byServer =
        new TreeMap<>(Comparator.comparing(Object::toString));
    for (Worker worker : workers.values()) {
      for (McpServerState server : worker.mcpServers().values()) {
        byServer
            .computeIfAbsent(
                List.of(server.name().toLowerCase(Locale.ROOT), worker.group()),
                key -> new ArrayList<>())
            .add(server);
      }
    }
    List<RemoteMcpServer> servers = new ArrayList<>();
    byServer.forEach(
        (key, states) -> {
          String group = key.get(1);
          McpServerState best =
              states.stream().min(Comparator.comparingInt(RemoteTools::rank)).orElseThrow();
          Map<String, String> tools = new TreeMap<>();
          for (McpServerState state : states) {
            state
                .tools()
                .forEach(
                    (registered, onServer) -> {
                      if (group.equals(groupOf.get(registered))) {
                        tools.put(registered, onServer);
                      }
                    });
          }
          servers.add(
              new RemoteMcpServer(
                  best.name(),
                  group,
                  best.state(),
                  best.endpoint(),
                  best.state().equals("connected") ? "" : best.lastError(),
                  (int) states.stream().filter(state -> state.state().equals("connected")).count(),
                  tools));
        });
    departed.values().forEach(servers::addAll);
    servers.sort(
        Comparator.comparing((RemoteMcpServer server) -> server.name().toLowerCase(Locale.ROOT))
            .thenComparing(RemoteMcpServer::group));
    return List.copyOf(servers);
  }

  /**
   * The worker groups on which a model may register MCP servers at run time, with what each allows
   * ({@code http} or {@code stdio}, the most any live worker of the group announces).
   */
  public synchronized Map<String, String> mcpRegistration() {
    Map<String, String> groups = new TreeMap<>();
    for (Worker worker : workers.values()) {
      String allowed = worker.mcpRegister();
      if (allowed.equals("http") || allowed.equals("stdio")) {
        groups.merge(worker.group(), allowed, (a, b) -> a.equals("stdio") ? a : b);
      }
    }
    return groups;
  }

  private static int rank(McpServerState server) {
    return switch (server.state()) {
      case "connected" -> 0;
      case "connecting" -> 1;
      case "broken" -> 2;
      default -> 3;
    };
  }

  /**
   * Logs that a tool a worker of the group announced is not registered because another source holds
   * its name: once per name and group, and again only when the name changes hands.
   */
  private void clash(String tool, String group, String workerId) {
    String holder =
        registry.find(tool).map(t -> t.spec().source()).orElse("a tool registered meanwhile");
    if (holder.equals(clashes.put(List.of(tool, group), holder))) {
      return;
    }
    String other =
        holder.startsWith(RemoteToolExecutor.source(""))
            ? "group '" + holder.substring(RemoteToolExecutor.source("").length()) + "'"
            : holder;
    LOG.warn(
        "Tool '{}' of group '{}' (announced by worker {}) is not registered: the name is taken by"
            + " {}; rename the tool in one of them",
        tool,
        group,
        workerId,
        other);
  }

  /**
   * The tool a worker of the group runs.
   *
   * @throws IllegalArgumentException when its parameters schema is not a valid JSON Schema
   */
  private ExecutableTool executable(ToolSpec spec, String group, Duration timeout) {
    // The remote executor bounds every wait by the call's deadline: no thread hop needed.
    ExecutableTool tool =
        ExecutableTool.of(
                spec,
                new RemoteToolExecutor(
                    bus, group, McpServerState.server(spec.source()), () -> hasWorkers(group)))
            .runInline();
    return timeout == null ? tool : tool.withTimeout(timeout);
  }

  /**
   * Takes the definition a newly joined worker announces for a tool its group already hosts, when
   * it differs: in a rolling deploy the first new worker brings the new definition in, and the
   * heartbeats of the workers already known do not take it back.
   */
  private void adopt(
      String workerId, String group, ExecutableTool registered, ToolSpec spec, Duration timeout) {
    if (registered.spec().equals(spec)
        && registered.timeout().equals(Optional.ofNullable(timeout))) {
      return;
    }
    ExecutableTool changed;
    try {
      changed = executable(spec, group, timeout);
    } catch (IllegalArgumentException e) {
      LOG.warn(
          "Remote tool '{}' of group '{}' keeps its definition: worker {}, newly joined, announced"
              + " one that is not valid: {}",
          spec.name(),
          group,
          workerId,
          e.getMessage());
      return;
    }
    if (registry.replace(registered, changed)) {
      LOG.info(
          "Remote tool '{}' of group '{}' changed: worker {}, newly joined, announced a new"
              + " definition",
          spec.name(),
          group,
          workerId);
    }
  }

  private synchronized void gone(String workerId, String why) {
    Worker worker = workers.get(workerId);
    if (worker == null) {
      return;
    }
    boolean lastOfGroup =
        workers.entrySet().stream()
            .noneMatch(
                other ->
                    !other.getKey().equals(workerId)
                        && other.getValue().group().equals(worker.group()));
    if (lastOfGroup && !worker.mcpServers().isEmpty()) {
      // Remembered as unavailable, with the tools they had, until the group comes back.
      departed.put(
          worker.group(),
          mcpServers().stream()
              .filter(server -> server.group().equals(worker.group()))
              .map(
                  server ->
                      new RemoteMcpServer(
                          server.name(),
                          server.group(),
                          RemoteMcpServer.UNAVAILABLE,
                          server.endpoint(),
                          "no worker of group '" + server.group() + "' is running",
                          0,
                          server.tools()))
              .toList());
    }
    workers.remove(workerId);
    List<String> dropped = new ArrayList<>();
    for (String tool : worker.tools()) {
      if (drop(workerId, tool)) {
        dropped.add(tool);
      }
    }
    if (workers.values().stream().noneMatch(other -> other.group().equals(worker.group()))) {
      // The group is gone: a clash of its tools is news again if it comes back.
      clashes.keySet().removeIf(key -> key.get(1).equals(worker.group()));
    }
    if (lastOfGroup && !worker.mcpServers().isEmpty()) {
      mcpChanged();
    }
    dropped.sort(null);
    if (dropped.isEmpty()) {
      LOG.info("Worker {} of group '{}' {}", workerId, worker.group(), why);
    } else {
      LOG.info(
          "Worker {} of group '{}' {}; unregistered its tools that no other worker hosts: {}",
          workerId,
          worker.group(),
          why,
          String.join(", ", dropped));
    }
  }

  /** Forgets that the worker hosts the tool, and unregisters it when no worker hosts it now. */
  private boolean drop(String workerId, String tool) {
    Set<String> hosts = hostsOf.get(tool);
    if (hosts == null) {
      return false;
    }
    hosts.remove(workerId);
    if (!hosts.isEmpty()) {
      return false;
    }
    hostsOf.remove(tool);
    groupOf.remove(tool);
    return registry.unregister(tool);
  }

  /**
   * Whether a worker of the group announced itself and its heartbeats have not lapsed: one that is
   * not consuming now is reconnecting, or died less than three heartbeats ago.
   */
  synchronized boolean hasWorkers(String group) {
    long now = System.nanoTime();
    for (Worker worker : workers.values()) {
      if (worker.group().equals(group) && now - worker.lapsesAtNanos() <= 0) {
        return true;
      }
    }
    return false;
  }

  private synchronized void reap() {
    long now = System.nanoTime();
    for (Map.Entry<String, Worker> entry : List.copyOf(workers.entrySet())) {
      if (now - entry.getValue().lapsesAtNanos() > 0) {
        gone(entry.getKey(), "missed " + MISSED_HEARTBEATS + " heartbeats");
      }
    }
    services.reap(now);
  }

  /** Stops listening and unregisters every remote tool. */
  @Override
  public void close() {
    Subscription listening;
    synchronized (this) {
      listening = subscription;
      subscription = null;
    }
    if (reaper != null) {
      reaper.interrupt();
    }
    if (listening != null) {
      listening.close();
    }
    synchronized (this) {
      for (String worker : List.copyOf(workers.keySet())) {
        gone(worker, "is forgotten: the host is stopping");
      }
    }
  }
}
