package dev.toolhost.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import dev.toolhost.host.HostConfig;
import dev.toolhost.mcp.McpBridge;
import dev.toolhost.mcp.McpServerConfig;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The gateway's DNS-rebinding checks and bearer token, over raw HTTP and through the bridge. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class McpGatewaySecurityTest {

  private static final String INITIALIZE =
      "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"initialize\", \"params\":"
          + " {\"protocolVersion\": \"2025-06-18\", \"capabilities\": {}, \"clientInfo\":"
          + " {\"name\": \"raw\", \"version\": \"1\"}}}";

  private Host host;

  @AfterEach
  void closeHost() {
    if (host != null) {
      host.close();
    }
  }

  private int start(Optional<String> token) {
    HostConfig.Http http = HostConfig.Http.defaults().withPort(0);
    host =
        Host.builder(HostConfig.defaults().withHttp(token.map(http::withToken).orElse(http)))
            .environment(Map.of())
            .build();
    host.start();
    return host.port();
  }

  /** The status line and headers of a POST of the initialize request, with the given headers. */
  private static String post(int port, String hostHeader, String... headers) throws IOException {
    StringBuilder request =
        new StringBuilder("POST /mcp HTTP/1.1\r\n")
            .append("Host: ")
            .append(hostHeader)
            .append("\r\n")
            .append("Content-Type: application/json\r\n")
            .append("Accept: application/json, text/event-stream\r\n")
            .append("Connection: close\r\n");
    for (String header : headers) {
      request.append(header).append("\r\n");
    }
    byte[] body = INITIALIZE.getBytes(StandardCharsets.UTF_8);
    request.append("Content-Length: ").append(body.length).append("\r\n\r\n");
    try (Socket socket = new Socket("127.0.0.1", port)) {
      socket.setSoTimeout(10_000);
      OutputStream out = socket.getOutputStream();
      out.write(request.toString().getBytes(StandardCharsets.US_ASCII));
      out.write(body);
      out.flush();
      InputStream in = socket.getInputStream();
      String response = new String(in.readAllBytes(), StandardCharsets.UTF_8);
      return response;
    }
  }

  private static int status(String response) {
    return Integer.parseInt(response.substring(9, 12));
  }

  @Test
  void aLoopbackHostAndOriginAreServed() throws Exception {
    int port = start(Optional.empty());

    String response = post(port, "127.0.0.1:" + port, "Origin: http://localhost:" + port);

    assertThat(status(response)).as(response).isEqualTo(200);
    assertThat(response).contains("\"protocolVersion\"");
  }

  @Test
  void aForeignHostHeaderIsRefused() throws Exception {
    int port = start(Optional.empty());

    String response = post(port, "attacker.example:" + port);

    // The SDK's answer to a request meant for another host: 421 Misdirected Request.
    assertThat(status(response)).as(response).isEqualTo(421);
    assertThat(response).doesNotContain("\"protocolVersion\"");
  }

  @Test
  void aForeignOriginIsRefused() throws Exception {
    int port = start(Optional.empty());

    String response = post(port, "127.0.0.1:" + port, "Origin: http://attacker.example:" + port);

    assertThat(status(response)).as(response).isEqualTo(403);
    assertThat(response).doesNotContain("\"protocolVersion\"");
  }

  @Test
  void withATokenARequestWithoutItIsUnauthorizedAndOneWithTheWrongOneToo() throws Exception {
    int port = start(Optional.of("s3cret-token"));

    String without = post(port, "127.0.0.1:" + port);
    String wrong = post(port, "127.0.0.1:" + port, "Authorization: Bearer not-the-token");

    assertThat(status(without)).as(without).isEqualTo(401);
    assertThat(without).containsIgnoringCase("WWW-Authenticate: Bearer").contains("bearer token");
    assertThat(status(wrong)).as(wrong).isEqualTo(401);
    assertThat(status(post(port, "127.0.0.1:" + port, "Authorization: Bearer s3cret-token")))
        .isEqualTo(200);
  }

  @Test
  void withATokenAnMcpClientSendingItListsAndCallsTools() {
    int port = start(Optional.of("s3cret-token"));
    ToolRegistry registry = new ToolRegistry();
    try (McpBridge bridge =
        McpBridge.builder(registry).startTimeout(Duration.ofSeconds(20)).build()) {
      bridge.start(
          List.of(
              new McpServerConfig(
                  "gateway",
                  new McpServerConfig.StreamableHttp(
                      URI.create("http://127.0.0.1:" + port + "/mcp"),
                      Map.of("Authorization", "Bearer s3cret-token")),
                  Optional.empty(),
                  McpServerConfig.DEFAULT_TIMEOUT)));

      assertThat(bridge.server("gateway").orElseThrow().state()).isEqualTo("connected");
      ToolResult listed =
          ToolDispatcher.create()
              .dispatch(
                  ToolSet.of(registry, ToolProfiles.MAIN),
                  ToolCall.of("gateway_list_tool_guides", "{}"));
      assertThat(listed.isError()).as(listed.text()).isFalse();
      assertThat(listed.text()).contains("tool-calls");
    }
  }
}
