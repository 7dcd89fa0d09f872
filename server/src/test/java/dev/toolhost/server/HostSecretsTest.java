package dev.toolhost.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.host.HostConfig;
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
import java.util.Random;
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
 * model server records what it was sent). Through the gateway, so do the secrets issue 36 found
 * passing, handed to the server the same way: keys gitleaks has no rule for (OpenRouter, Brave
 * Search, a database URL's password), a token followed by '&' in a URL's query, and tokens hidden
 * by a zero-width character or written in full-width forms.
 */
@Timeout(180)
class HostSecretsTest {

  private static final String MARKER = "mcp-server-everything";
  private static final String TOKEN = "th-Zq8VmR2xL5nT9wK3pB7cY4dF6gH1jS0a";
  private static final JsonMapper JSON = JsonMapper.shared();

  // Values made at run time from a seeded random: the source holds no string a scanner would flag.
  private static final Random RANDOM = new Random(0x36L);
  private static final String ALNUM =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  private static final String OPENROUTER = "sk-or-v1-" + random("0123456789abcdef", 64);
  private static final String BRAVE = "BSA" + random(ALNUM + "_-", 28);
  private static final String DB_PASSWORD = random(ALNUM, 20);
  private static final String QUERY_KEY = random(ALNUM, 28);
  private static final String HIDDEN_PAT = "ghp_" + random(ALNUM, 36);
  private static final String WIDE_KEY = "sk-ant-api03-" + random(ALNUM + "_-", 93) + "AA";

  /** The issue 36 secrets, as the MCP server's environment holds them (YAML double-quoted). */
  private static final Map<String, String> HANDED =
      Map.of(
          "HANDED_OPENROUTER",
          OPENROUTER,
          "HANDED_BRAVE",
          BRAVE,
          "HANDED_DB",
          "postgresql://orders_app:" + DB_PASSWORD + "@db.internal:5432/orders",
          "HANDED_QUERY",
          "https://api.example.test/v1/files?api_key=" + QUERY_KEY + "&page=2",
          "HANDED_HIDDEN",
          HIDDEN_PAT.substring(0, 12) + "\\u200B" + HIDDEN_PAT.substring(12),
          "HANDED_WIDE",
          fullWidth(WIDE_KEY));

  private static String random(String alphabet, int length) {
    StringBuilder out = new StringBuilder();
    for (int i = 0; i < length; i++) {
      out.append(alphabet.charAt(RANDOM.nextInt(alphabet.length())));
    }
    return out.toString();
  }

  private static String fullWidth(String text) {
    StringBuilder out = new StringBuilder();
    for (char c : text.toCharArray()) {
      out.append((char) (c + 0xFEE0));
    }
    return out.toString();
  }

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
              env: {HANDED_TOKEN: "%s", %s}
        agents:
          helper:
            model: helper-model
            base_url: %s
            api_key_env: NO_SUCH_KEY
        """
            .formatted(NpmPackages.bin(MARKER), TOKEN, handed(), model.baseUrl());
    // The host reads its bearer token from TOOLHOST_TOKEN, as it does by default.
    host =
        Host.builder(HostConfig.parse(config, "secrets.yaml"))
            .environment(Map.of("TOOLHOST_TOKEN", TOKEN))
            .build();
    return host.start();
  }

  private static String handed() {
    StringBuilder out = new StringBuilder();
    HANDED.forEach(
        (name, value) ->
            out.append(out.isEmpty() ? "" : ", ")
                .append(name)
                .append(": \"")
                .append(value)
                .append('"'));
    return out.toString();
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
        .contains("HANDED_TOKEN", "[REDACTED:http.token]", "secrets were removed")
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
    assertThat(output)
        .contains(
            "[REDACTED:openrouter-api-key]",
            "[REDACTED:brave-search-api-key]",
            "postgresql://orders_app:[REDACTED:database-url-password]@db.internal:5432/orders",
            "/v1/files?api_key=[REDACTED:generic-api-key]&page=2",
            "[REDACTED:github-pat]",
            "[REDACTED:anthropic-api-key]");
    for (String secret :
        new String[] {OPENROUTER, BRAVE, DB_PASSWORD, QUERY_KEY, WIDE_KEY, fullWidth(WIDE_KEY)}) {
      assertThat(output).doesNotContain(secret);
    }
    // Neither part of the token a zero-width space split is left.
    assertThat(output)
        .doesNotContain(HIDDEN_PAT.substring(0, 12))
        .doesNotContain(HIDDEN_PAT.substring(12));
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
