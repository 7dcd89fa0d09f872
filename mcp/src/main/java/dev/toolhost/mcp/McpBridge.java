package dev.toolhost.mcp;

import dev.toolhost.bus.MessageBus;
import dev.toolhost.bus.RemoteMcpServer;
import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolGuide;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolSpec;
import dev.toolhost.core.spi.ChildProcesses;
import io.modelcontextprotocol.spec.McpSchema;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The MCP bridge connects a host to MCP servers and keeps their tools in its registry, each under
 * source {@code mcp:{server}} and the server's tool prefix, with its schema and annotations.
 *
 * <p>Servers connect in parallel; {@link #start} waits at most the start timeout, and a slow or
 * broken server never delays or breaks the others: it goes on connecting with backoff and its tools
 * appear when it does. On {@code notifications/tools/list_changed}, and after every reconnect, the
 * server's tools are listed again and the registry updated. A tool whose definition changed since
 * it was first pinned is quarantined (not registered) until approved; descriptions with known
 * tool-poisoning patterns are logged and flagged. The management tools ({@link
 * #managementTools(ToolDispatcher)}, source {@code mcp:management}) let a model list, inspect and
 * call servers' tools, through the dispatcher and within its own tool set, and, when the {@link
 * RegistrationPolicy} allows it, add and remove servers.
 *
 * <p>A stdio server's child process gets a minimal environment ({@link
 * McpServerConfig.Stdio#childEnvironment}), never the host's whole one.
 *
 * <p>Thread-safe and blocking; the SDK's Reactor types never leave this module. {@link #close()}
 * disconnects every server and unregisters their tools.
 */
public final class McpBridge implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(McpBridge.class);

  /** The source of the management tools. */
  public static final String MANAGEMENT_SOURCE = "mcp:management";

  /** The guide to MCP tools: how to find servers, call their tools and read their failures. */
  public static final ToolGuide GUIDE =
      ToolGuide.fromResource(
          "mcp-tool-guide",
          "How to find MCP servers and their tools, call them, and handle their failures.",
          McpBridge.class,
          "guides/mcp-tool-guide.md");

  private final ToolRegistry registry;
  private final DefinitionPins pins;
  private final Duration connectTimeout;
  private final Duration startTimeout;
  private final Map<String, String> environment;
  private final int maxMessageChars;
  private final RegistrationPolicy registration;
  private final Consumer<Progress> progressListener;
  private final PoisoningScanner scanner = new PoisoningScanner();
  private final Map<String, Served> servers = new ConcurrentHashMap<>();
  // Starts every stdio server, so that each dies with the host.
  private final ChildProcesses children = new ChildProcesses("mcp");
  private final Object syncLock = new Object();
  private volatile boolean closed;

  private McpBridge(Builder builder) {
    this.registry = builder.registry;
    this.pins =
        builder
            .stateDirectory
            .map(directory -> DefinitionPins.inDirectory(directory, builder.approved))
            .orElseGet(DefinitionPins::inMemory);
    this.connectTimeout = builder.connectTimeout;
    this.startTimeout = builder.startTimeout;
    this.environment = builder.environment;
    this.maxMessageChars = builder.maxMessageChars;
    this.registration = builder.registration;
    this.progressListener = builder.progressListener;
  }

  /** A builder of a bridge that registers tools in the given registry. */
  public static Builder builder(ToolRegistry registry) {
    return new Builder(registry);
  }

  /**
   * Connects to every server in parallel and waits until each has connected or failed once, or the
   * start timeout passed; servers not connected by then go on connecting in the background.
   *
   * @throws IllegalArgumentException when two servers have the same name (ignoring case)
   */
  public void start(List<McpServerConfig> configs) {
    List<CompletableFuture<Void>> attempts = new ArrayList<>();
    for (McpServerConfig config : configs) {
      attempts.add(connect(config));
    }
    CompletableFuture<Void> all =
        CompletableFuture.allOf(attempts.toArray(CompletableFuture[]::new));
    try {
      all.get(startTimeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      LOG.warn(
          "Some MCP servers are still connecting after {} s; their tools appear when they do",
          startTimeout.toSeconds());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException e) {
      throw new IllegalStateException(e.getCause());
    }
  }

  /**
   * Adds a server at run time and waits for its first connection attempt (at most the connect
   * timeout); it goes on connecting in the background if that failed.
   *
   * @return the server as it stands after that attempt
   * @throws IllegalArgumentException when a server of that name (ignoring case) exists
   */
  public ServerInfo add(McpServerConfig config) {
    CompletableFuture<Void> attempt = connect(config);
    try {
      attempt.get(connectTimeout.toMillis() + 1000, TimeUnit.MILLISECONDS);
    } catch (TimeoutException | ExecutionException e) {
      // Reported in the state below.
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return server(config.name()).orElseThrow();
  }

  private CompletableFuture<Void> connect(McpServerConfig config) {
    if (closed) {
      throw new IllegalStateException("The MCP bridge is closed.");
    }
    String key = config.name().toLowerCase(Locale.ROOT);
    Served served = new Served(config);
    if (servers.putIfAbsent(key, served) != null) {
      throw new IllegalArgumentException(
          "An MCP server named '" + config.name() + "' is already registered.");
    }
    return served.connection.start();
  }

  /**
   * Disconnects a server and unregisters its tools.
   *
   * @return whether a server of that name (ignoring case) was registered
   */
  public boolean remove(String name) {
    Served served = servers.remove(name.toLowerCase(Locale.ROOT));
    if (served == null) {
      return false;
    }
    served.connection.close();
    synchronized (syncLock) {
      for (ServerTool tool : served.tools.values()) {
        if (tool.status() == ToolStatus.AVAILABLE) {
          registry.unregister(tool.registeredName());
        }
      }
      served.tools = Map.of();
    }
    LOG.info("MCP server '{}' removed", served.config.name());
    return true;
  }

  /** Every server, in name order. */
  public List<ServerInfo> servers() {
    return servers.values().stream()
        .map(Served::info)
        .sorted((a, b) -> a.name().compareToIgnoreCase(b.name()))
        .toList();
  }

  /** The server of the given name, ignoring case. */
  public Optional<ServerInfo> server(String name) {
    return Optional.ofNullable(servers.get(name.toLowerCase(Locale.ROOT))).map(Served::info);
  }

  /**
   * Approves the changed definition of a quarantined tool: it is pinned and registered.
   *
   * @return whether there was a changed definition to approve
   */
  public boolean approve(String server, String tool) {
    boolean approved = pins.approve(server, tool);
    if (approved) {
      Served served = servers.get(server.toLowerCase(Locale.ROOT));
      if (served != null) {
        resync(served);
      }
    }
    return approved;
  }

  /** Applies the last listing of every server again, so that approvals made elsewhere count. */
  public void recheckPins() {
    servers.values().forEach(this::resync);
  }

  private void resync(Served served) {
    List<McpSchema.Tool> listed = served.listed;
    if (listed != null) {
      sync(served, listed);
    }
  }

  /** The refusal for a server the caller does not see, naming the ones it does. */
  static String unknownServer(String name, List<ServerInfo> visible) {
    List<String> names = visible.stream().map(ServerInfo::name).toList();
    return "There is no MCP server named '"
        + name
        + "'. "
        + (names.isEmpty()
            ? "No MCP servers are connected."
            : "Connected servers: " + String.join(", ", names) + ".");
  }

  /**
   * The management tools, source {@code mcp:management}, to register on a registry: {@code
   * mcp_list_services}, {@code mcp_get_service_details} and {@code mcp_invoke_tool}, and, when the
   * registration policy offers them, {@code mcp_register_server} and {@code mcp_unregister_server}.
   * They show and call only what the calling tool set shows, and call through the given dispatcher
   * (the host's), so validation, deadlines and telemetry apply.
   */
  public List<ExecutableTool> managementTools(ToolDispatcher dispatcher) {
    return new McpManagementTools(
            this, dispatcher, registration, List::of, Map::of, Optional.empty())
        .tools();
  }

  /**
   * The management tools, as {@link #managementTools(ToolDispatcher)}, that also list and reach the
   * MCP servers workers bridge over the message bus: {@code remote} says how those stand when
   * asked, {@code remoteRegistration} which worker groups let a model register servers (and what
   * each allows). With a bus, the list holds the registration tools whatever this bridge's own
   * policy: {@code mcp_register_server} with {@code worker_group} registers on that group's workers
   * under their policy, and without it on this bridge under its own.
   */
  public List<ExecutableTool> managementTools(
      ToolDispatcher dispatcher,
      Supplier<List<RemoteMcpServer>> remote,
      Supplier<Map<String, String>> remoteRegistration,
      MessageBus bus) {
    return new McpManagementTools(
            this, dispatcher, registration, remote, remoteRegistration, Optional.of(bus))
        .tools();
  }

  /** The registration policy of the management tools. */
  public RegistrationPolicy registration() {
    return registration;
  }

  /** The executable file a stdio server's command names, on the host's PATH; empty when none. */
  Optional<Path> program(String command) {
    return ChildProcesses.resolve(command, environment.get("PATH"));
  }

  Duration connectTimeout() {
    return connectTimeout;
  }

  private void sync(Served served, List<McpSchema.Tool> listed) {
    synchronized (syncLock) {
      if (servers.get(served.config.name().toLowerCase(Locale.ROOT)) != served) {
        return;
      }
      served.listed = listed;
      Map<String, ServerTool> before = served.tools;
      Map<String, ServerTool> after = new LinkedHashMap<>();
      String prefix = served.config.toolPrefix();
      for (McpSchema.Tool tool : listed) {
        String registeredName = prefix + tool.name();
        String description = tool.description() == null ? "" : tool.description();
        List<String> flags = scanner.scan(description + "\n" + tool.inputSchema());
        if (!flags.isEmpty()) {
          LOG.warn(
              "MCP server '{}' tool '{}': its definition looks like tool poisoning: {}",
              served.config.name(),
              tool.name(),
              String.join("; ", flags));
        }
        ObjectNode parameters;
        ToolSpec spec;
        try {
          parameters = McpResults.parameters(tool.inputSchema());
          spec =
              new ToolSpec(
                  registeredName,
                  description,
                  parameters,
                  served.config.source(),
                  McpResults.annotations(tool.annotations()));
        } catch (IllegalArgumentException e) {
          after.put(tool.name(), rejected(tool, registeredName, flags, e.getMessage()));
          continue;
        }
        boolean quarantined =
            pins.check(served.config.name(), tool) == DefinitionPins.Verdict.QUARANTINED;
        if (quarantined) {
          LOG.warn(
              "MCP server '{}' changed the definition of tool '{}': quarantined until approved"
                  + " (toolhost mcp-approve {} {})",
              served.config.name(),
              tool.name(),
              served.config.name(),
              tool.name());
        }
        after.put(
            tool.name(),
            new ServerTool(
                tool.name(),
                registeredName,
                description,
                parameters,
                quarantined ? ToolStatus.QUARANTINED : ToolStatus.AVAILABLE,
                quarantined
                    ? "its definition changed since it was pinned and awaits the operator's"
                        + " approval."
                    : "",
                flags));
        if (quarantined) {
          continue;
        }
        ServerTool old = before.get(tool.name());
        Optional<ExecutableTool> current = registry.find(registeredName);
        boolean same =
            old != null
                && old.status() == ToolStatus.AVAILABLE
                && current.isPresent()
                && current.get().spec().equals(spec);
        if (same) {
          continue;
        }
        try {
          McpConnection connection = served.connection;
          String mcpName = tool.name();
          // Only a tool that says so is called again after its server was lost mid-call.
          boolean retryable = spec.annotations().idempotent() || spec.annotations().readOnly();
          // The connection bounds every wait by the call's deadline and stops when interrupted,
          // so the call runs on the caller's thread, without the deadline step's thread hop.
          ExecutableTool executable =
              ExecutableTool.of(
                      spec,
                      (ToolCall call, JsonNode arguments) ->
                          connection.call(
                              mcpName,
                              McpResults.arguments(arguments),
                              call.deadline(),
                              call.toolName(),
                              retryable))
                  .runInline()
                  // A caller that names no deadline waits as long as the server's call timeout.
                  .withTimeout(served.config.timeout());
          // A changed tool is replaced in one step, so that a call meanwhile still finds it.
          boolean ours =
              old != null
                  && old.status() == ToolStatus.AVAILABLE
                  && current.isPresent()
                  && current.get().spec().source().equals(spec.source());
          if (!ours || !registry.replace(current.get(), executable)) {
            registry.register(executable);
          }
        } catch (IllegalArgumentException e) {
          LOG.warn(
              "MCP server '{}' tool '{}' cannot be registered: {}",
              served.config.name(),
              tool.name(),
              e.getMessage());
          after.put(tool.name(), rejected(tool, registeredName, flags, e.getMessage()));
        }
      }
      for (ServerTool old : before.values()) {
        if (old.status() == ToolStatus.AVAILABLE
            && (!after.containsKey(old.name())
                || after.get(old.name()).status() != ToolStatus.AVAILABLE)) {
          registry.unregister(old.registeredName());
        }
      }
      served.tools = Map.copyOf(after);
    }
  }

  private static ServerTool rejected(
      McpSchema.Tool tool, String registeredName, List<String> flags, String why) {
    return new ServerTool(
        tool.name(),
        registeredName,
        tool.description() == null ? "" : tool.description(),
        McpResults.parameters(Map.of("type", "object")),
        ToolStatus.REJECTED,
        why,
        flags);
  }

  /** Disconnects every server and unregisters their tools. */
  @Override
  public void close() {
    closed = true;
    for (String name : List.copyOf(servers.keySet())) {
      remove(name);
    }
    // Every server was stopped above; ending the spawner kills any that would not stop.
    children.close();
  }

  /** One server the bridge holds. */
  private final class Served implements McpConnection.Listener {
    final McpServerConfig config;
    final McpConnection connection;
    volatile Map<String, ServerTool> tools = Map.of();
    volatile List<McpSchema.Tool> listed;

    Served(McpServerConfig config) {
      this.config = config;
      this.connection =
          new McpConnection(config, connectTimeout, environment, maxMessageChars, children, this);
    }

    @Override
    public void toolsListed(McpConnection from, List<McpSchema.Tool> listedTools) {
      sync(this, listedTools);
    }

    @Override
    public void progress(McpConnection from, McpSchema.ProgressNotification progress) {
      progressListener.accept(
          new Progress(
              config.name(),
              String.valueOf(progress.progressToken()),
              progress.progress(),
              Optional.ofNullable(progress.total()),
              Optional.ofNullable(progress.message())));
    }

    ServerInfo info() {
      List<ServerTool> sorted =
          tools.values().stream().sorted((a, b) -> a.name().compareTo(b.name())).toList();
      return new ServerInfo(
          config.name(),
          config.source(),
          config.transport().describe(),
          connection.state().name().toLowerCase(Locale.ROOT),
          connection.lastError(),
          sorted);
    }
  }

  /** Whether a server's tool can be called. */
  public enum ToolStatus {
    /** Registered and callable. */
    AVAILABLE,
    /** Its definition changed since it was pinned; not callable until approved. */
    QUARANTINED,
    /** Its definition cannot be a Toolhost tool (an invalid name or schema, a name taken). */
    REJECTED,
    /** Its server runs on a worker group none of whose workers is running now. */
    UNAVAILABLE
  }

  /**
   * A server's tool as the bridge holds it.
   *
   * @param name the server's name for it
   * @param registeredName its name in the registry (prefix and name)
   * @param description its description
   * @param parameters its input schema
   * @param status whether it can be called
   * @param reason why it cannot, when it cannot
   * @param flags tool-poisoning patterns found in its definition, for the operator
   */
  public record ServerTool(
      String name,
      String registeredName,
      String description,
      ObjectNode parameters,
      ToolStatus status,
      String reason,
      List<String> flags) {
    public ServerTool {
      Objects.requireNonNull(name, "name");
      flags = List.copyOf(flags);
    }
  }

  /**
   * A server as the bridge holds it.
   *
   * @param name its name
   * @param source the source of its tools, {@code mcp:{name}}
   * @param endpoint its command line or URL
   * @param state {@code connecting}, {@code connected}, {@code broken} or {@code closed}
   * @param lastError why it last failed to connect or lost its connection; empty when it did not
   * @param tools its tools, by name
   */
  public record ServerInfo(
      String name,
      String source,
      String endpoint,
      String state,
      String lastError,
      List<ServerTool> tools) {
    public ServerInfo {
      tools = List.copyOf(tools);
    }
  }

  /**
   * A progress notification of a running call.
   *
   * @param server the server that sent it
   * @param token the call's progress token
   * @param progress how far the call is
   * @param total the total, when known
   * @param message what the server said, when it said something
   */
  public record Progress(
      String server,
      String token,
      double progress,
      Optional<Double> total,
      Optional<String> message) {}

  /** A builder of an {@link McpBridge}. */
  public static final class Builder {
    private final ToolRegistry registry;
    private Optional<Path> stateDirectory = Optional.empty();
    private Set<String> approved = Set.of();
    private Duration connectTimeout = Duration.ofSeconds(30);
    private Duration startTimeout = Duration.ofSeconds(30);
    private Consumer<Progress> progressListener = progress -> {};
    private Map<String, String> environment = System.getenv();
    private int maxMessageChars = StdioTransport.DEFAULT_MAX_MESSAGE_CHARS;
    private RegistrationPolicy registration = RegistrationPolicy.none();

    private Builder(ToolRegistry registry) {
      this.registry = Objects.requireNonNull(registry, "registry");
    }

    /**
     * The directory that keeps the definition pins ({@code mcp-pins.json}); memory only if unset.
     */
    public Builder stateDirectory(Path stateDirectory) {
      this.stateDirectory = Optional.of(stateDirectory);
      return this;
    }

    /** {@code server/tool} entries whose changed definitions are approved. */
    public Builder approved(Set<String> approved) {
      this.approved = Set.copyOf(approved);
      return this;
    }

    /** How long connecting and listing may take; 30 s by default. */
    public Builder connectTimeout(Duration connectTimeout) {
      this.connectTimeout = Objects.requireNonNull(connectTimeout, "connectTimeout");
      return this;
    }

    /** How long {@link McpBridge#start} waits for all servers; 30 s by default. */
    public Builder startTimeout(Duration startTimeout) {
      this.startTimeout = Objects.requireNonNull(startTimeout, "startTimeout");
      return this;
    }

    /** Hears the progress notifications of running calls. */
    public Builder progressListener(Consumer<Progress> progressListener) {
      this.progressListener = Objects.requireNonNull(progressListener, "progressListener");
      return this;
    }

    /**
     * The host's environment, from which stdio servers get the base variables and those their
     * config passes; this process's by default.
     */
    public Builder environment(Map<String, String> environment) {
      this.environment = Map.copyOf(environment);
      return this;
    }

    /**
     * The longest message, in characters, read from a stdio server (16 Mi by default); a longer one
     * fails the calls in flight and resets the connection.
     */
    public Builder maxMessageChars(int maxMessageChars) {
      if (maxMessageChars <= 0) {
        throw new IllegalArgumentException("maxMessageChars must be positive");
      }
      this.maxMessageChars = maxMessageChars;
      return this;
    }

    /** Which servers a model may register at run time; none by default. */
    public Builder registration(RegistrationPolicy registration) {
      this.registration = Objects.requireNonNull(registration, "registration");
      return this;
    }

    /** Builds the bridge; nothing connects until {@link McpBridge#start} or {@link #add}. */
    public McpBridge build() {
      return new McpBridge(this);
    }
  }
}
