package dev.toolhost.a2a;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import dev.toolhost.web.OutboundException;
import dev.toolhost.web.OutboundHttp;
import dev.toolhost.web.OutboundPolicy;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A remote agent's answer to a stream request is read no further than the outbound policy's body
 * cap, whether it comes as one JSON body or as an event stream whose line never ends.
 */
@Timeout(30)
class A2aClientStreamCapTest {

  private static final long CAP = 64 * 1024;

  private HttpServer server;
  private OutboundHttp http;
  private volatile String contentType;
  private volatile byte[] body;

  @BeforeEach
  void start() throws Exception {
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext(
        "/",
        exchange -> {
          exchange.getRequestBody().readAllBytes();
          exchange.getResponseHeaders().set("Content-Type", contentType);
          exchange.sendResponseHeaders(200, 0);
          try (OutputStream out = exchange.getResponseBody()) {
            out.write(body);
          }
        });
    server.start();
    http =
        OutboundHttp.start(
            OutboundPolicy.defaults()
                .allowingHost("127.0.0.1")
                .withCaps(0, CAP, Duration.ofSeconds(10)));
  }

  @AfterEach
  void stop() throws Exception {
    http.close();
    server.stop(0);
  }

  private Optional<A2aEvent> stream() throws InterruptedException {
    A2aClient.Target target =
        new A2aClient.Target(
            URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/"),
            A2aVersion.V0_3,
            Map.of());
    return new A2aClient(http)
        .stream(target, A2aMessage.user("hi"), Instant.now().plusSeconds(10), event -> true);
  }

  @Test
  void oneJsonAnswerLongerThanTheCapIsRefusedNotParsed() {
    contentType = "application/json";
    body =
        ("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"kind\":\"message\",\"role\":\"agent\","
                + "\"messageId\":\"m\",\"parts\":[{\"kind\":\"text\",\"text\":\""
                + "x".repeat((int) CAP * 2)
                + "\"}]}}")
            .getBytes(StandardCharsets.UTF_8);

    assertThatThrownBy(this::stream)
        .isInstanceOfSatisfying(
            OutboundException.class,
            e -> assertThat(e.reason()).isEqualTo(OutboundException.Reason.TOO_LARGE))
        .hasMessageContaining("larger than the cap of " + CAP);
  }

  @Test
  void anEventStreamLineLongerThanTheCapIsRefusedEvenWhenItIsOnlyAComment() {
    contentType = "text/event-stream";
    body = (": " + "x".repeat((int) CAP * 2) + "\n\n").getBytes(StandardCharsets.UTF_8);

    assertThatThrownBy(this::stream)
        .isInstanceOfSatisfying(
            OutboundException.class,
            e -> assertThat(e.reason()).isEqualTo(OutboundException.Reason.TOO_LARGE))
        .hasMessageContaining("an event from http://127.0.0.1:");
  }

  @Test
  void aStreamWithinTheCapIsStillReadToItsFinalEvent() throws Exception {
    contentType = "text/event-stream";
    body =
        ("data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"kind\":\"message\",\"role\":\"agent\","
                + "\"messageId\":\"m\",\"parts\":[{\"kind\":\"text\",\"text\":\"done\"}]}}\r\n\r\n")
            .getBytes(StandardCharsets.UTF_8);

    assertThat(stream()).get().isInstanceOf(A2aEvent.Reply.class);
  }
}
