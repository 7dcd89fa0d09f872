package dev.toolhost.mcp;

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
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
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
 */
final class McpManagementTools {

  private static final JsonMapper MAPPER = JsonMapper.shared();

  /** The tool that registers a server at run time. */
  static final String REGISTER_SERVER = "mcp_register_server";

  /** The tool that unregisters a server registered at run time. */
  static final String UNREGISTER_SERVER = "mcp_unregister_server";

  private static final Set<String> REGISTRATION_TOOLS = Set.of(REGISTER_SERVER, UNREGISTER_SERVER);

  private final McpBridge bridge;
  private final ToolDispatcher dispatcher;
  private final RegistrationPolicy registration;

  McpManagementTools(McpBridge bridge, ToolDispatcher dispatcher, RegistrationPolicy registration) {
    this.bridge = bridge;
    this.dispatcher = dispatcher;
    this.registration = registration;
  }

  List<ExecutableTool> tools() {
    return MethodTools.of(this, McpBridge.MANAGEMENT_SOURCE).stream()
        .filter(tool -> registration.offered() || !REGISTRATION_TOOLS.contains(tool.name()))
        .toList();
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
  private static Optional<McpBridge.ServerInfo> visible(ToolSet set, McpBridge.ServerInfo server) {
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
        new McpBridge.ServerInfo(
            server.name(),
            server.source(),
            server.endpoint(),
            server.state(),
            server.lastError(),
            tools));
  }

  private List<McpBridge.ServerInfo> visibleServers(ToolSet set) {
    return bridge.servers().stream().flatMap(server -> visible(set, server).stream()).toList();
  }

  @Tool(
      name = "mcp_list_services",
      description =
          "Lists the connected MCP servers: name, state, tool count and tool names. Use a name"
              + " from here with mcp_get_service_details and mcp_invoke_tool.",
      readOnly = true,
      destructive = false,
      idempotent = true,
      openWorld = false)
  public String listServices() {
    bridge.recheckPins();
    ArrayNode list = MAPPER.createArrayNode();
    for (McpBridge.ServerInfo server : visibleServers(caller())) {
      ObjectNode entry = list.addObject();
      entry.put("server_name", server.name());
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
      name = "mcp_get_service_details",
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
    McpBridge.ServerInfo server = find(caller(), serverName);
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
      name = "mcp_invoke_tool",
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
    McpBridge.ServerInfo server = find(set, serverName);
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
    // The same call, to the bridged tool, through the same dispatcher and the same tool set.
    ToolCall direct =
        new ToolCall(
            call.callId(),
            tool.registeredName(),
            json,
            call.sessionId(),
            call.user(),
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
  public String registerServer(
      @Param(name = "server_name", description = "A new, unique name for the server.")
          String serverName,
      @Param(description = "The program to run, or the server's http(s) URL.") String command,
      @Param(description = "The program's arguments (stdio only).")
          Optional<List<String>> arguments) {
    McpServerConfig.Transport transport;
    if (command.startsWith("http://") || command.startsWith("https://")) {
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
      transport = new McpServerConfig.Stdio(command, arguments.orElse(List.of()), Map.of());
    }
    McpServerConfig config;
    try {
      config =
          new McpServerConfig(
              serverName, transport, Optional.empty(), McpServerConfig.DEFAULT_TIMEOUT);
    } catch (IllegalArgumentException e) {
      // The config's own checks (the name) speak to whoever wrote it: here, the model.
      throw ToolException.invalidArguments(e.getMessage());
    }
    if (bridge.server(serverName).isPresent()) {
      throw ToolException.invalidArguments(
          "An MCP server named '" + serverName + "' is already registered; choose another name.");
    }
    McpBridge.ServerInfo server = bridge.add(config);
    if (!server.state().equals("connected")) {
      return "MCP server '"
          + server.name()
          + "' is registered but not connected yet ("
          + server.lastError()
          + "); the host keeps trying. Check mcp_list_services later.";
    }
    return "MCP server '"
        + server.name()
        + "' is connected with "
        + server.tools().size()
        + " tools: "
        + server.tools().stream()
            .map(McpBridge.ServerTool::registeredName)
            .collect(Collectors.joining(", "))
        + ".";
  }

  @Tool(
      name = "mcp_unregister_server",
      description = "Disconnects an MCP server and removes its tools.",
      idempotent = true,
      openWorld = false)
  public String unregisterServer(
      @Param(name = "server_name", description = "The server's name, from mcp_list_services.")
          String serverName) {
    McpBridge.ServerInfo server = find(caller(), serverName);
    bridge.remove(server.name());
    return "MCP server '" + server.name() + "' is disconnected and its tools removed.";
  }

  /** The named server as the set shows it; one it does not show is unknown. */
  private McpBridge.ServerInfo find(ToolSet set, String serverName) {
    return bridge
        .server(serverName)
        .flatMap(server -> visible(set, server))
        .orElseThrow(
            () ->
                ToolException.invalidArguments(
                    McpBridge.unknownServer(serverName, visibleServers(set))));
  }
}
