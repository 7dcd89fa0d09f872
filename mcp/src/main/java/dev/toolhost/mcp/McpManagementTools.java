package dev.toolhost.mcp;

import dev.toolhost.bus.McpServerState;
import dev.toolhost.bus.MessageBus;
import dev.toolhost.bus.RemoteMcpServer;
import dev.toolhost.bus.RemoteToolExecutor;
import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.MethodTools;
import dev.toolhost.core.Param;
import dev.toolhost.core.Tool;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolCaller;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolException;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The management tools give a model run-time control over the bridge's MCP servers: list them,
 * inspect their tools, call a tool, and, when the registration policy allows, connect a server and
 * disconnect one. Server names match ignoring case; an unknown server is an error that lists the
 * ones the caller sees.
 *
 * <p>They reach no further than the tool set their own call was dispatched through ({@link
 * ToolCaller#toolSet()}): a tool that set hides is not listed, and calling it answers exactly as a
 * tool that does not exist; a server none of whose tools the set shows is not listed either. A call
 * goes through the host's dispatcher with that set, so validation, deadlines and telemetry apply as
 * to a direct call.
 *
 * <p>They see the servers that workers bridge over the message bus as well as the bridge's own:
 * {@code mcp_list_services} says where each runs ({@code local}, or the worker group), and a call
 * to a remote server's tool goes to a worker of its group like any remote call. A remote server
 * whose group has no live worker stays listed, its tools answering {@code unavailable}, until a
 * worker of the group is back. When a local and a remote server have one name, the local one is the
 * one they see.
 */
final class McpManagementTools {

  private static final JsonMapper MAPPER = JsonMapper.shared();

  /** The tool that registers a server at run time. */
  static final String REGISTER_SERVER = "mcp_register_server";

  /** The tools that list the servers and call their tools, each call under its caller's profile. */
  static final List<String> LISTING =
      List.of("mcp_list_services", "mcp_get_service_details", "mcp_invoke_tool");

  /** The tool that unregisters a server registered at run time. */
  static final String UNREGISTER_SERVER = "mcp_unregister_server";

  private static final Set<String> REGISTRATION_TOOLS = Set.of(REGISTER_SERVER, UNREGISTER_SERVER);

  private static final String LOCAL = "local";

  /** A URL's scheme at the start of a command: {@code file:}, {@code ftp:}, {@code http:}. */
  private static final Pattern SCHEME = Pattern.compile("([A-Za-z][A-Za-z0-9+.-]*):");

  private final McpBridge bridge;
  private final ToolDispatcher dispatcher;
  private final RegistrationPolicy registration;
  private final Supplier<List<RemoteMcpServer>> remote;
  private final Supplier<Map<String, String>> remoteRegistration;
  private final Optional<MessageBus> bus;
  private final PoisoningScanner scanner = new PoisoningScanner();

  /**
   * @param remote the MCP servers workers bridge, as they stand when asked
   * @param remoteRegistration the worker groups that let a model register servers, with what each
   *     allows
   * @param bus the message bus management calls to workers travel over; empty on a host with none
   */
  McpManagementTools(
      McpBridge bridge,
      ToolDispatcher dispatcher,
      RegistrationPolicy registration,
      Supplier<List<RemoteMcpServer>> remote,
      Supplier<Map<String, String>> remoteRegistration,
      Optional<MessageBus> bus) {
    this.bridge = bridge;
    this.dispatcher = dispatcher;
    this.registration = registration;
    this.remote = remote;
    this.remoteRegistration = remoteRegistration;
    this.bus = bus;
  }

  /**
   * A server as the management tools show it: the bridge's own ({@code remote} empty), or one that
   * the workers of a group bridge.
   */
  private record Server(McpBridge.ServerInfo info, Optional<RemoteMcpServer> remote) {
    String name() {
      return info.name();
    }

    List<McpBridge.ServerTool> tools() {
      return info.tools();
    }
  }

  /**
   * The tools: the registration tools too when this host's policy offers them, or when it is on a
   * message bus (registering on a worker group follows that group's policy; the caller offers them
   * once a group allows it).
   */
  List<ExecutableTool> tools() {
    return MethodTools.of(this, McpBridge.MANAGEMENT_SOURCE).stream()
        .filter(
            tool ->
                registration.offered()
                    || bus.isPresent()
                    || !REGISTRATION_TOOLS.contains(tool.name()))
        .toList();
  }

  /** Whether the tool is one of the two that register and unregister servers. */
  static boolean registers(ExecutableTool tool) {
    return REGISTRATION_TOOLS.contains(tool.name());
  }

  /** The tool set the running call was dispatched through. */
  private static ToolSet caller() {
    return ToolCaller.toolSet()
        .orElseThrow(
            () -> new IllegalStateException("MCP management tools run only through a dispatcher"));
  }

  /** Whether the set shows this tool of this server. */
  private static boolean visible(
      ToolSet set, McpBridge.ServerInfo server, McpBridge.ServerTool tool) {
    if (tool.status() == McpBridge.ToolStatus.AVAILABLE) {
      return set.find(tool.registeredName())
          .filter(entry -> entry.tool().spec().source().equals(server.source()))
          .isPresent();
    }
    // Held tools are not in the registry: the profile decides as it would for the tool.
    return set.profile().allows(tool.registeredName(), server.source());
  }

  /** The server as the set shows it: only its visible tools; empty when the set shows none. */
  private static Optional<Server> visible(ToolSet set, Server served) {
    McpBridge.ServerInfo server = served.info();
    List<McpBridge.ServerTool> tools =
        server.tools().stream().filter(tool -> visible(set, server, tool)).toList();
    boolean shown =
        !tools.isEmpty()
            // A server with no tools yet (connecting, broken) shows when its source does.
            || (server.tools().isEmpty() && set.profile().allows("", server.source()));
    if (!shown) {
      return Optional.empty();
    }
    return Optional.of(
        new Server(
            new McpBridge.ServerInfo(
                server.name(),
                server.source(),
                server.endpoint(),
                server.state(),
                server.lastError(),
                tools),
            served.remote()));
  }

  /**
   * Every server, local ones first and then those workers bridge, one per name (ignoring case): a
   * local one before a remote one, a connected remote one before others.
   */
  private List<Server> servers(ToolSet set) {
    List<Server> all = new ArrayList<>();
    Set<String> names = new HashSet<>();
    for (McpBridge.ServerInfo local : bridge.servers()) {
      names.add(local.name().toLowerCase(Locale.ROOT));
      all.add(new Server(local, Optional.empty()));
    }
    List<RemoteMcpServer> remotes = new ArrayList<>(remote.get());
    // Connected ones first, so that they win a name that two groups share.
    remotes.sort(
        (a, b) -> Boolean.compare(!a.state().equals("connected"), !b.state().equals("connected")));
    for (RemoteMcpServer server : remotes) {
      if (names.add(server.name().toLowerCase(Locale.ROOT))) {
        all.add(new Server(info(set, server), Optional.of(server)));
      }
    }
    all.sort((a, b) -> a.name().compareToIgnoreCase(b.name()));
    return all;
  }

  /**
   * A remote server as the bridge's own are described: its tools the host registered (as the set
   * finds them), or, when no worker of its group is alive, the tools it had, unavailable.
   */
  private McpBridge.ServerInfo info(ToolSet set, RemoteMcpServer server) {
    String source = McpServerState.source(server.name());
    List<McpBridge.ServerTool> tools = new ArrayList<>();
    server
        .tools()
        .forEach(
            (registered, onServer) -> {
              Optional<ToolSet.Entry> entry =
                  set.find(registered).filter(found -> found.tool().spec().source().equals(source));
              if (entry.isPresent()) {
                var spec = entry.get().tool().spec();
                tools.add(
                    new McpBridge.ServerTool(
                        onServer,
                        registered,
                        spec.description(),
                        spec.parameters(),
                        McpBridge.ToolStatus.AVAILABLE,
                        "",
                        scanner.scan(spec.description() + "\n" + spec.parameters())));
              } else if (!server.state().equals("connected")) {
                tools.add(
                    new McpBridge.ServerTool(
                        onServer,
                        registered,
                        "",
                        McpResults.parameters(Map.of("type", "object")),
                        McpBridge.ToolStatus.UNAVAILABLE,
                        "no worker of group '" + server.group() + "' hosts it now.",
                        List.of()));
              }
            });
    tools.sort((a, b) -> a.name().compareTo(b.name()));
    return new McpBridge.ServerInfo(
        server.name(), source, server.endpoint(), server.state(), server.lastError(), tools);
  }

  private List<Server> visibleServers(ToolSet set) {
    return servers(set).stream().flatMap(server -> visible(set, server).stream()).toList();
  }

  /** Where a server runs, in an answer: {@code location}, and the group and its workers. */
  private static void location(ObjectNode entry, Server server) {
    if (server.remote().isEmpty()) {
      entry.put("location", LOCAL);
      return;
    }
    entry.put("location", "worker_group");
    entry.put("worker_group", server.remote().get().group());
    entry.put("workers", server.remote().get().workers());
  }

  @Tool(
      name = "mcp_list_services", // in LISTING
      description =
          "Lists the MCP servers: name, where it runs (local, or a worker group), state, tool"
              + " count and tool names. Use a name from here with mcp_get_service_details and"
              + " mcp_invoke_tool.",
      readOnly = true,
      destructive = false,
      idempotent = true,
      openWorld = false)
  public String listServices() {
    bridge.recheckPins();
    ArrayNode list = MAPPER.createArrayNode();
    for (Server served : visibleServers(caller())) {
      McpBridge.ServerInfo server = served.info();
      ObjectNode entry = list.addObject();
      entry.put("server_name", server.name());
      location(entry, served);
      entry.put("state", server.state());
      if (!server.lastError().isEmpty()) {
        entry.put("last_error", server.lastError());
      }
      entry.put("tool_count", server.tools().size());
      ArrayNode names = entry.putArray("tools");
      server.tools().forEach(tool -> names.add(tool.name()));
      List<String> held =
          server.tools().stream()
              .filter(tool -> tool.status() != McpBridge.ToolStatus.AVAILABLE)
              .map(tool -> tool.name() + " (" + tool.status().name().toLowerCase() + ")")
              .toList();
      if (!held.isEmpty()) {
        ArrayNode heldNode = entry.putArray("not_callable");
        held.forEach(heldNode::add);
      }
      List<String> flagged =
          server.tools().stream()
              .filter(tool -> !tool.flags().isEmpty())
              .map(McpBridge.ServerTool::name)
              .toList();
      if (!flagged.isEmpty()) {
        ArrayNode flaggedNode = entry.putArray("flagged");
        flagged.forEach(flaggedNode::add);
      }
    }
    ObjectNode answer = MAPPER.createObjectNode();
    answer.set("servers", list);
    return answer.toPrettyString();
  }

  @Tool(
      name = "mcp_get_service_details", // in LISTING
      description =
          "Returns the tools of one MCP server with their input schemas, or one tool when"
              + " tool_name is given.",
      readOnly = true,
      destructive = false,
      idempotent = true,
      openWorld = false)
  public String getServiceDetails(
      @Param(name = "server_name", description = "The server's name, from mcp_list_services.")
          String serverName,
      @Param(name = "tool_name", description = "One tool's name, to see only that tool.")
          Optional<String> toolName) {
    bridge.recheckPins();
    Server served = find(caller(), serverName);
    McpBridge.ServerInfo server = served.info();
    List<McpBridge.ServerTool> tools = server.tools();
    if (toolName.isPresent()) {
      tools = tools.stream().filter(tool -> tool.name().equals(toolName.get())).toList();
      if (tools.isEmpty()) {
        throw ToolException.invalidArguments(
            "MCP server '"
                + server.name()
                + "' has no tool named '"
                + toolName.get()
                + "'. Its tools: "
                + server.tools().stream()
                    .map(McpBridge.ServerTool::name)
                    .collect(Collectors.joining(", "))
                + ".");
      }
    }
    ObjectNode answer = MAPPER.createObjectNode();
    answer.put("server_name", server.name());
    location(answer, served);
    answer.put("state", server.state());
    answer.put("endpoint", server.endpoint());
    ArrayNode list = answer.putArray("tools");
    for (McpBridge.ServerTool tool : tools) {
      ObjectNode entry = list.addObject();
      entry.put("name", tool.name());
      entry.put("registered_as", tool.registeredName());
      entry.put("status", tool.status().name().toLowerCase());
      if (!tool.reason().isEmpty()) {
        entry.put("reason", tool.reason());
      }
      entry.put("description", tool.description());
      entry.set("input_schema", tool.parameters());
      if (!tool.flags().isEmpty()) {
        ArrayNode flags = entry.putArray("flags");
        tool.flags().forEach(flags::add);
      }
    }
    return answer.toPrettyString();
  }

  @Tool(
      name = "mcp_invoke_tool", // in LISTING
      description =
          "Calls a tool of an MCP server by the server's exact name (from mcp_list_services) and"
              + " the tool's name on that server, with arguments matching its input schema.",
      openWorld = true)
  public ToolResult invokeTool(
      ToolCall call,
      @Param(name = "server_name", description = "The server's name, from mcp_list_services.")
          String serverName,
      @Param(name = "tool_name", description = "The tool's name on that server.") String toolName,
      @Param(description = "The tool's arguments, an object matching its input schema.")
          Map<String, Object> arguments) {
    ToolSet set = caller();
    McpBridge.ServerInfo server = find(set, serverName).info();
    McpBridge.ServerTool tool =
        server.tools().stream()
            .filter(candidate -> candidate.name().equals(toolName))
            .findFirst()
            .orElseThrow(
                () ->
                    ToolException.invalidArguments(
                        "MCP server '"
                            + server.name()
                            + "' has no tool named '"
                            + toolName
                            + "'. Its tools: "
                            + server.tools().stream()
                                .map(McpBridge.ServerTool::name)
                                .collect(Collectors.joining(", "))
                            + "."));
    if (tool.status() != McpBridge.ToolStatus.AVAILABLE) {
      return ToolResult.failure(
          ErrorCode.UNAVAILABLE,
          "Tool '"
              + toolName
              + "' of MCP server '"
              + server.name()
              + "' is "
              + tool.status().name().toLowerCase(Locale.ROOT)
              + ": "
              + tool.reason()
              + " Use another tool, or ask the operator.");
    }
    String json = MAPPER.writeValueAsString(arguments == null ? Map.of() : arguments);
    // The same call, to the bridged tool, through the same dispatcher and the same tool set: a
    // remote server's tool goes to a worker of its group, with the server's name in a header.
    ToolCall direct =
        new ToolCall(
            call.callId(),
            tool.registeredName(),
            json,
            call.sessionId(),
            call.user(),
            call.principal(),
            call.agent(),
            call.model(),
            call.deadline());
    return dispatcher.dispatch(set, direct);
  }

  @Tool(
      name = "mcp_register_server",
      description =
          "Connects a new MCP server and registers its tools: a command run over stdio (with"
              + " arguments), or an http(s) URL of a Streamable HTTP endpoint (a URL ending in /sse"
              + " uses the legacy SSE transport).")
  public ToolResult registerServer(
      ToolCall call,
      @Param(name = "server_name", description = "A new, unique name for the server.")
          String serverName,
      @Param(description = "The program to run, or the server's http(s) URL.") String command,
      @Param(description = "The program's arguments (stdio only).")
          Optional<List<String>> arguments,
      @Param(
              name = "worker_group",
              description =
                  "Register it on the workers of this group rather than on this host (when the"
                      + " group allows it).")
          Optional<String> workerGroup) {
    if (workerGroup.isPresent()) {
      refuseTaken(serverName);
      return registerOn(call, workerGroup.get(), serverName, command, arguments);
    }
    if (!registration.offered()) {
      Map<String, String> groups = remoteRegistration.get();
      throw ToolException.invalidArguments(
          "This host does not let a model register MCP servers of its own (mcp.allow_register is"
              + " none)."
              + (groups.isEmpty()
                  ? ""
                  : " Give worker_group, one of: "
                      + groups.entrySet().stream()
                          .map(group -> group.getKey() + " (" + group.getValue() + ")")
                          .collect(Collectors.joining(", "))
                      + "."));
    }
    McpServerConfig config = config(bridge, serverName, command, arguments);
    refuseTaken(serverName);
    McpBridge.ServerInfo server = bridge.add(config);
    if (!server.state().equals("connected")) {
      return ToolResult.success(
          "MCP server '"
              + server.name()
              + "' is registered but not connected yet ("
              + server.lastError()
              + "); the host keeps trying. Check mcp_list_services later.");
    }
    return ToolResult.success(
        "MCP server '"
            + server.name()
            + "' is connected with "
            + server.tools().size()
            + " tools: "
            + server.tools().stream()
                .map(McpBridge.ServerTool::registeredName)
                .collect(Collectors.joining(", "))
            + ".");
  }

  /** Refuses a name a local or a remote server has, ignoring case. */
  private void refuseTaken(String serverName) {
    if (bridge.server(serverName).isPresent()
        || remote.get().stream()
            .anyMatch(
                server ->
                    server.name().equalsIgnoreCase(serverName)
                        && !server.state().equals(RemoteMcpServer.UNAVAILABLE))) {
      throw ToolException.invalidArguments(
          "An MCP server named '" + serverName + "' is already registered; choose another name.");
    }
  }

  /**
   * The config of a server a model asked to register, checked against the bridge's policy: a URL
   * must be http(s), and a program must be an executable file (on the host's PATH when it names no
   * directory), so that nothing is registered that could never connect.
   *
   * @throws ToolException {@code invalid_arguments} when the policy refuses it or it is invalid
   */
  static McpServerConfig config(
      McpBridge bridge, String serverName, String command, Optional<List<String>> arguments) {
    RegistrationPolicy registration = bridge.registration();
    McpServerConfig.Transport transport;
    Matcher scheme = SCHEME.matcher(command);
    String lower = command.toLowerCase(Locale.ROOT);
    if (scheme.lookingAt() && !lower.startsWith("http://") && !lower.startsWith("https://")) {
      throw ToolException.invalidArguments(
          "'command' is a "
              + scheme.group(1).toLowerCase(Locale.ROOT)
              + ": URL; an MCP server is a program to run or an http(s) URL, such as"
              + " https://mcp.example.com/mcp. Nothing was registered.");
    }
    if (lower.startsWith("http://") || lower.startsWith("https://")) {
      URI url;
      try {
        url = new URI(command);
      } catch (URISyntaxException e) {
        throw ToolException.invalidArguments(
            "'command' is not a valid URL (" + e.getReason() + ").");
      }
      registration.checkUrl(url);
      transport =
          url.getPath() != null && url.getPath().endsWith("/sse")
              ? new McpServerConfig.Sse(url, Map.of())
              : new McpServerConfig.StreamableHttp(url, Map.of());
    } else {
      registration.checkCommand();
      if (command.isBlank()) {
        throw ToolException.invalidArguments("'command' is empty: send a program or a URL.");
      }
      if (bridge.program(command).isEmpty()) {
        throw ToolException.invalidArguments(
            "'command' is '"
                + command
                + "', which is not an executable file"
                + (command.contains("/") ? "" : " on the host's PATH")
                + ". Nothing was registered: send the path of an installed program, or an"
                + " http(s) URL.");
      }
      transport = new McpServerConfig.Stdio(command, arguments.orElse(List.of()), Map.of());
    }
    try {
      return new McpServerConfig(
          serverName, transport, Optional.empty(), McpServerConfig.DEFAULT_TIMEOUT);
    } catch (IllegalArgumentException e) {
      // The config's own checks (the name) speak to whoever wrote it: here, the model.
      throw ToolException.invalidArguments(e.getMessage());
    }
  }

  /**
   * Registers a server on the workers of a group: a management call over the bus to one of them,
   * which checks its own policy, registers it, and tells the others of its group; answered once the
   * group announces the server (or after 5 s, or at the call's deadline).
   */
  private ToolResult registerOn(
      ToolCall call,
      String group,
      String serverName,
      String command,
      Optional<List<String>> arguments) {
    Map<String, String> groups = remoteRegistration.get();
    if (bus.isEmpty() || !groups.containsKey(group)) {
      throw ToolException.invalidArguments(
          "No running worker of group '"
              + group
              + "' lets a model register MCP servers"
              + (groups.isEmpty()
                  ? "."
                  : "; groups that do: "
                      + groups.entrySet().stream()
                          .map(entry -> entry.getKey() + " (" + entry.getValue() + ")")
                          .collect(Collectors.joining(", "))
                      + "."));
    }
    ObjectNode request = MAPPER.createObjectNode();
    request.put("server_name", serverName);
    request.put("command", command);
    arguments.ifPresent(list -> list.forEach(request.withArray("arguments")::add));
    ToolResult result = remoteCall(call, group, serverName, REGISTER_SERVER, request);
    if (result.isError()) {
      return result;
    }
    Instant until = Instant.now().plus(Duration.ofSeconds(5));
    if (call.deadline().isBefore(until)) {
      until = call.deadline();
    }
    try {
      while (Instant.now().isBefore(until)
          && remote.get().stream()
              .noneMatch(
                  server ->
                      server.name().equalsIgnoreCase(serverName)
                          && server.group().equals(group)
                          && !server.tools().isEmpty())) {
        Thread.sleep(50);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return ToolResult.success(result.text() + " It runs on the workers of group '" + group + "'.");
  }

  /**
   * A management call to a worker of the group: the invoke protocol, with the server's name in
   * header {@code toolhost_mcp_server} and the caller's call id as the request's. While a worker of
   * the group that lets a model register servers is alive (its heartbeats, as {@code
   * remoteRegistration} reports them), nobody consuming the group's queue means a worker
   * reconnecting, and the call waits for it as a remote tool's call does ({@link
   * RemoteToolExecutor}).
   */
  private ToolResult remoteCall(
      ToolCall call, String group, String serverName, String tool, ObjectNode arguments) {
    ToolCall request =
        ToolCall.of(tool, arguments.toString())
            .withCallId(call.callId())
            .withDeadline(call.deadline());
    request = call.sessionId().map(request::withSessionId).orElse(request);
    request = call.user().map(request::withUser).orElse(request);
    request = call.agent().map(request::withAgent).orElse(request);
    ToolResult result;
    try {
      result =
          new RemoteToolExecutor(
                  bus.orElseThrow(),
                  group,
                  Optional.of(serverName),
                  () -> remoteRegistration.get().containsKey(group))
              .execute(request, arguments);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return ToolResult.failure(ErrorCode.CANCELLED, "The call was cancelled.");
    }
    if (result instanceof ToolResult.Failure failure
        && failure.error().code() == ErrorCode.TOOL_NOT_FOUND) {
      return ToolResult.failure(
          ErrorCode.INVALID_ARGUMENTS,
          "The worker of group '"
              + group
              + "' that took the call does not let a model register MCP servers, or does not"
              + " bridge '"
              + serverName
              + "'. The workers of one group should share one config.",
          failure.error().message());
    }
    return result;
  }

  @Tool(
      name = "mcp_unregister_server",
      description = "Disconnects an MCP server and removes its tools.",
      idempotent = true,
      openWorld = false)
  public ToolResult unregisterServer(
      ToolCall call,
      @Param(name = "server_name", description = "The server's name, from mcp_list_services.")
          String serverName) {
    Server served = find(caller(), serverName);
    McpBridge.ServerInfo server = served.info();
    if (served.remote().isPresent()) {
      String group = served.remote().get().group();
      if (bus.isEmpty() || !remoteRegistration.get().containsKey(group)) {
        throw ToolException.invalidArguments(
            "MCP server '"
                + server.name()
                + "' runs on worker group '"
                + group
                + "', whose workers do not let a model unregister servers.");
      }
      ObjectNode request = MAPPER.createObjectNode().put("server_name", server.name());
      return remoteCall(call, group, server.name(), UNREGISTER_SERVER, request);
    }
    if (!registration.offered()) {
      throw ToolException.invalidArguments(
          "This host does not let a model unregister MCP servers of its own (mcp.allow_register is"
              + " none).");
    }
    bridge.remove(server.name());
    return ToolResult.success(
        "MCP server '" + server.name() + "' is disconnected and its tools removed.");
  }

  /** The named server as the set shows it; one it does not show is unknown. */
  private Server find(ToolSet set, String serverName) {
    List<Server> visible = visibleServers(set);
    return visible.stream()
        .filter(server -> server.name().equalsIgnoreCase(serverName))
        .findFirst()
        .orElseThrow(
            () ->
                ToolException.invalidArguments(
                    McpBridge.unknownServer(
                        serverName, visible.stream().map(Server::info).toList())));
  }
}
