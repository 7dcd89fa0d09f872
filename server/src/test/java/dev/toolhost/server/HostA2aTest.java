package dev.toolhost.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpServer;
import dev.toolhost.agent.Agents;
import dev.toolhost.agent.Conversation;
import dev.toolhost.agent.RunListener;
import dev.toolhost.agent.RunResult;
import dev.toolhost.host.HostConfig;
import dev.toolhost.memory.WorkingMemory;
import dev.toolhost.testing.RecordedRequest;
import dev.toolhost.testing.ScriptedModelServer;
import dev.toolhost.testing.ScriptedReply;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The {@code a2a:} section on a real host: an agent's invoke_agent call outlasts its wait, the late
 * answer lands in working memory under the session and is handled under {@code a2a_synthesis},
 * where invoke_agent does not exist, and what the synthesis makes of it reaches the session's next
 * turn; the host's own agent is published over A2A behind the host's token.
 */
@Timeout(60)
class HostA2aTest {

  private static final JsonMapper JSON = JsonMapper.shared();

  private final ScriptedModelServer model = ScriptedModelServer.start();
  private final AtomicBoolean finished = new AtomicBoolean();
  private HttpServer remote;

  @BeforeEach
  void startRemote() throws Exception {
    // A remote agent speaking A2A 0.3 whose one task works until the test lets it finish.
    remote = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    remote.createContext(
        "/",
        exchange -> {
          String body;
          if (exchange.getRequestURI().getPath().endsWith("/.well-known/agent-card.json")) {
            body =
                """
                {"name": "auditor", "description": "Audits expense reports.",
                 "url": "http://127.0.0.1:%d/rpc", "protocolVersion": "0.3.0",
                 "version": "1", "capabilities": {"streaming": false},
                 "skills": [{"id": "audit", "name": "Audit", "description": "Audits expenses",
                             "tags": ["expenses"], "examples": ["Audit last month"]}]}"""
                    .formatted(remote.getAddress().getPort());
          } else {
            JsonNode request = JSON.readTree(exchange.getRequestBody().readAllBytes());
            String state = finished.get() ? "completed" : "working";
            String artifacts =
                finished.get()
                    ? ", \"artifacts\": [{\"artifactId\": \"a\", \"parts\": [{\"kind\": \"text\","
                        + " \"text\": \"No irregular expenses.\"}]}]"
                    : "";
            body =
                "{\"jsonrpc\": \"2.0\", \"id\": "
                    + request.path("id")
                    + ", \"result\": {\"kind\": \"task\", \"id\": \"task-7\", \"contextId\": \"c\","
                    + " \"status\": {\"state\": \""
                    + state
                    + "\"}"
                    + artifacts
                    + "}}";
          }
          byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
          exchange.getResponseHeaders().add("Content-Type", "application/json");
          exchange.sendResponseHeaders(200, bytes.length);
          exchange.getResponseBody().write(bytes);
          exchange.close();
        });
    remote.start();
  }

  @AfterEach
  void stop() {
    remote.stop(0);
    model.close();
  }

  private String config() {
    return """
        http: {port: 0, token: s3cret}
        agents:
          assistant:
            base_url: %s
            model: scripted
            api_key_env: NO_SUCH_KEY
            description: Helps with expenses.
        a2a:
          agents:
            auditor: {url: 'http://127.0.0.1:%d'}
          default_wait: 1s
          server: {public_url: 'https://toolhost.example.com'}
        """
        .formatted(model.baseUrl(), remote.getAddress().getPort());
  }

  private static List<String> toolNames(RecordedRequest request) {
    List<String> names = new java.util.ArrayList<>();
    request
        .json()
        .path("tools")
        .forEach(t -> names.add(t.path("function").path("name").asString()));
    return names;
  }

  @Test
  void aLateAnswerLandsInWorkingMemoryAndIsHandledUnderA2aSynthesisWithoutInvokeAgent()
      throws Exception {
    // The turn: the model asks the auditor, which keeps working; the model says it asked.
    model.enqueue(
        ScriptedReply.toolCalls(
            ScriptedReply.call(
                "call_1",
                "invoke_agent",
                "{\"agent_name\": \"auditor\", \"message\": \"Audit last month\"}")));
    model.enqueue(ScriptedReply.answer("I asked the auditor."));
    // The synthesis: the model tries invoke_agent again, is refused, then sums up.
    model.enqueue(
        ScriptedReply.toolCalls(
            ScriptedReply.call(
                "call_2",
                "invoke_agent",
                "{\"agent_name\": \"auditor\", \"message\": \"again\"}")));
    model.enqueue(ScriptedReply.answer("The audit is clean."));
    try (Host host =
        Host.builder(HostConfig.parse(config(), "toolhost.yaml")).environment(Map.of()).build()) {
      host.start();
      Agents agents = host.service(Agents.class).orElseThrow();
      Conversation conversation = agents.conversation("assistant", "sess-1");
      List<String> notices = new CopyOnWriteArrayList<>();
      conversation.onNotice(notices::add);

      RunResult turn =
          agents.agent("assistant").run(conversation, "Audit my expenses", RunListener.NONE);
      assertThat(turn.text()).isEqualTo("I asked the auditor.");
      RecordedRequest first = model.takeRequest();
      assertThat(toolNames(first)).contains("invoke_agent", "list_known_agents");
      String toolResult = model.takeRequest().json().path("messages").toString();
      assertThat(toolResult)
          .contains("Task dispatched to agent 'auditor' with task_id: task-7")
          .contains("session/sess-1/a2a/auditor/task-7/result");

      finished.set(true);
      WorkingMemory memory = host.service(WorkingMemory.class).orElseThrow();
      await()
          .atMost(Duration.ofSeconds(20))
          .until(() -> memory.get("session/sess-1/a2a/auditor/task-7/result").isPresent());
      assertThat(memory.get("session/sess-1/a2a/auditor/task-7/result").orElseThrow().value())
          .isEqualTo("No irregular expenses.");
      await().atMost(Duration.ofSeconds(20)).until(() -> !notices.isEmpty());

      RecordedRequest synthesis = model.takeRequest();
      assertThat(toolNames(synthesis)).doesNotContain("invoke_agent", "list_known_agents");
      assertThat(synthesis.json().path("messages").toString()).contains("No irregular expenses.");
      String refused = model.takeRequest().json().path("messages").toString();
      assertThat(refused).contains("Tool 'invoke_agent' does not exist");
      assertThat(notices.get(0))
          .contains("task-7", "No irregular expenses.", "[a2a_synthesis] The audit is clean.");
    }
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
