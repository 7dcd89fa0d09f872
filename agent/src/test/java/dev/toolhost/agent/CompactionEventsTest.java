package dev.toolhost.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.toolhost.core.MethodTools;
import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.core.spi.Route;
import dev.toolhost.memory.WorkingMemoryExtension;
import dev.toolhost.testing.ScriptedModelServer;
import dev.toolhost.testing.StartingExtension;
import dev.toolhost.testing.TestHost;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A compaction is visible in the conversation: a conversation of 20 KB tool results against a 16k
 * window, on a host that keeps its conversations in memory, tells each compaction as a {@code
 * compaction} event on the turn's own stream and on the conversation's live stream, and its
 * transcript lists them.
 */
@Timeout(60)
class CompactionEventsTest {

  private static final JsonMapper MAPPER = JsonMapper.shared();

  private final ScriptedModelServer model = ScriptedModelServer.start();

  @AfterEach
  void close() {
    model.close();
  }

  /** A client of an event stream: what was written to it. */
  private static final class Client extends OutputStream {
    private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();

    @Override
    public synchronized void write(int b) {
      bytes.write(b);
    }

    @Override
    public synchronized void write(byte[] b, int off, int len) {
      bytes.write(b, off, len);
    }

    synchronized String text() {
      return bytes.toString(StandardCharsets.UTF_8);
    }
  }

  private static Route.Answer request(
      TestHost host, String method, String path, String body, Map<String, List<String>> headers)
      throws Exception {
    return host.runtime()
        .route(method, path)
        .orElseThrow()
        .handler()
        .answer(
            new Route.Request(
                method, path, Map.of(), body.getBytes(StandardCharsets.UTF_8), headers));
  }

  @Test
  void eachCompactionIsAnEventOnTheTurnsStreamAndTheLiveStreamAndInTheTranscript()
      throws Exception {
    model.respondWith(ContextTest::script);
    List<HostExtension<?>> extensions =
        List.of(
            new WorkingMemoryExtension(),
            new AgentsExtension(),
            new StartingExtension(
                "reports",
                host ->
                    host.registry()
                        .registerAll(MethodTools.of(new ContextTest.Reports(), "test:reports"))));
    try (TestHost host =
        TestHost.start(
            ScriptedModelServer.agentSection(
                model.baseUrl(), "keeper", "gpt-4o-mini", "context_window: 16384"),
            extensions)) {
      String turns = "/v1/agents/keeper/turns";
      Route.Answer first =
          request(host, "POST", turns, "{\"message\": \"Fetch the report of day 1.\"}", Map.of());
      String session =
          MAPPER
              .readTree(new String(first.body(), StandardCharsets.UTF_8))
              .path("session_id")
              .asString();
      Client follower = new Client();
      Route.Answer live =
          request(host, "GET", "/v1/agents/keeper/sessions/" + session + "/events", "", Map.of());
      Thread following =
          Thread.ofVirtual()
              .start(
                  () -> {
                    try {
                      live.stream().orElseThrow().write(follower);
                    } catch (Exception e) {
                      throw new IllegalStateException(e);
                    }
                  });
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> follower.text().contains("event: session"));

      Client own = new Client();
      for (int day = 2; day <= 4 && !own.text().contains("event: compaction"); day++) {
        Route.Answer streamed =
            request(
                host,
                "POST",
                turns,
                "{\"message\": \"Fetch the report of day "
                    + day
                    + ".\", \"session_id\": \""
                    + session
                    + "\"}",
                Map.of("Accept", List.of("text/event-stream")));
        streamed.stream().orElseThrow().write(own);
      }

      assertThat(own.text()).contains("event: compaction\ndata: {\"reason\":\"budget\"");
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> follower.text().contains("event: compaction"));
      JsonNode transcript =
          MAPPER.readTree(
              new String(
                  request(host, "GET", "/v1/agents/keeper/sessions/" + session, "", Map.of())
                      .body(),
                  StandardCharsets.UTF_8));
      assertThat(transcript.path("compactions")).isNotEmpty();
      assertThat(transcript.path("compactions").path(0).path("window").asInt()).isEqualTo(16_384);
      host.close();
      following.join(Duration.ofSeconds(10));
      assertThat(following.isAlive()).isFalse();
    }
  }
}
