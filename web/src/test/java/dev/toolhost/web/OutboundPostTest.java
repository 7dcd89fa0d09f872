package dev.toolhost.web;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * POST through the outbound client (for JSON-RPC APIs such as A2A): the body and headers arrive,
 * the answer is read under the same address checks as a GET, and a streamed answer is readable line
 * by line as the server writes it.
 */
@Timeout(30)
class OutboundPostTest {

  private final CountDownLatch secondEvent = new CountDownLatch(1);
  private final AtomicReference<String> received = new AtomicReference<>();
  private HttpServer server;
  private URI base;

  @BeforeEach
  void start() throws Exception {
    server = HttpServer.create(new InetSocketAddress(InetAddress.getByName("127.0.0.2"), 0), 0);
    server.createContext(
        "/rpc",
        exchange -> {
          received.set(
              exchange.getRequestMethod()
                  + " "
                  + exchange.getRequestHeaders().getFirst("Content-Type")
                  + " "
                  + exchange.getRequestHeaders().getFirst("X-Token")
                  + " "
                  + new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8));
          byte[] answer = "{\"result\": 1}".getBytes(StandardCharsets.UTF_8);
          exchange.getResponseHeaders().add("Content-Type", "application/json");
          exchange.sendResponseHeaders(200, answer.length);
          exchange.getResponseBody().write(answer);
          exchange.close();
        });
    server.createContext(
        "/events",
        exchange -> {
          exchange.getRequestBody().readAllBytes();
          exchange.getResponseHeaders().add("Content-Type", "text/event-stream");
          exchange.sendResponseHeaders(200, 0);
          OutputStream out = exchange.getResponseBody();
          out.write("data: one\n\n".getBytes(StandardCharsets.UTF_8));
          out.flush();
          try {
            secondEvent.await(10, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          out.write("data: two\n\n".getBytes(StandardCharsets.UTF_8));
          exchange.close();
        });
    server.start();
    base = URI.create("http://127.0.0.2:" + server.getAddress().getPort());
  }

  @AfterEach
  void stop() {
    secondEvent.countDown();
    server.stop(0);
  }

  @Test
  void aPostSendsItsBodyAndHeadersAndReadsTheAnswer() throws Exception {
    try (OutboundHttp http =
        OutboundHttp.start(OutboundPolicy.defaults().allowingHost("127.0.0.2"))) {
      OutboundHttp.Response response =
          http.post(
              base.resolve("/rpc"),
              Map.of("X-Token", "t"),
              "application/json",
              "{\"q\": 1}".getBytes(StandardCharsets.UTF_8));
      assertThat(response.status()).isEqualTo(200);
      assertThat(response.text()).isEqualTo("{\"result\": 1}");
      assertThat(received.get()).isEqualTo("POST application/json t {\"q\": 1}");
    }
  }

  @Test
  void aPostToAnInternalAddressTheListDoesNotOpenIsRefused() {
    try (OutboundHttp http = OutboundHttp.start(OutboundPolicy.defaults())) {
      assertThatThrownBy(
              () -> http.post(base.resolve("/rpc"), Map.of(), "application/json", new byte[0]))
          .isInstanceOfSatisfying(
              OutboundException.class,
              e -> assertThat(e.reason()).isEqualTo(OutboundException.Reason.REFUSED));
      assertThat(received.get()).isNull();
    }
  }

  @Test
  void aStreamedPostIsReadAsTheServerWritesIt() throws Exception {
    try (OutboundHttp http =
            OutboundHttp.start(
                OutboundPolicy.defaults().allowingRanges(List.of(Cidr.parse("127.0.0.2/32"))));
        OutboundHttp.Streamed stream =
            http.postStreaming(
                base.resolve("/events"),
                Map.of(),
                "application/json",
                new byte[] {'{', '}'},
                Duration.ofSeconds(20))) {
      assertThat(stream.status()).isEqualTo(200);
      BufferedReader lines =
          new BufferedReader(new InputStreamReader(stream.body(), StandardCharsets.UTF_8));
      // The first event is readable while the server still holds the second back.
      assertThat(lines.readLine()).isEqualTo("data: one");
      secondEvent.countDown();
      assertThat(lines.readLine()).isEmpty();
      assertThat(lines.readLine()).isEqualTo("data: two");
    }
  }
}
