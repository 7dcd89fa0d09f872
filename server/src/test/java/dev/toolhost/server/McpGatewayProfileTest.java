package dev.toolhost.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSpec;
import dev.toolhost.host.HostConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.json.JsonMapper;

/**
 * Each MCP gateway endpoint answers from the profile it serves, for a real client (the MCP
 * Inspector CLI) as for a hand-written one, and a session opened on one endpoint is unknown on
 * another.
 */
@Timeout(120)
class McpGatewayProfileTest {

  private Host host;

  @AfterEach
  void closeHost() {
    if (host != null) {
      host.close();
    }
  }

  private int start() {
    host =
        Host.builder(HostConfig.defaults().withHttp(HostConfig.Http.defaults().withPort(0)))
            .environment(Map.of())
            .build();
    // Named as the MCP management tools that the subagent profile denies by name.
    for (String name : List.of("mcp_register_server", "mcp_unregister_server")) {
      host.registry()
          .register(
              ExecutableTool.of(
                  new ToolSpec(
                      name,
                      "Stands in for the MCP management tool of that name.",
                      JsonMapper.shared()
                          .createObjectNode()
                          .put("type", "object")
                          .put("additionalProperties", false),
                      "builtin:mcp"),
                  (call, arguments) -> ToolResult.success("registered")));
    }
    host.start();
    return host.port();
  }

  private static List<String> inspectorTools(String url) throws Exception {
    String output = InspectorCli.run(url, "--method", "tools/list");
    List<String> names = new ArrayList<>();
    // Tool names are the only "name" values at the first level of indentation of each tool.
    Matcher matcher = Pattern.compile("(?m)^ {6}\"name\": \"([^\"]+)\"").matcher(output);
    while (matcher.find()) {
      names.add(matcher.group(1));
    }
    return names;
  }

  @Test
  void theInspectorListsExactlyWhatEachProfileAllows() throws Exception {
    int port = start();

    List<String> subagent = inspectorTools("http://127.0.0.1:" + port + "/mcp/subagent");
    List<String> main = inspectorTools("http://127.0.0.1:" + port + "/mcp");

    assertThat(subagent)
        .containsExactlyInAnyOrderElementsOf(host.toolSet("subagent").names())
        .doesNotContain("mcp_register_server", "mcp_unregister_server");
    assertThat(main)
        .containsExactlyInAnyOrderElementsOf(host.toolSet("main").names())
        .contains("mcp_register_server", "mcp_unregister_server");
  }

  @Test
  void aSessionOpenedOnOneProfileIsUnknownOnAnother() throws Exception {
    int port = start();
    String local = "127.0.0.1:" + port;
    List<String> headers =
        List.of("Content-Type: application/json", "Accept: application/json, text/event-stream");
    RequestGuardTest.Answer opened =
        RequestGuardTest.send(
            port,
            "POST",
            "/mcp/subagent",
            local,
            headers,
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                + "\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":"
                + "\"1\"}}}");
    String session = opened.header("mcp-session-id");
    assertThat(session).isNotBlank();

    List<String> withSession = new ArrayList<>(headers);
    withSession.add("Mcp-Session-Id: " + session);
    withSession.add("Mcp-Protocol-Version: 2025-06-18");
    String list = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}";
    RequestGuardTest.Answer onMain =
        RequestGuardTest.send(port, "POST", "/mcp", local, withSession, list);
    RequestGuardTest.Answer onOwn =
        RequestGuardTest.send(port, "POST", "/mcp/subagent", local, withSession, list);

    assertThat(onMain.status()).isEqualTo(404);
    assertThat(onMain.body()).doesNotContain("mcp_register_server");
    assertThat(onOwn.status()).isEqualTo(200);
    assertThat(onOwn.body()).contains("get_tool_guide").doesNotContain("mcp_register_server");
  }
}
