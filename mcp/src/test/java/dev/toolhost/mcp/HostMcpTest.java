package dev.toolhost.mcp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSpec;
import dev.toolhost.core.spi.Route;
import dev.toolhost.search.ServiceSearchExtension;
import dev.toolhost.testing.TestHost;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A host that bridges the MCP reference server from its config and serves its tools, beside a
 * server that cannot start, to each profile as it allows; closing it stops the servers it started.
 * (Through the host's MCP gateway: the server module's {@code HostMcpTest}.)
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class HostMcpTest {

  private static final String MARKER = "mcp-server-everything";
  private static final JsonMapper JSON = JsonMapper.shared();

  @TempDir Path dir;
  private TestHost host;

  @AfterEach
  void closeHost() {
    if (host != null) {
      host.close();
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> TestProcesses.aliveDescendants(MARKER) == 0);
  }

  /** A host of the class path's extensions (MCP and service search) bridging the servers. */
  private TestHost start(String registration) {
    host =
        TestHost.builder()
            .config(NpmPackages.everythingAndGhostSection(registration, dir.resolve("state")))
            .directory(dir)
            .start();
    return host;
  }

  private TestHost start() {
    return start("allow_register: stdio");
  }

  private static ToolSpec spec(TestHost host, String name) {
    return host.runtime().registry().find(name).orElseThrow().spec();
  }

  private static ErrorCode errorCode(ToolResult result) {
    assertThat(result).as(result.text()).isInstanceOf(ToolResult.Failure.class);
    return ((ToolResult.Failure) result).error().code();
  }

  @Test
  void theHostServesTheConfiguredServersToolsBesideABrokenOne() throws Exception {
    start();

    assertThat(host.toolNames("main"))
        .contains("everything_echo", "everything_get-sum")
        .contains(
            "mcp_list_services",
            "mcp_get_service_details",
            "mcp_invoke_tool",
            "mcp_register_server",
            "mcp_unregister_server");
    assertThat(spec(host, "everything_echo").source()).isEqualTo("mcp:everything");
    assertThat(spec(host, "mcp_invoke_tool").source()).isEqualTo(McpBridge.MANAGEMENT_SOURCE);
    assertThat(
            host.runtime()
                .service(McpBridge.class)
                .orElseThrow()
                .server("ghost")
                .orElseThrow()
                .state())
        .isEqualTo("broken");

    ToolResult echo = host.call("everything_echo", "{\"message\": \"from config\"}");
    assertThat(echo.isError()).as(echo.text()).isFalse();
    assertThat(echo.text()).contains("from config");

    Route.Answer search =
        host.request(
            "GET", ServiceSearchExtension.PATH, Map.of("q", List.of("everything echo")), "");
    JsonNode found = JSON.readTree(new String(search.body(), StandardCharsets.UTF_8));
    assertThat(found.get("results")).hasSize(1);
    assertThat(found.at("/results/0/id").asString()).isEqualTo("everything");
    assertThat(found.at("/results/0/type").asString()).isEqualTo("mcp");
    // Derived from its tools' descriptions, the echo tool's among them.
    assertThat(found.at("/results/0/summary").asString())
        .startsWith("MCP server everything: ")
        .containsIgnoringCase("echo");

    assertThat(host.call("mcp_list_services", "{}").text())
        .contains("everything")
        .contains("ghost");

    ToolResult guide = host.call("get_tool_guide", "{\"name\": \"mcp-tool-guide\"}");
    assertThat(guide.isError()).as(guide.text()).isFalse();
    assertThat(Files.exists(dir.resolve("state/mcp-pins.json"))).isTrue();
  }

  @Test
  void theSubagentProfileHasTheListingToolsButNeitherRegistrationNorTheServersTools() {
    start();

    assertThat(host.toolNames("main")).contains("everything_echo");
    assertThat(host.toolNames("subagent"))
        .contains("mcp_list_services", "mcp_invoke_tool")
        .doesNotContain("everything_echo", "mcp_register_server", "mcp_unregister_server");
    ToolResult refused =
        host.call(
            "subagent", "mcp_register_server", "{\"server_name\": \"x\", \"command\": \"x\"}");
    assertThat(errorCode(refused)).isEqualTo(ErrorCode.TOOL_NOT_FOUND);
    // Nor through the listing tools: a call they make runs under the caller's profile.
    ToolResult through =
        host.call(
            "subagent",
            "mcp_invoke_tool",
            "{\"server_name\": \"everything\", \"tool_name\": \"echo\", \"arguments\":"
                + " {\"message\": \"hi\"}}");
    assertThat(through.isError()).as(through.text()).isTrue();
  }

  @Test
  void withoutOptingInTheHostOffersNoWayForAModelToRegisterAServer() {
    start("approved: []");

    assertThat(host.toolNames("main"))
        .contains("everything_echo", "mcp_list_services", "mcp_invoke_tool")
        .doesNotContain("mcp_register_server", "mcp_unregister_server");
    ToolResult refused =
        host.call("mcp_register_server", "{\"server_name\": \"x\", \"command\": \"/bin/sh\"}");
    assertThat(errorCode(refused)).isEqualTo(ErrorCode.TOOL_NOT_FOUND);
  }

  @Test
  void closingTheHostStopsTheServersItStarted() {
    start();
    assertThat(TestProcesses.aliveDescendants(MARKER)).isPositive();

    host.close();

    assertThat(host.runtime().registry().find("everything_echo")).isEmpty();
  }
}
