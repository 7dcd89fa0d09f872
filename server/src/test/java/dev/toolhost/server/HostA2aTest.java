package dev.toolhost.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.host.HostConfig;
import dev.toolhost.testing.ScriptedModelServer;
import dev.toolhost.testing.ScriptedReply;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The {@code a2a:} section on a served host: the host's own agent is published over A2A behind the
 * host's token, answered and streamed through the host's HTTP stack. (The late answers of the a2a
 * tools are tested in the a2a module.)
 */
@Timeout(60)
class HostA2aTest {

  private static final JsonMapper JSON = JsonMapper.shared();

  private final ScriptedModelServer model = ScriptedModelServer.start();

  @AfterEach
  void stop() {
    model.close();
  }

  private String config() {
    return "http: {port: 0, token: s3cret}\n"
        + ScriptedModelServer.agentSection(
            model.baseUrl(), "assistant", "scripted", "description: Helps with expenses.")
        + """
        a2a:
          agents:
            auditor: {url: 'http://127.0.0.1:9'}
          default_wait: 1s
          server: {public_url: 'https://toolhost.example.com'}
        """;
  }

  @Test
  void theHostsAgentIsPublishedOverA2aBehindItsToken() throws Exception {
    model.enqueue(ScriptedReply.answer("Expenses look fine."));
    model.enqueue(ScriptedReply.answer("Streamed and fine."));
    try (Host host =
            Host.builder(HostConfig.parse(config(), "toolhost.yaml"))
                .environment(Map.of())
                .build();
        HttpClient http = HttpClient.newHttpClient()) {
      URI base = host.start();
      URI card = base.resolve("/a2a/assistant/.well-known/agent-card.json");
      assertThat(
              http.send(HttpRequest.newBuilder(card).build(), HttpResponse.BodyHandlers.ofString())
                  .statusCode())
          .isEqualTo(401);
      HttpResponse<String> published =
          http.send(
              HttpRequest.newBuilder(card).header("Authorization", "Bearer s3cret").build(),
              HttpResponse.BodyHandlers.ofString());
      JsonNode document = JSON.readTree(published.body());
      assertThat(document.path("url").asString())
          .isEqualTo("https://toolhost.example.com/a2a/assistant");
      assertThat(document.path("skills").findValuesAsString("id"))
          .contains("assistant", "invoke_agent");

      HttpResponse<String> sent =
          http.send(
              HttpRequest.newBuilder(base.resolve("/a2a/assistant"))
                  .header("Authorization", "Bearer s3cret")
                  .header("Content-Type", "application/json")
                  .header("A2A-Version", "1.0")
                  .POST(
                      HttpRequest.BodyPublishers.ofString(
                          "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"SendMessage\","
                              + " \"params\": {\"message\": {\"messageId\": \"m\", \"role\":"
                              + " \"ROLE_USER\", \"parts\": [{\"text\": \"Check my expenses\"}]}}}"))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      JsonNode task = JSON.readTree(sent.body()).path("result").path("task");
      assertThat(task.path("status").path("state").asString()).isEqualTo("TASK_STATE_COMPLETED");
      assertThat(task.path("artifacts").get(0).path("parts").get(0).path("text").asString())
          .isEqualTo("Expenses look fine.");

      // Streamed as server-sent events through the host's own HTTP stack, version 0.3.
      HttpResponse<String> streamed =
          http.send(
              HttpRequest.newBuilder(base.resolve("/a2a/assistant"))
                  .header("Authorization", "Bearer s3cret")
                  .header("Content-Type", "application/json")
                  .POST(
                      HttpRequest.BodyPublishers.ofString(
                          "{\"jsonrpc\": \"2.0\", \"id\": 2, \"method\": \"message/stream\","
                              + " \"params\": {\"message\": {\"kind\": \"message\", \"messageId\":"
                              + " \"m2\", \"role\": \"user\", \"parts\": [{\"kind\": \"text\", \"text\":"
                              + " \"Again\"}]}}}"))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertThat(streamed.headers().firstValue("Content-Type").orElse(""))
          .startsWith("text/event-stream");
      List<JsonNode> events =
          streamed
              .body()
              .lines()
              .filter(line -> line.startsWith("data: "))
              .map(line -> JSON.readTree(line.substring(6)).path("result"))
              .toList();
      assertThat(events.get(0).path("kind").asString()).isEqualTo("task");
      JsonNode last = events.get(events.size() - 1);
      assertThat(last.path("kind").asString()).isEqualTo("status-update");
      assertThat(last.path("status").path("state").asString()).isEqualTo("completed");
      assertThat(streamed.body()).contains("Streamed and fine.");
    }
  }
}
