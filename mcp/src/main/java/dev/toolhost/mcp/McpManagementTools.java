package dev.toolhost.mcp;

import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.MethodTools;
import dev.toolhost.core.Param;
import dev.toolhost.core.Tool;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolException;
import dev.toolhost.core.ToolResult;
import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The management tools give a model run-time control over the bridge's MCP servers: list them,
 * inspect their tools, call a tool, connect a server and disconnect one. Server names match
 * ignoring case; an unknown server is an error that lists the connected ones.
 */
final class McpManagementTools {

  private static final JsonMapper MAPPER = JsonMapper.shared();

  private final McpBridge bridge;

  McpManagementTools(McpBridge bridge) {
    this.bridge = bridge;
  }

  List<ExecutableTool> tools() {
    return MethodTools.of(this, McpBridge.MANAGEMENT_SOURCE);
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
    for (McpBridge.ServerInfo server : bridge.servers()) {
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
    McpBridge.ServerInfo server = find(serverName);
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
          Map<String, Object> arguments)
      throws InterruptedException {
    find(serverName);
    JsonNode args = MAPPER.valueToTree(arguments == null ? Map.of() : arguments);
    return bridge.invoke(serverName, toolName, args, call.deadline());
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
    McpServerConfig config;
    if (command.startsWith("http://") || command.startsWith("https://")) {
      URI url = URI.create(command);
      McpServerConfig.Transport transport =
          url.getPath() != null && url.getPath().endsWith("/sse")
              ? new McpServerConfig.Sse(url, Map.of())
              : new McpServerConfig.StreamableHttp(url, Map.of());
      config =
          new McpServerConfig(
              serverName, transport, Optional.empty(), McpServerConfig.DEFAULT_TIMEOUT);
    } else {
      config = McpServerConfig.stdio(serverName, command, arguments.orElse(List.of()));
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
    McpBridge.ServerInfo server = find(serverName);
    bridge.remove(server.name());
    return "MCP server '" + server.name() + "' is disconnected and its tools removed.";
  }

  private McpBridge.ServerInfo find(String serverName) {
    return bridge
        .server(serverName)
        .orElseThrow(() -> ToolException.invalidArguments(bridge.unknownServer(serverName)));
  }
}
