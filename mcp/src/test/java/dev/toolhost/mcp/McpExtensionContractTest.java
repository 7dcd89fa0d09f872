package dev.toolhost.mcp;

import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.testing.HostExtensionContract;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import tools.jackson.databind.json.JsonMapper;

/**
 * The MCP extension keeps the host extension contract with one stdio server of its own ({@link
 * TestMcpServer}, a child JVM) and registration open to stdio servers: off until configured, then
 * the server's tools under its prefix, the management tools, and the rule that neither subagents
 * nor fired tasks may register or unregister a server.
 */
class McpExtensionContractTest extends HostExtensionContract<McpConfig> {

  private static final Set<String> MANAGEMENT =
      Set.of(
          "mcp_list_services",
          "mcp_get_service_details",
          "mcp_invoke_tool",
          McpManagementTools.REGISTER_SERVER,
          McpManagementTools.UNREGISTER_SERVER);

  private static final Set<String> SERVER_TOOLS =
      Set.of(
          "own_add",
          "own_slow_echo",
          "own_hang",
          "own_big",
          "own_add_tool",
          "own_redefine",
          "own_append",
          "own_append_idempotent");

  @Override
  protected HostExtension<McpConfig> extension() {
    return new McpExtension();
  }

  /** The gateway, on every host, configured or not. */
  @Override
  protected List<String> mounts() {
    return List.of(McpGatewayServlet.PATH);
  }

  @Override
  protected Optional<String> validSection() {
    List<String> command = TestProcesses.javaMain(TestMcpServer.class);
    // Each argument a JSON string, which YAML reads as a double-quoted scalar.
    String args =
        command.stream()
            .skip(1)
            .map(argument -> "      - " + JsonMapper.shared().writeValueAsString(argument))
            .collect(Collectors.joining("\n"));
    return Optional.of(
        """
        allow_register: stdio
        start_timeout: 60s
        servers:
          own:
            transport: stdio
            command: %s
            prefix: own_
            args:
        %s
        """
            .formatted(JsonMapper.shared().writeValueAsString(command.getFirst()), args));
  }

  @Override
  protected Optional<Misspelling> misspelling() {
    return Optional.of(
        new Misspelling(
            """
            servers:
              own:
                transport: stdio
                comand: /bin/true
            """,
            4,
            5,
            "comand"));
  }

  @Override
  protected Set<String> configuredTools() {
    return Stream.concat(MANAGEMENT.stream(), SERVER_TOOLS.stream()).collect(Collectors.toSet());
  }

  /**
   * Helpers and tasks list the servers and call their tools through the listing tools; they never
   * register one, and a bridged server's own tools enter no restricted profile.
   */
  @Override
  protected Map<String, Set<String>> grantedTools() {
    Set<String> listing = Set.copyOf(McpManagementTools.LISTING);
    return Map.of("subagent", listing, "scheduled", listing);
  }
}
