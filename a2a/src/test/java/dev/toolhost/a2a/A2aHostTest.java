package dev.toolhost.a2a;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpServer;
import dev.toolhost.agent.Agents;
import dev.toolhost.agent.AgentsExtension;
import dev.toolhost.agent.Conversation;
import dev.toolhost.agent.RunListener;
import dev.toolhost.agent.RunResult;
import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.memory.WorkingMemory;
import dev.toolhost.memory.WorkingMemoryExtension;
import dev.toolhost.testing.RecordedRequest;
import dev.toolhost.testing.ScriptedModelServer;
import dev.toolhost.testing.ScriptedReply;
import dev.toolhost.testing.TestHost;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The {@code a2a:} section on a started host with agents: an agent's invoke_agent call outlasts its
 * wait, the late answer lands in working memory under the session and is handled under {@code
 * a2a_synthesis}, where invoke_agent does not exist, and what the synthesis makes of it reaches the
 * session's next turn.
 */
@Timeout(60)
class A2aHostTest {

  private static final List<HostExtension<?>> EXTENSIONS =
      List.of(new WorkingMemoryExtension(), new AgentsExtension(), new A2aExtension());

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
    return ScriptedModelServer.agentSection(
            model.baseUrl(), "assistant", "scripted", "description: Helps with expenses.")
        + """
        a2a:
          agents:
            auditor: {url: 'http://127.0.0.1:%d'}
          default_wait: 1s
        """
            .formatted(remote.getAddress().getPort());
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
    try (TestHost host = TestHost.start(config(), EXTENSIONS)) {
      Agents agents = host.runtime().service(Agents.class).orElseThrow();
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
      WorkingMemory memory = host.runtime().service(WorkingMemory.class).orElseThrow();
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
}
