package dev.toolhost.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolSet;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** What the log and the model see of a server's command line and URL. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RedactionTest {

  @Test
  void secretOptionsKeyValuePairsAndKeyLookingArgumentsAreMasked() {
    String shown =
        Redaction.commandLine(
            "npx",
            List.of(
                "-y",
                "@modelcontextprotocol/server-github",
                "--api-key",
                "hunter2",
                "--token=abc123",
                "--client-secret",
                "s3",
                "API_KEY=plain",
                "sk-proj-abcdefghijklmnop",
                "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
                "xoxb-1234-5678-abcdefgh",
                "Zr8kQ2mN7vX4pL9sT3wY6bH1cF5gJ0dE",
                "--port",
                "8080",
                "-p",
                "3001",
                "/home/user/some/quite/long/path/to/server.js"));

    assertThat(shown)
        .isEqualTo(
            "npx -y @modelcontextprotocol/server-github --api-key *** --token=*** --client-secret"
                + " *** API_KEY=*** *** *** *** *** --port 8080 -p 3001"
                + " /home/user/some/quite/long/path/to/server.js");
  }

  @Test
  void aUrlLosesItsUserInformationAndSecretQueryValues() {
    assertThat(
            Redaction.url(
                URI.create("https://user:pw@mcp.example.com:8443/mcp?api_key=abc&region=eu")))
        .isEqualTo("https://***@mcp.example.com:8443/mcp?api_key=***&region=eu");
  }

  @Test
  void theLogAndTheServiceDetailsShowNoSecretOfTheCommandLineOrEnvironment() {
    ToolRegistry registry = new ToolRegistry();
    ToolDispatcher dispatcher = ToolDispatcher.create();
    McpServerConfig config =
        new McpServerConfig(
            "keyed",
            new McpServerConfig.Stdio(
                "/nonexistent/mcp-server",
                List.of("--api-key", "hunter2-in-argv", "--port", "8080"),
                Map.of("SERVICE_TOKEN", "env-secret-value")),
            Optional.empty(),
            McpServerConfig.DEFAULT_TIMEOUT);
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    PrintStream original = System.err;
    String details;
    try (McpBridge bridge = McpBridge.builder(registry).build()) {
      // slf4j-simple writes to whatever System.err is at the time of each line.
      System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
      try {
        bridge.start(List.of(config));
      } finally {
        System.setErr(original);
      }
      registry.registerAll(bridge.managementTools(dispatcher));
      details =
          dispatcher
              .dispatch(
                  ToolSet.of(registry, ToolProfiles.MAIN),
                  ToolCall.of("mcp_get_service_details", "{\"server_name\": \"keyed\"}"))
              .text();
    }
    String log = captured.toString(StandardCharsets.UTF_8);

    assertThat(log).contains("/nonexistent/mcp-server --api-key *** --port 8080");
    assertThat(details).contains("/nonexistent/mcp-server --api-key *** --port 8080");
    for (String shown : List.of(log, details)) {
      assertThat(shown).doesNotContain("hunter2-in-argv").doesNotContain("env-secret-value");
    }
  }
}
