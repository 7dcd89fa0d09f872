package dev.toolhost.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.mcp.NpmPackages;
import dev.toolhost.mcp.TestProcesses;
import dev.toolhost.testing.ScriptedModelServer;
import dev.toolhost.testing.ScriptedReply;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * End to end, the secrets extension keeps the host's own bearer token from leaving it: a stdio MCP
 * server that was handed the token (server-everything's {@code get-env} prints its environment)
 * answers through the host with the token redacted, over the HTTP API, over the MCP gateway (the
 * MCP Inspector CLI as the client), and in the agent loop's request to its model (the scripted
 * model server records what it was sent).
 */
@Timeout(180)
class HostSecretsTest {

  private static final String MARKER = "mcp-server-everything";
  private static final String TOKEN = "th-Zq8VmR2xL5nT9wK3pB7cY4dF6gH1jS0a";
  private static final JsonMapper JSON = JsonMapper.shared();

  private final ScriptedModelServer model = ScriptedModelServer.start();
  private final HttpClient http = HttpClient.newHttpClient();
  private Host host;

  @AfterEach
  void close() throws InterruptedException {
    if (host != null) {
      host.close();
    }
    model.close();
    http.close();
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (TestProcesses.aliveDescendants(MARKER) > 0 && System.nanoTime() < deadline) {
      Thread.sleep(100);
    }
  }

  private URI start() {
    String config =
        """
        http:
          port: 0
        mcp:
          servers:
            everything:
              command: %s
              args: [stdio]
              env: {HANDED_TOKEN: "%s"}
        agents:
          helper:
            model: helper-model
            base_url: %s
            api_key_env: NO_SUCH_KEY
        """
            .formatted(NpmPackages.bin(MARKER), TOKEN, model.baseUrl());
    // The host reads its bearer token from TOOLHOST_TOKEN, as it does by default.
    host =
        Host.builder(HostConfig.parse(config, "secrets.yaml"))
            .environment(Map.of("TOOLHOST_TOKEN", TOKEN))
            .build();
    return host.start();
  }

  private HttpResponse<String> post(URI uri, String body) throws Exception {
    return http.send(
        HttpRequest.newBuilder(uri)
            .header("Authorization", "Bearer " + TOKEN)
            .header("Content-Type", "application/json")
            .timeout(Duration.ofSeconds(60))
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void theTokenAnMcpServerEchoesIsRedactedOverHttpAndCounted() throws Exception {
    URI base = start();

    HttpResponse<String> invoked =
        post(base.resolve("v1/tools/everything_get-env/invoke"), "{\"arguments\": {}}");

    assertThat(invoked.statusCode()).as(invoked.body()).isEqualTo(200);
    JsonNode body = JSON.readTree(invoked.body());
    assertThat(body.get("is_error").asBoolean()).isFalse();
    assertThat(body.get("content").asString())
        .contains("HANDED_TOKEN", "[REDACTED:http.token]", "secret was removed")
        .doesNotContain(TOKEN);
    assertThat(invoked.body()).doesNotContain(TOKEN);
    String metrics =
        http.send(
                HttpRequest.newBuilder(base.resolve("metrics"))
                    .header("Authorization", "Bearer " + TOKEN)
                    .build(),
                HttpResponse.BodyHandlers.ofString())
            .body();
    assertThat(metrics.lines())
        .anyMatch(
            line ->
                line.startsWith("toolhost_secrets_findings_total{")
                    && line.contains("rule=\"http.token\"")
                    && line.contains("tool_name=\"everything_get-env\""));
  }

  @Test
  void theTokenAnMcpServerEchoesIsRedactedThroughTheMcpGateway() throws Exception {
    URI base = start();

    String output =
        InspectorCli.run(
            base + "mcp",
            "--header",
            "Authorization: Bearer " + TOKEN,
            "--method",
            "tools/call",
            "--tool-name",
            "everything_get-env");

    assertThat(output).contains("HANDED_TOKEN", "[REDACTED:http.token]").doesNotContain(TOKEN);
  }

  @Test
  void theTokenAnMcpServerEchoesNeverReachesTheAgentsModel() throws Exception {
    model.enqueue(
        ScriptedReply.toolCalls(ScriptedReply.call("call_1", "everything_get-env", "{}")));
    model.enqueue(ScriptedReply.answer("I read the environment."));
    URI base = start();

    HttpResponse<String> invoked =
        post(base.resolve("v1/tools/helper/invoke"), "{\"arguments\": {\"message\": \"env?\"}}");

    assertThat(invoked.statusCode()).as(invoked.body()).isEqualTo(200);
    assertThat(invoked.body()).contains("I read the environment.");
    model.takeRequest();
    String second = model.takeRequest().json().toString();
    assertThat(second).contains("HANDED_TOKEN", "[REDACTED:http.token]").doesNotContain(TOKEN);
  }
}
