package dev.toolhost.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.core.MethodTools;
import dev.toolhost.core.Tool;
import dev.toolhost.host.HostConfig;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Requests shaped as a browser page would send them, against every route of a real host: a page the
 * user has open is an attacker of this local server. Sent over raw sockets, so that {@code Host},
 * {@code Origin} and malformed bodies are exactly what a browser or an attacker sends.
 */
@Timeout(60)
class RequestGuardTest {

  private static final JsonMapper JSON = JsonMapper.builder().build();
  private static final String INITIALIZE =
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
          + "\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}";

  /** Every route of the host, as method and path. */
  private static final List<String[]> ROUTES =
      List.of(
          new String[] {"GET", "/healthz"},
          new String[] {"GET", "/metrics"},
          new String[] {"GET", "/v1/tools"},
          new String[] {"GET", "/v1/profiles"},
          new String[] {"GET", "/v1/services/search?q=anything"},
          new String[] {"POST", "/v1/tools/side_effect/invoke"},
          new String[] {"POST", "/mcp"},
          new String[] {"POST", "/mcp/subagent"},
          new String[] {"GET", "/mcp"},
          new String[] {"GET", "/no/such/route"});

  /** A tool with a side effect an attacker wants: here, a counter. */
  public static final class SideEffect {
    final AtomicInteger runs = new AtomicInteger();

    @Tool(
        name = "side_effect",
        description = "Does something that must not happen on a web page's say-so.")
    public String sideEffect() {
      return "ran " + runs.incrementAndGet();
    }
  }

  private final SideEffect sideEffect = new SideEffect();
  private Host host;

  @AfterEach
  void closeHost() {
    if (host != null) {
      host.close();
    }
  }

  private int start(HostConfig.Http http) {
    host = Host.builder(HostConfig.defaults().withHttp(http)).environment(Map.of()).build();
    host.registry().registerAll(MethodTools.of(sideEffect, "builtin:test"));
    host.start();
    return host.port();
  }

  private int start() {
    return start(HostConfig.Http.defaults().withPort(0));
  }

  @Test
  void aWebPagesTextPlainPostCannotRunATool() throws Exception {
    int port = start();
    String body = "{\"arguments\":{}}";

    Answer crossSite =
        send(
            port,
            "POST",
            "/v1/tools/side_effect/invoke",
            "127.0.0.1:" + port,
            List.of("Origin: http://evil.example", "Content-Type: text/plain"),
            body);
    Answer sameSiteTextPlain =
        send(
            port,
            "POST",
            "/v1/tools/side_effect/invoke",
            "127.0.0.1:" + port,
            List.of("Content-Type: text/plain"),
            body);
    Answer rebound =
        send(
            port,
            "POST",
            "/v1/tools/side_effect/invoke",
            "evil.example:" + port,
            List.of("Content-Type: application/json"),
            body);

    assertThat(crossSite.status()).isEqualTo(403);
    assertThat(crossSite.errorCode()).isEqualTo("origin_not_allowed");
    assertThat(sameSiteTextPlain.status()).isEqualTo(415);
    assertThat(sameSiteTextPlain.errorCode()).isEqualTo("unsupported_media_type");
    assertThat(sameSiteTextPlain.errorMessage()).contains("Content-Type: application/json");
    assertThat(rebound.status()).isEqualTo(421);
    assertThat(sideEffect.runs).hasValue(0);

    Answer json =
        send(
            port,
            "POST",
            "/v1/tools/side_effect/invoke",
            "127.0.0.1:" + port,
            List.of("Content-Type: application/json; charset=utf-8"),
            body);
    assertThat(json.status()).as(json.text()).isEqualTo(200);
    assertThat(sideEffect.runs).as(json.text()).hasValue(1);
  }

  @Test
  void everyRouteRefusesAForeignOriginAndAForeignHost() throws Exception {
    int port = start();

    for (String[] route : ROUTES) {
      String what = route[0] + " " + route[1];
      List<String> json = route[0].equals("POST") ? List.of("Content-Type: text/plain") : List.of();
      String body = route[0].equals("POST") ? INITIALIZE : "";

      Answer foreignOrigin =
          send(port, route[0], route[1], "127.0.0.1:" + port, with(json, "Origin: null"), body);
      Answer otherPortOrigin =
          send(
              port,
              route[0],
              route[1],
              "localhost:" + port,
              with(json, "Origin: http://localhost:3000"),
              body);
      Answer foreignHost = send(port, route[0], route[1], "attacker.example:" + port, json, body);

      assertThat(foreignOrigin.status()).as(what).isEqualTo(403);
      assertThat(foreignOrigin.errorCode()).as(what).isEqualTo("origin_not_allowed");
      assertThat(otherPortOrigin.status()).as(what).isEqualTo(403);
      assertThat(foreignHost.status()).as(what).isEqualTo(421);
      assertThat(foreignHost.errorCode()).as(what).isEqualTo("host_not_allowed");
    }
  }

  @Test
  void everyRouteRefusesABodyThatIsNotJson() throws Exception {
    int port = start();

    for (String[] route : ROUTES) {
      for (String type : List.of("text/plain", "application/x-www-form-urlencoded", "")) {
        List<String> headers = type.isEmpty() ? List.of() : List.of("Content-Type: " + type);
        Answer answer = send(port, route[0], route[1], "127.0.0.1:" + port, headers, INITIALIZE);

        assertThat(answer.status()).as(route[0] + " " + route[1] + " " + type).isEqualTo(415);
      }
    }
    assertThat(sideEffect.runs).hasValue(0);
  }

  @Test
  void theHostsOwnOriginAndConfiguredOnesAreServed() throws Exception {
    int port =
        start(
            HostConfig.Http.defaults()
                .withPort(0)
                .withAllowedHosts(List.of("toolhost.internal"))
                .withAllowedOrigins(List.of("http://localhost:3000")));

    for (String origin : List.of("http://127.0.0.1:" + port, "http://localhost:3000")) {
      Answer answer =
          send(port, "GET", "/v1/profiles", "localhost:" + port, List.of("Origin: " + origin), "");
      assertThat(answer.status()).as(origin).isEqualTo(200);
    }
    assertThat(send(port, "GET", "/v1/profiles", "toolhost.internal", List.of(), "").status())
        .isEqualTo(200);
    assertThat(send(port, "GET", "/v1/profiles", "[::1]:" + port, List.of(), "").status())
        .isEqualTo(200);
  }

  @Test
  void aBodyOverTheLimitIsRefusedOnEveryRouteWhetherDeclaredOrStreamed() throws Exception {
    int port = start();
    String tooLong = "Content-Length: " + (RequestGuard.MAX_BODY_BYTES + 1);

    for (String path : List.of("/mcp", "/mcp/subagent", "/v1/tools/side_effect/invoke")) {
      Answer declared =
          sendRaw(
              port,
              "POST "
                  + path
                  + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                  + "Accept: application/json, text/event-stream\r\n"
                  + tooLong
                  + "\r\nConnection: close\r\n\r\n");
      assertThat(declared.status()).as(path).isEqualTo(413);
      assertThat(declared.errorCode()).as(path).isEqualTo("payload_too_large");
    }
    Answer streamed =
        chunked(port, "/v1/tools/side_effect/invoke", RequestGuard.MAX_BODY_BYTES + 1);
    assertThat(streamed.status()).isEqualTo(413);
    assertThat(streamed.errorCode()).isEqualTo("payload_too_large");
    assertThat(sideEffect.runs).hasValue(0);
  }

  @Test
  void mcpErrorsAreOneJsonObjectWithNoStackAndNoEcho() throws Exception {
    int port = start();
    String marker = "ECHO-MARKER-" + "x".repeat(2000);
    String local = "127.0.0.1:" + port;
    String accept = "Accept: application/json, text/event-stream";
    String json = "Content-Type: application/json";

    List<Answer> answers =
        List.of(
            send(port, "DELETE", "/mcp", local, List.of(), ""),
            send(port, "POST", "/mcp", local, List.of(json, accept), "{\"" + marker + "\": "),
            send(port, "POST", "/mcp", local, List.of(json), INITIALIZE),
            send(
                port,
                "POST",
                "/mcp",
                local,
                List.of(json, accept, "Mcp-Session-Id: no-such-session"),
                "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\",\"x\":\""
                    + marker
                    + "\"}"),
            send(port, "GET", "/mcp", local, List.of("Accept: text/event-stream"), ""),
            send(port, "PUT", "/mcp", local, List.of(json), "{\"" + marker + "\":1}"));

    for (Answer answer : answers) {
      assertThat(answer.status()).as(answer.text()).isBetween(400, 499);
      assertThat(answer.header("content-type")).as(answer.text()).startsWith("application/json");
      JsonNode document = JSON.readTree(answer.body());
      assertThat(document.propertyNames()).as(answer.text()).containsExactly("error");
      assertThat(document.get("error").propertyNames()).containsExactly("code", "message");
      assertThat(answer.body())
          .doesNotContain("stackTrace")
          .doesNotContain("ECHO-MARKER")
          .doesNotContain("Exception")
          .hasSizeLessThan(1000);
    }
  }

  @Test
  void aMalformedChunkedBodyIsABadRequestNotAnErrorInTheLog() throws Exception {
    int port = start();
    PrintStream stderr = System.err;
    ByteArrayOutputStream log = new ByteArrayOutputStream();
    Answer answer;
    System.setErr(new PrintStream(log, true, StandardCharsets.UTF_8));
    try {
      answer =
          sendRaw(
              port,
              "POST /v1/tools/side_effect/invoke HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                  + "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
                  + "Connection: close\r\n\r\n5\r\n{\"arg\r\nZZ-not-a-size\r\n");
    } finally {
      System.setErr(stderr);
    }

    assertThat(answer.status()).as(answer.text()).isEqualTo(400);
    assertThat(answer.header("content-type")).startsWith("application/json");
    assertThat(log.toString(StandardCharsets.UTF_8)).doesNotContain("ERROR");
    assertThat(sideEffect.runs).hasValue(0);
  }

  @Test
  void anUnknownOrEmptyProfileIsNamedNotGuessed() throws Exception {
    int port = start();
    String local = "127.0.0.1:" + port;

    Answer unknownGateway =
        send(
            port,
            "POST",
            "/mcp/nope",
            local,
            List.of(
                "Content-Type: application/json", "Accept: application/json, text/event-stream"),
            INITIALIZE);
    Answer queryProfile =
        send(
            port,
            "POST",
            "/mcp?profile=subagent",
            local,
            List.of(
                "Content-Type: application/json", "Accept: application/json, text/event-stream"),
            INITIALIZE);
    Answer emptyProfile = send(port, "GET", "/v1/tools?profile=", local, List.of(), "");

    assertThat(unknownGateway.status()).isEqualTo(404);
    assertThat(unknownGateway.errorCode()).isEqualTo("profile_not_found");
    assertThat(unknownGateway.errorMessage()).contains("/mcp/nope").contains("subagent");
    assertThat(queryProfile.status()).isEqualTo(400);
    assertThat(queryProfile.errorMessage()).contains("/mcp/subagent");
    assertThat(emptyProfile.status()).isEqualTo(400);
    assertThat(emptyProfile.errorMessage()).contains("'profile' is empty");
  }

  @Test
  void jettysOwnRejectionsAnswerInJson() throws Exception {
    int port = start();

    Answer ambiguous = send(port, "GET", "/v1//tools", "127.0.0.1:" + port, List.of(), "");
    Answer hugeHeader =
        send(
            port,
            "GET",
            "/v1/tools",
            "127.0.0.1:" + port,
            List.of("X-Filler: " + "a".repeat(64 * 1024)),
            "");

    for (Answer answer : List.of(ambiguous, hugeHeader)) {
      assertThat(answer.status()).as(answer.text()).isBetween(400, 499);
      assertThat(answer.header("content-type")).as(answer.text()).startsWith("application/json");
      assertThat(JSON.readTree(answer.body()).at("/error/code").asString()).isNotBlank();
      assertThat(answer.body()).doesNotContain("<html");
    }
  }

  @Test
  void aRefusedBodyClosesItsConnectionAndSaysSoSoAClientNeverReusesIt() throws Exception {
    int port = start();
    String invoke = "/v1/tools/side_effect/invoke";
    Answer refused =
        send(
            port,
            "POST",
            invoke,
            "127.0.0.1:" + port,
            List.of("Content-Type: text/plain"),
            "{\"arguments\":{}}");
    java.net.http.HttpClient client = java.net.http.HttpClient.newHttpClient();
    List<Integer> statuses = new java.util.ArrayList<>();
    for (int round = 0; round < 40; round++) {
      for (String type : List.of("text/plain", "application/json")) {
        statuses.add(post(client, port, invoke, "{\"arguments\":{}}", "Content-Type", type));
      }
    }

    assertThat(refused.status()).isEqualTo(415);
    assertThat(refused.headers()).containsEntry("connection", "close");
    assertThat(statuses).containsOnly(415, 200).hasSize(80);
    assertThat(sideEffect.runs).hasValue(40);
  }

  @Test
  void theGatewaysOwnRefusalOfABodyClosesItsConnectionAndSaysSo() throws Exception {
    int port = start();
    String unknownSession = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}";
    Answer refused =
        send(
            port,
            "POST",
            "/mcp",
            "127.0.0.1:" + port,
            List.of(
                "Content-Type: application/json",
                "Accept: application/json, text/event-stream",
                "Mcp-Session-Id: no-such-session"),
            unknownSession);
    java.net.http.HttpClient client = java.net.http.HttpClient.newHttpClient();
    List<Integer> statuses = new java.util.ArrayList<>();
    for (int round = 0; round < 40; round++) {
      statuses.add(
          post(
              client,
              port,
              "/mcp",
              unknownSession,
              "Content-Type",
              "application/json",
              "Accept",
              "application/json, text/event-stream",
              "Mcp-Session-Id",
              "no-such-session"));
      statuses.add(
          post(
              client,
              port,
              "/v1/tools/side_effect/invoke",
              "{\"arguments\":{}}",
              "Content-Type",
              "application/json"));
    }

    assertThat(refused.status()).isEqualTo(404);
    assertThat(refused.headers()).containsEntry("connection", "close");
    assertThat(statuses).containsOnly(404, 200).hasSize(80);
    assertThat(sideEffect.runs).hasValue(40);
  }

  /** The status of a POST on the client, which reuses its connections as any client would. */
  private static int post(
      java.net.http.HttpClient client, int port, String path, String body, String... headers)
      throws Exception {
    return client
        .send(
            java.net.http.HttpRequest.newBuilder(
                    java.net.URI.create("http://127.0.0.1:" + port + path))
                .headers(headers)
                .POST(java.net.http.HttpRequest.BodyPublishers.ofString(body))
                .build(),
            java.net.http.HttpResponse.BodyHandlers.discarding())
        .statusCode();
  }

  @Test
  void aClientTricklingItsHeadersIsCutOff() throws Exception {
    host =
        Host.builder(HostConfig.defaults().withHttp(HostConfig.Http.defaults().withPort(0)))
            .environment(Map.of())
            .headerTimeout(java.time.Duration.ofMillis(800))
            .build();
    host.start();
    long started = System.nanoTime();
    boolean closedByHost = false;
    try (Socket socket = new Socket("127.0.0.1", host.port())) {
      socket.setSoTimeout(100);
      OutputStream out = socket.getOutputStream();
      out.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n".getBytes(StandardCharsets.US_ASCII));
      // One header byte every 100 ms: each resets the idle timeout, none completes the head.
      for (int i = 0; i < 100 && !closedByHost; i++) {
        try {
          out.write('X');
          out.flush();
          closedByHost = socket.getInputStream().read() == -1;
        } catch (java.net.SocketTimeoutException stillOpen) {
          // Nothing to read yet: the host is still waiting for the head.
        } catch (IOException reset) {
          closedByHost = true;
        }
      }
    }
    long tookMillis = (System.nanoTime() - started) / 1_000_000;

    assertThat(closedByHost).isTrue();
    assertThat(tookMillis).isBetween(700L, 5_000L);
  }

  private static List<String> with(List<String> headers, String header) {
    return java.util.stream.Stream.concat(headers.stream(), java.util.stream.Stream.of(header))
        .toList();
  }

  /** Sends one request with the given headers and body (none when empty) and reads the answer. */
  static Answer send(
      int port, String method, String path, String hostHeader, List<String> headers, String body)
      throws IOException {
    StringBuilder request =
        new StringBuilder(method)
            .append(' ')
            .append(path)
            .append(" HTTP/1.1\r\nHost: ")
            .append(hostHeader)
            .append("\r\nConnection: close\r\n");
    headers.forEach(header -> request.append(header).append("\r\n"));
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    if (bytes.length > 0) {
      request.append("Content-Length: ").append(bytes.length).append("\r\n");
    }
    request.append("\r\n");
    return sendRaw(port, request.toString(), bytes);
  }

  static Answer sendRaw(int port, String head, byte... body) throws IOException {
    try (Socket socket = new Socket("127.0.0.1", port)) {
      socket.setSoTimeout(20_000);
      OutputStream out = socket.getOutputStream();
      out.write(head.getBytes(StandardCharsets.UTF_8));
      try {
        out.write(body);
        out.flush();
      } catch (IOException refusedBeforeTheBodyWasRead) {
        // The host may answer and close before it reads a body it refuses.
      }
      return Answer.parse(readAll(socket.getInputStream()));
    }
  }

  /** Streams a chunked JSON-looking body of the given length. */
  private static Answer chunked(int port, String path, int length) throws IOException {
    try (Socket socket = new Socket("127.0.0.1", port)) {
      socket.setSoTimeout(20_000);
      OutputStream out = socket.getOutputStream();
      out.write(
          ("POST "
                  + path
                  + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                  + "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n")
              .getBytes(StandardCharsets.US_ASCII));
      byte[] chunk = "x".repeat(64 * 1024).getBytes(StandardCharsets.US_ASCII);
      try {
        for (int sent = 0; sent < length; sent += chunk.length) {
          out.write(
              (Integer.toHexString(chunk.length) + "\r\n").getBytes(StandardCharsets.US_ASCII));
          out.write(chunk);
          out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
        }
        out.write("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        out.flush();
      } catch (IOException refusedMidway) {
        // The host answers as soon as the limit is passed and may close before the rest arrives.
      }
      return Answer.parse(readAll(socket.getInputStream()));
    }
  }

  private static byte[] readAll(InputStream in) throws IOException {
    ByteArrayOutputStream all = new ByteArrayOutputStream();
    byte[] buffer = new byte[8192];
    try {
      for (int read; (read = in.read(buffer)) != -1; ) {
        all.write(buffer, 0, read);
      }
    } catch (IOException reset) {
      // A connection reset after the answer was sent: keep what arrived.
    }
    return all.toByteArray();
  }

  /** One HTTP answer: status, headers and body, with the body un-chunked. */
  record Answer(int status, Map<String, String> headers, String body) {

    static Answer parse(byte[] raw) {
      String text = new String(raw, StandardCharsets.UTF_8);
      int split = text.indexOf("\r\n\r\n");
      if (split < 0) {
        return new Answer(0, Map.of(), text);
      }
      String[] lines = text.substring(0, split).split("\r\n");
      java.util.Map<String, String> headers = new java.util.HashMap<>();
      for (int i = 1; i < lines.length; i++) {
        int colon = lines[i].indexOf(':');
        headers.put(
            lines[i].substring(0, colon).strip().toLowerCase(java.util.Locale.ROOT),
            lines[i].substring(colon + 1).strip());
      }
      String body = text.substring(split + 4);
      if ("chunked".equalsIgnoreCase(headers.get("transfer-encoding"))) {
        body = unchunk(body);
      }
      return new Answer(Integer.parseInt(lines[0].substring(9, 12)), headers, body);
    }

    private static String unchunk(String body) {
      StringBuilder out = new StringBuilder();
      int at = 0;
      while (at < body.length()) {
        int end = body.indexOf("\r\n", at);
        int size = Integer.parseInt(body.substring(at, end).split(";")[0].strip(), 16);
        if (size == 0) {
          break;
        }
        out.append(body, end + 2, end + 2 + size);
        at = end + 2 + size + 2;
      }
      return out.toString();
    }

    String header(String name) {
      return headers.getOrDefault(name, "");
    }

    String errorCode() {
      return JSON.readTree(body).at("/error/code").asString();
    }

    String errorMessage() {
      return JSON.readTree(body).at("/error/message").asString();
    }

    String text() {
      return status + " " + headers + " " + (body.length() > 500 ? body.substring(0, 500) : body);
    }
  }
}
