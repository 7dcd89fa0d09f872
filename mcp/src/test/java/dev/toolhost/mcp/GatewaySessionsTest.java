package dev.toolhost.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolSet;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The HTTP gateway's sessions, on the SDK's real Streamable HTTP transport in Jetty. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class GatewaySessionsTest {

  private static final String INITIALIZE =
      "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"initialize\", \"params\":"
          + " {\"protocolVersion\": \"2025-06-18\", \"capabilities\": {},"
          + " \"clientInfo\": {\"name\": \"test\", \"version\": \"1\"}}}";
  private static final String LIST =
      "{\"jsonrpc\": \"2.0\", \"id\": 2, \"method\": \"tools/list\", \"params\": {}}";

  private final ToolRegistry registry = new ToolRegistry();
  private final HttpClient client = HttpClient.newHttpClient();
  private McpGateway gateway;
  private ServedGateway http;
  private URI endpoint;

  private void serve(McpGateway.Sessions sessions) throws Exception {
    gateway =
        McpGateway.http(
            registry,
            ToolSet.of(registry, ToolProfiles.MAIN),
            ToolDispatcher.create(),
            "/mcp",
            List.of("127.0.0.1:*"),
            List.of("http://127.0.0.1:*"),
            sessions);
    http = ServedGateway.serve(gateway);
    endpoint = http.endpoint();
  }

  @AfterEach
  void stop() throws Exception {
    if (http != null) {
      http.close();
    }
    if (gateway != null) {
      gateway.close();
    }
    client.close();
  }

  private HttpResponse<String> post(String body, String session) throws Exception {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(endpoint)
            .timeout(Duration.ofSeconds(10))
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .POST(HttpRequest.BodyPublishers.ofString(body));
    if (session != null) {
      request.header("Mcp-Session-Id", session).header("Mcp-Protocol-Version", "2025-06-18");
    }
    return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  private String open() throws Exception {
    HttpResponse<String> response = post(INITIALIZE, null);
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    String session = response.headers().firstValue("Mcp-Session-Id").orElseThrow();
    post("{\"jsonrpc\": \"2.0\", \"method\": \"notifications/initialized\"}", session);
    return session;
  }

  private int statusOf(String session) throws Exception {
    return post(LIST, session).statusCode();
  }

  @Test
  void pastTheBoundTheLeastRecentlyUsedSessionIsClosed() throws Exception {
    serve(new McpGateway.Sessions(Duration.ofMinutes(30), 3));
    List<String> sessions = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      sessions.add(open());
    }
    // The first is used again, so the second is now the least recently used.
    assertThat(statusOf(sessions.get(0))).isEqualTo(200);

    sessions.add(open());
    sessions.add(open());

    assertThat(statusOf(sessions.get(1))).isEqualTo(404);
    assertThat(statusOf(sessions.get(2))).isEqualTo(404);
    assertThat(statusOf(sessions.get(0))).isEqualTo(200);
    assertThat(statusOf(sessions.get(3))).isEqualTo(200);
    assertThat(statusOf(sessions.get(4))).isEqualTo(200);
    assertThat(((GatewaySessions) gateway.servlet().orElseThrow()).held()).isEqualTo(3);
  }

  @Test
  void aSessionIdleForTheIdleTimeoutIsClosed() throws Exception {
    serve(new McpGateway.Sessions(Duration.ofMillis(600), 100));
    String idle = open();
    String busy = open();

    // No request on the idle session; the busy one asks every 100 ms, and each request lets the
    // gateway sweep: wait until a sweep has closed a session.
    GatewaySessions sessions = (GatewaySessions) gateway.servlet().orElseThrow();
    long until = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (sessions.held() > 1) {
      assertThat(System.nanoTime()).as("a session closed within 10 s").isLessThan(until);
      assertThat(statusOf(busy)).isEqualTo(200);
      Thread.sleep(100);
    }

    assertThat(statusOf(idle)).isEqualTo(404);
    assertThat(statusOf(busy)).isEqualTo(200);
    assertThat(((GatewaySessions) gateway.servlet().orElseThrow()).held()).isEqualTo(1);
  }
}
