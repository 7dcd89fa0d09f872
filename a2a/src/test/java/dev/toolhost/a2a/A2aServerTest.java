package dev.toolhost.a2a;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.toolhost.core.spi.Principal;
import dev.toolhost.core.spi.Route;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.JsonNode;

/**
 * The A2A server over HTTP, spoken to as plain JSON-RPC in both versions: cards, send, stream, get,
 * cancel, the protocol's error codes, and the bounded task store.
 */
@Timeout(30)
class A2aServerTest {

  private final CountDownLatch release = new CountDownLatch(1);
  private final AtomicBoolean interrupted = new AtomicBoolean();
  private A2aServer server;
  private RouteServer http;
  private final HttpClient client = HttpClient.newHttpClient();

  /** The one agent published, jester, who tells jokes; no other name is published. */
  static Optional<A2aServer.Published> jester(String name) {
    return name.equals("jester")
        ? Optional.of(
            new A2aServer.Published(
                "jester",
                "Tells jokes.",
                "main",
                List.of(
                    new AgentCard.Skill(
                        "joke",
                        "joke",
                        "Tells a joke",
                        List.of("humor"),
                        List.of("Tell me a joke")))))
        : Optional.empty();
  }

  private void start(int maxTasks) throws Exception {
    server =
        new A2aServer(
            new A2aConfig.Server(
                URI.create("https://agents.example.com/"), maxTasks, Duration.ofSeconds(5)),
            A2aServerTest::jester,
            (agent, context, principal, message) -> {
              if (message.contains("slow")) {
                try {
                  release.await();
                } catch (InterruptedException e) {
                  interrupted.set(true);
                  throw e;
                }
              }
              return "Why did the chicken cross the road? (" + message + ")";
            });
    http = new RouteServer(server.routes());
  }

  @AfterEach
  void stop() throws Exception {
    release.countDown();
    if (http != null) {
      http.close();
    }
    if (server != null) {
      server.close();
    }
    client.close();
  }

  private JsonNode post(String body, Optional<String> version) throws Exception {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(http.base().resolve("/a2a/jester"))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body));
    version.ifPresent(v -> request.header("A2A-Version", v));
    HttpResponse<String> response =
        client.send(request.build(), HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    return A2aWire.JSON.readTree(response.body());
  }

  private static String send03(String text, boolean blocking) {
    return """
        {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message":
         {"kind": "message", "messageId": "m1", "role": "user",
          "parts": [{"kind": "text", "text": "%s"}]},
         "configuration": {"blocking": %s}}}"""
        .formatted(text, blocking);
  }

  private static String send10(String text) {
    return """
        {"jsonrpc": "2.0", "id": "a", "method": "SendMessage", "params": {"message":
         {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "%s"}]}}}"""
        .formatted(text);
  }

  /** The version 1.0 answer to a call of the method on the task. */
  private JsonNode onTask(int id, String method, String taskId) throws Exception {
    return post(
        "{\"jsonrpc\": \"2.0\", \"id\": "
            + id
            + ", \"method\": \""
            + method
            + "\", \"params\": {\"id\": \""
            + taskId
            + "\"}}",
        Optional.of("1.0"));
  }

  /**
   * The version 0.3 answer of the server to a request from the principal, as the front passes it.
   */
  private JsonNode rpc(Principal principal, String body) throws Exception {
    Route.Answer answer =
        server.rpc(
            new Route.Request(
                "POST",
                "/a2a/jester",
                java.util.Map.of(),
                body.getBytes(java.nio.charset.StandardCharsets.UTF_8),
                java.util.Map.of(),
                principal));
    return A2aWire.JSON.readTree(answer.body());
  }

  private static Principal principal(String name) {
    return new Principal(name, Optional.of(name), Optional.of(List.of("main")), false, false);
  }

  @Test
  void aTaskAndAContextAreTheirStartersOnly() throws Exception {
    List<String> contexts = new java.util.concurrent.CopyOnWriteArrayList<>();
    server =
        new A2aServer(
            new A2aConfig.Server(
                URI.create("https://agents.example.com/"), 10, Duration.ofSeconds(5)),
            A2aServerTest::jester,
            (agent, context, principal, message) -> {
              contexts.add(context);
              return "Noted: " + message;
            });
    String inContext =
        """
        {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message":
         {"kind": "message", "messageId": "m1", "role": "user", "contextId": "ctx-1",
          "parts": [{"kind": "text", "text": "%s"}]},
         "configuration": {"blocking": true}}}""";

    JsonNode alices = rpc(principal("alice"), inContext.formatted("my plan"));
    String task = alices.get("result").get("id").asString();
    JsonNode bobReads =
        rpc(
            principal("bob"),
            "{\"jsonrpc\": \"2.0\", \"id\": 2, \"method\": \"tasks/get\", \"params\": {\"id\": \""
                + task
                + "\"}}");
    JsonNode bobCancels =
        rpc(
            principal("bob"),
            "{\"jsonrpc\": \"2.0\", \"id\": 3, \"method\": \"tasks/cancel\", \"params\": {\"id\":"
                + " \""
                + task
                + "\"}}");
    rpc(principal("bob"), inContext.formatted("what was alice's plan?"));
    JsonNode aliceReads =
        rpc(
            principal("alice"),
            "{\"jsonrpc\": \"2.0\", \"id\": 4, \"method\": \"tasks/get\", \"params\": {\"id\": \""
                + task
                + "\"}}");

    // Another's task answers as one that never was: -32001, task not found.
    assertThat(bobReads.get("error").get("code").asInt()).isEqualTo(-32001);
    assertThat(bobCancels.get("error").get("code").asInt()).isEqualTo(-32001);
    assertThat(aliceReads.get("result").get("id").asString()).isEqualTo(task);
    // Bob's message in alice's contextId starts a conversation of his own.
    assertThat(contexts).containsExactly("alice/ctx-1", "bob/ctx-1");
  }

  @Test
  void aPrincipalOutsideTheAgentsProfileIsRefusedNamingItsProfiles() throws Exception {
    AtomicBoolean ran = new AtomicBoolean();
    server =
        new A2aServer(
            new A2aConfig.Server(
                URI.create("https://agents.example.com/"), 10, Duration.ofSeconds(5)),
            name ->
                Optional.of(
                    new A2aServer.Published("jester", "Tells jokes.", "reviewer", List.of())),
            (agent, context, principal, message) -> {
              ran.set(true);
              return "A joke.";
            });
    String send =
        "{\"jsonrpc\": \"2.0\", \"id\": 7, \"method\": \"message/send\", \"params\":"
            + " {\"message\": {\"kind\": \"message\", \"messageId\": \"m1\", \"role\":"
            + " \"user\", \"parts\": [{\"kind\": \"text\", \"text\": \"Hi\"}]}}}";

    Route.Answer refused = server.rpc(request("/a2a/jester", send, principal("alice")));
    Route.Answer card =
        server.card(request("/a2a/jester/.well-known/agent-card.json", "", principal("alice")));
    Route.Answer allowed =
        server.rpc(
            request(
                "/a2a/jester",
                send,
                new Principal(
                    "carol",
                    Optional.of("carol"),
                    Optional.of(List.of("reviewer")),
                    false,
                    false)));

    assertThat(refused.status()).isEqualTo(403);
    JsonNode error = A2aWire.JSON.readTree(refused.body()).get("error");
    assertThat(error.get("code").asInt()).isEqualTo(-32000);
    assertThat(error.get("message").asString())
        .isEqualTo(
            "The principal 'alice' may not use the profile 'reviewer': its profiles are main.");
    assertThat(A2aWire.JSON.readTree(refused.body()).get("id").asInt()).isEqualTo(7);
    assertThat(card.status()).isEqualTo(403);
    assertThat(new String(card.body(), java.nio.charset.StandardCharsets.UTF_8))
        .contains("its profiles are main");
    assertThat(allowed.status()).isEqualTo(200);
    await().atMost(Duration.ofSeconds(10)).untilTrue(ran);
  }

  private static Route.Request request(String path, String body, Principal principal) {
    return new Route.Request(
        body.isEmpty() ? "GET" : "POST",
        path,
        java.util.Map.of(),
        body.getBytes(java.nio.charset.StandardCharsets.UTF_8),
        java.util.Map.of(),
        principal);
  }

  @Test
  void theCardNamesThePublicUrlAndBothVersions() throws Exception {
    start(10);
    HttpResponse<String> response =
        client.send(
            HttpRequest.newBuilder(http.base().resolve("/a2a/jester/.well-known/agent-card.json"))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    JsonNode card = A2aWire.JSON.readTree(response.body());
    assertThat(card.path("url").asString()).isEqualTo("https://agents.example.com/a2a/jester");
    assertThat(card.path("supportedInterfaces").findValuesAsString("protocolVersion"))
        .containsExactly("1.0", "0.3");
    assertThat(card.path("skills").get(0).path("examples").get(0).asString())
        .isEqualTo("Tell me a joke");
    AgentCard read =
        AgentCard.read(card, http.base().resolve("/a2a/jester/.well-known/agent-card.json"));
    assertThat(read.protocol()).isEqualTo(A2aVersion.V1_0);

    HttpResponse<String> unknown =
        client.send(
            HttpRequest.newBuilder(http.base().resolve("/a2a/nobody/.well-known/agent-card.json"))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(unknown.statusCode()).isEqualTo(404);
  }

  @Test
  void aVersion03SendAnswersACompletedKindTaggedTask() throws Exception {
    start(10);
    JsonNode answer = post(send03("tell me a joke", true), Optional.empty());
    JsonNode task = answer.path("result");
    assertThat(task.path("kind").asString()).isEqualTo("task");
    assertThat(task.path("status").path("state").asString()).isEqualTo("completed");
    assertThat(task.path("artifacts").get(0).path("parts").get(0).path("text").asString())
        .contains("chicken");
  }

  @Test
  void aVersion10SendAnswersAWrappedTaskWithTaskStateEnums() throws Exception {
    start(10);
    JsonNode answer = post(send10("tell me a joke"), Optional.of("1.0"));
    assertThat(answer.path("id").asString()).isEqualTo("a");
    JsonNode task = answer.path("result").path("task");
    assertThat(task.path("status").path("state").asString()).isEqualTo("TASK_STATE_COMPLETED");
    assertThat(task.has("kind")).isFalse();
    assertThat(task.path("status").path("message").path("role").asString()).isEqualTo("ROLE_AGENT");

    JsonNode got = onTask(2, "GetTask", task.path("id").asString());
    assertThat(got.path("result").path("status").path("state").asString())
        .isEqualTo("TASK_STATE_COMPLETED");
  }

  @Test
  void anUnknownTaskIs32001() throws Exception {
    start(10);
    JsonNode answer =
        post(
            "{\"jsonrpc\": \"2.0\", \"id\": 3, \"method\": \"GetTask\", \"params\": {\"id\": \"nope\"}}",
            Optional.of("1.0"));
    assertThat(answer.path("error").path("code").asInt()).isEqualTo(-32001);
    assertThat(answer.path("id").asInt()).isEqualTo(3);
    JsonNode v03 =
        post(
            "{\"jsonrpc\": \"2.0\", \"id\": 4, \"method\": \"tasks/get\", \"params\": {\"id\": \"nope\"}}",
            Optional.empty());
    assertThat(v03.path("error").path("code").asInt()).isEqualTo(-32001);
  }

  @Test
  void cancellingAFinishedTaskIs32002() throws Exception {
    start(10);
    String id = post(send03("joke", true), Optional.empty()).path("result").path("id").asString();
    JsonNode answer =
        post(
            "{\"jsonrpc\": \"2.0\", \"id\": 5, \"method\": \"tasks/cancel\", \"params\": {\"id\": \""
                + id
                + "\"}}",
            Optional.empty());
    assertThat(answer.path("error").path("code").asInt()).isEqualTo(-32002);
  }

  @Test
  void anUnknownMethodIs32601EvenWhenItIsTheOtherVersionsName() throws Exception {
    start(10);
    assertThat(
            post(
                    "{\"jsonrpc\": \"2.0\", \"id\": 6, \"method\": \"tasks/list\", \"params\": {}}",
                    Optional.empty())
                .path("error")
                .path("code")
                .asInt())
        .isEqualTo(-32601);
    assertThat(post(send03("joke", true), Optional.of("1.0")).path("error").path("code").asInt())
        .isEqualTo(-32601);
  }

  @Test
  void anUnsupportedVersionIs32009() throws Exception {
    start(10);
    JsonNode answer = post(send10("joke"), Optional.of("0.5"));
    assertThat(answer.path("error").path("code").asInt()).isEqualTo(-32009);
    assertThat(answer.path("error").path("message").asString()).contains("0.5");
  }

  @Test
  void bodiesThatAreNotJsonRpcGetTheirCodes() throws Exception {
    start(10);
    assertThat(post("{not json", Optional.empty()).path("error").path("code").asInt())
        .isEqualTo(-32700);
    assertThat(post("{\"id\": 1}", Optional.empty()).path("error").path("code").asInt())
        .isEqualTo(-32600);
  }

  @Test
  void cancelReachesTheRunningAgent() throws Exception {
    start(10);
    JsonNode task = post(send03("slow one", false), Optional.empty()).path("result");
    assertThat(task.path("status").path("state").asString()).isIn("submitted", "working");
    JsonNode cancelled = onTask(7, "CancelTask", task.path("id").asString());
    assertThat(cancelled.path("result").path("status").path("state").asString())
        .isEqualTo("TASK_STATE_CANCELED");
    await().atMost(Duration.ofSeconds(5)).untilTrue(interrupted);
  }

  @Test
  void aStreamSendsTheTaskThenEndsOnAFinalStatus() throws Exception {
    start(10);
    HttpResponse<String> response =
        client.send(
            HttpRequest.newBuilder(http.base().resolve("/a2a/jester"))
                .header("Content-Type", "application/json")
                .header("A2A-Version", "1.0")
                .POST(
                    HttpRequest.BodyPublishers.ofString(
                        send10("joke").replace("SendMessage", "SendStreamingMessage")))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(response.headers().firstValue("Content-Type").orElse(""))
        .startsWith("text/event-stream");
    List<JsonNode> events =
        response
            .body()
            .lines()
            .filter(line -> line.startsWith("data: "))
            .map(line -> A2aWire.JSON.readTree(line.substring(6)).path("result"))
            .toList();
    assertThat(events.get(0).has("task")).isTrue();
    assertThat(events.get(events.size() - 2).has("artifactUpdate")).isTrue();
    JsonNode last = events.get(events.size() - 1).path("statusUpdate");
    assertThat(last.path("status").path("state").asString()).isEqualTo("TASK_STATE_COMPLETED");
    assertThat(last.path("final").asBoolean()).isTrue();
  }

  @Test
  void theTaskStoreKeepsAtMostItsSizeDroppingTheOldestFinished() throws Exception {
    start(2);
    String first = post(send03("one", true), Optional.empty()).path("result").path("id").asString();
    post(send03("two", true), Optional.empty());
    post(send03("three", true), Optional.empty());
    assertThat(server.taskCount()).isEqualTo(2);
    JsonNode gone =
        post(
            "{\"jsonrpc\": \"2.0\", \"id\": 8, \"method\": \"tasks/get\", \"params\": {\"id\": \""
                + first
                + "\"}}",
            Optional.empty());
    assertThat(gone.path("error").path("code").asInt()).isEqualTo(-32001);
  }

  @Test
  void aStoreFullOfRunningTasksRefusesANewOneAndCancelsNoneOfThem() throws Exception {
    start(2);
    post(send03("slow one", false), Optional.empty());
    post(send03("slow two", false), Optional.empty());

    JsonNode refused = post(send03("three", true), Optional.empty());

    assertThat(refused.path("error").path("code").asInt()).isEqualTo(-32603);
    assertThat(refused.path("error").path("message").asString()).contains("most tasks at once (2)");
    assertThat(server.taskCount()).isEqualTo(2);
    assertThat(interrupted).isFalse();
  }

  @Test
  void aContextIdThatCouldNotNameASessionIsRefused() throws Exception {
    start(10);
    JsonNode answer =
        post(
            send10("joke")
                .replace(
                    "\"messageId\": \"m1\",", "\"messageId\": \"m1\", \"contextId\": \"../x\","),
            Optional.of("1.0"));
    assertThat(answer.path("error").path("code").asInt()).isEqualTo(-32602);
    assertThat(answer.path("error").path("message").asString()).contains("contextId");
  }
}
