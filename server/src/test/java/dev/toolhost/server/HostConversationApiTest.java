package dev.toolhost.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.host.HostConfig;
import dev.toolhost.testing.ScriptedModelServer;
import dev.toolhost.testing.ScriptedReply;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The conversation API on a real host: {@code POST /v1/agents/{name}/turns} in JSON and in
 * server-sent events, with the channel tools, sessions that continue, bad input named, and the
 * request guard in front.
 */
@Timeout(60)
class HostConversationApiTest {

  private static final String TOKEN = "conversation-test-token";

  private final ScriptedModelServer server = ScriptedModelServer.start();
  private final HttpClient http = HttpClient.newHttpClient();

  @AfterEach
  void close() {
    http.close();
    server.close();
  }

  private Host host() {
    HostConfig config =
        HostConfig.parse(
                ScriptedModelServer.agentSection(
                    server.baseUrl(), "helper", "helper-model", "instructions: Be brief."),
                "toolhost.yaml")
            .withHttp(HostConfig.Http.defaults().withPort(0).withToken(TOKEN));
    return new Host(config);
  }

  private HttpResponse<String> post(URI uri, String body, String... headers) throws Exception {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(uri)
            .header("Content-Type", "application/json")
            .header("Authorization", "Bearer " + TOKEN)
            .POST(HttpRequest.BodyPublishers.ofString(body));
    for (int i = 0; i < headers.length; i += 2) {
      request.header(headers[i], headers[i + 1]);
    }
    return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  private static JsonNode json(HttpResponse<String> response) {
    return JsonMapper.shared().readTree(response.body());
  }

  @Test
  void aTurnAnswersJsonAndTheSessionContinuesTheConversation() throws Exception {
    server.enqueue(
        ScriptedReply.toolCalls(
            ScriptedReply.call("call_1", "reply", "{\"content\":\"Looking it up.\"}"),
            ScriptedReply.call("call_2", "react", "{\"emoji\":\"👀\"}")));
    server.enqueue(ScriptedReply.answer("It is 42."));
    server.enqueue(ScriptedReply.answer("You asked about the answer."));
    try (Host host = host()) {
      URI turns = host.start().resolve("v1/agents/helper/turns");

      HttpResponse<String> first = post(turns, "{\"message\": \"What is the answer?\"}");
      JsonNode answer = json(first);
      String session = answer.get("session_id").asString();
      HttpResponse<String> second =
          post(turns, "{\"message\": \"What did I ask?\", \"session_id\": \"" + session + "\"}");

      assertThat(first.statusCode()).as(first.body()).isEqualTo(200);
      assertThat(first.headers().firstValue("Content-Type")).hasValue("application/json");
      assertThat(answer.get("agent").asString()).isEqualTo("helper");
      assertThat(answer.get("messages").valueStream().map(JsonNode::asString))
          .containsExactly("Looking it up.", "It is 42.");
      assertThat(answer.get("reactions").valueStream().map(JsonNode::asString))
          .containsExactly("👀");
      assertThat(answer.get("skipped").asBoolean()).isFalse();
      assertThat(answer.get("stop").asString()).isEqualTo("completed");
      assertThat(answer.get("tool_calls").valueStream().map(call -> call.get("name").asString()))
          .containsExactlyInAnyOrder("reply", "react");
      assertThat(answer.get("tool_calls").valueStream().map(call -> call.get("ok").asBoolean()))
          .containsOnly(true);
      assertThat(second.statusCode()).as(second.body()).isEqualTo(200);
      assertThat(json(second).get("session_id").asString()).isEqualTo(session);
      assertThat(json(second).get("messages").get(0).asString())
          .isEqualTo("You asked about the answer.");
      server.takeRequest();
      server.takeRequest();
      JsonNode continued = server.takeRequest().json().get("messages");
      // The second turn's request carries the first turn: its question, calls and answer.
      assertThat(continued.valueStream().map(message -> message.get("role").asString()))
          .containsExactly("system", "user", "assistant", "tool", "tool", "assistant", "user");
      assertThat(continued.get(1).get("content").asString()).isEqualTo("What is the answer?");
    }
  }

  @Test
  void aTurnStreamsItsTextAndToolEventsWhenTheClientAsksForEvents() throws Exception {
    // The model answers its second request only once the client has seen the reaction event: a
    // host that held the events back until the turn ended would make it wait in vain.
    CountDownLatch reactionSeen = new CountDownLatch(1);
    AtomicBoolean sawItFirst = new AtomicBoolean();
    server.respondWith(
        request -> {
          if (request.lastRole().equals("user")) {
            return ScriptedReply.toolCalls(
                ScriptedReply.call("call_1", "react", "{\"emoji\":\"👍\"}"));
          }
          try {
            sawItFirst.set(reactionSeen.await(10, TimeUnit.SECONDS));
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          return ScriptedReply.answer("Streaming this answer.");
        });
    try (Host host = host()) {
      URI turns = host.start().resolve("v1/agents/helper/turns");

      HttpResponse<Stream<String>> streamed =
          http.send(
              HttpRequest.newBuilder(turns)
                  .header("Content-Type", "application/json")
                  .header("Authorization", "Bearer " + TOKEN)
                  .header("Accept", "text/event-stream")
                  .POST(HttpRequest.BodyPublishers.ofString("{\"message\": \"Stream please\"}"))
                  .build(),
              HttpResponse.BodyHandlers.ofLines());
      StringBuilder body = new StringBuilder();
      try (Stream<String> lines = streamed.body()) {
        lines.forEach(
            line -> {
              if (line.equals("event: reaction")) {
                reactionSeen.countDown();
              }
              body.append(line).append('\n');
            });
      }
      List<Event> events = events(body.toString());
      String session = events.getFirst().data().get("session_id").asString();
      server.enqueue(
          ScriptedReply.toolCalls(
              ScriptedReply.call("call_2", "skip", "{\"reason\":\"nothing to add\"}")));
      HttpResponse<String> skipped =
          post(
              turns,
              "{\"message\": \"Thanks\", \"session_id\": \"" + session + "\"}",
              "Accept",
              "text/event-stream");

      assertThat(streamed.statusCode()).isEqualTo(200);
      assertThat(streamed.headers().firstValue("Content-Type").orElseThrow())
          .startsWith("text/event-stream");
      assertThat(sawItFirst).as("the reaction reached the client while the turn went on").isTrue();
      assertThat(events.stream().map(Event::name).distinct())
          .containsExactly("session", "tool_call", "reaction", "tool_result", "text", "turn");
      assertThat(events.getFirst().data().get("agent").asString()).isEqualTo("helper");
      assertThat(
              events.stream()
                  .filter(event -> event.name().equals("text"))
                  .map(event -> event.data().get("delta").asString())
                  .reduce("", String::concat))
          .isEqualTo("Streaming this answer.");
      JsonNode turn = events.getLast().data();
      assertThat(turn.get("messages").get(0).asString()).isEqualTo("Streaming this answer.");
      assertThat(turn.get("reactions").get(0).asString()).isEqualTo("👍");
      List<Event> second = events(skipped.body());
      assertThat(second.stream().map(Event::name))
          .containsExactly("session", "tool_call", "skip", "tool_result", "turn");
      assertThat(second.get(2).data().get("reason").asString()).isEqualTo("nothing to add");
      assertThat(second.getLast().data().get("skipped").asBoolean()).isTrue();
      assertThat(second.getLast().data().get("messages")).isEmpty();
      assertThat(second.getLast().data().get("stop").asString()).isEqualTo("skipped");
      assertThat(server.requestCount()).as("the skip ended the turn").isEqualTo(3);
    }
  }

  private record Event(String name, JsonNode data) {}

  private static List<Event> events(String body) {
    List<Event> events = new ArrayList<>();
    for (String block : body.split("\n\n")) {
      if (block.isBlank()) {
        continue;
      }
      String name = "";
      String data = "";
      for (String line : block.split("\n")) {
        if (line.startsWith("event: ")) {
          name = line.substring("event: ".length());
        } else if (line.startsWith("data: ")) {
          data = line.substring("data: ".length());
        }
      }
      events.add(new Event(name, JsonMapper.shared().readTree(data)));
    }
    return events;
  }

  @Test
  void badInputIsRefusedNamingWhatWasWrong() throws Exception {
    try (Host host = host()) {
      URI base = host.start();
      URI turns = base.resolve("v1/agents/helper/turns");

      record Case(HttpResponse<String> response, int status, String says) {}
      List<Case> cases =
          List.of(
              new Case(post(turns, "{}"), 400, "'message' is required"),
              new Case(post(turns, "{\"message\": 3}"), 400, "'message' is required"),
              new Case(post(turns, "[1]"), 400, "must be a JSON object"),
              new Case(post(turns, "{\"message\""), 400, "The body is not JSON"),
              new Case(
                  post(turns, "{\"message\": \"Hi\", \"sesion_id\": \"x\"}"),
                  400,
                  "Unknown field(s) sesion_id"),
              new Case(
                  post(turns, "{\"message\": \"Hi\", \"session_id\": \"no such\"}"),
                  400,
                  "'session_id' must be"),
              new Case(
                  post(turns, "{\"message\": \"Hi\", \"session_id\": \"nosuch\"}"),
                  404,
                  "There is no session 'nosuch' with agent 'helper'"),
              new Case(
                  post(base.resolve("v1/agents/nobody/turns"), "{\"message\": \"Hi\"}"),
                  404,
                  "There is no agent 'nobody'. Agents: helper."));

      for (Case each : cases) {
        assertThat(each.response().statusCode())
            .as(each.response().body())
            .isEqualTo(each.status());
        assertThat(json(each.response()).at("/error/message").asString()).contains(each.says());
        // The codes of docs/http-api.md: a bad body is invalid_request (once bad_request), as on
        // every route.
        assertThat(json(each.response()).at("/error/code").asString())
            .isEqualTo(each.status() == 400 ? "invalid_request" : "not_found");
      }
      assertThat(server.requestCount()).as("no bad turn reached the model").isZero();
    }
  }

  @Test
  void aSessionRunsOneTurnAtATimeAndAModelFailureIsAnsweredAsSuch() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch slowStarted = new CountDownLatch(1);
    server.respondWith(
        request -> {
          slowStarted.countDown();
          try {
            release.await(20, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          return ScriptedReply.answer("Done at last.");
        });
    try (Host host = host()) {
      URI turns = host.start().resolve("v1/agents/helper/turns");
      server.enqueue(ScriptedReply.answer("Hello."));
      String session = json(post(turns, "{\"message\": \"Hi\"}")).get("session_id").asString();
      String next = "{\"message\": \"Slow one\", \"session_id\": \"" + session + "\"}";

      CompletableFuture<HttpResponse<String>> slow =
          CompletableFuture.supplyAsync(
              () -> {
                try {
                  return post(turns, next);
                } catch (Exception e) {
                  throw new IllegalStateException(e);
                }
              });
      assertThat(slowStarted.await(10, TimeUnit.SECONDS)).isTrue();
      HttpResponse<String> busy = post(turns, next);
      release.countDown();

      assertThat(busy.statusCode()).as(busy.body()).isEqualTo(409);
      assertThat(json(busy).at("/error/code").asString()).isEqualTo("conflict");
      assertThat(json(busy).at("/error/message").asString())
          .isEqualTo(
              "Session '" + session + "' is running a turn; send the next when it has answered.");
      assertThat(json(slow.get(20, TimeUnit.SECONDS)).get("messages").get(0).asString())
          .isEqualTo("Done at last.");

      server.enqueue(ScriptedReply.status(404, "{\"error\":{\"message\":\"no such model\"}}"));
      HttpResponse<String> failed = post(turns, next);
      server.enqueue(ScriptedReply.status(404, "{\"error\":{\"message\":\"no such model\"}}"));
      List<Event> failedEvents = events(post(turns, next, "Accept", "text/event-stream").body());

      assertThat(failed.statusCode()).isEqualTo(502);
      assertThat(json(failed).at("/error/code").asString()).isEqualTo("model_error");
      assertThat(json(failed).at("/error/message").asString()).contains("helper-model");
      assertThat(failedEvents.stream().map(Event::name)).containsExactly("session", "error");
      assertThat(failedEvents.getLast().data().get("code").asString()).isEqualTo("model_error");
    }
  }

  @Test
  void theRequestGuardStandsInFront() throws Exception {
    try (Host host = host()) {
      URI turns = host.start().resolve("v1/agents/helper/turns");

      HttpResponse<String> noToken =
          http.send(
              HttpRequest.newBuilder(turns)
                  .header("Content-Type", "application/json")
                  .POST(HttpRequest.BodyPublishers.ofString("{\"message\": \"Hi\"}"))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      HttpResponse<String> notJson =
          http.send(
              HttpRequest.newBuilder(turns)
                  .header("Authorization", "Bearer " + TOKEN)
                  .header("Content-Type", "text/plain")
                  .POST(HttpRequest.BodyPublishers.ofString("Hi"))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      HttpResponse<String> get =
          http.send(
              HttpRequest.newBuilder(turns).header("Authorization", "Bearer " + TOKEN).build(),
              HttpResponse.BodyHandlers.ofString());

      assertThat(Stream.of(noToken, notJson, get).map(HttpResponse::statusCode))
          .containsExactly(401, 415, 405);
      assertThat(server.requestCount()).isZero();
    }
  }
}
