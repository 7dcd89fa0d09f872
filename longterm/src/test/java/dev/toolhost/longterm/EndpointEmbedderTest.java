package dev.toolhost.longterm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The endpoint embedder against a local server that answers in OpenAI's embeddings format. */
class EndpointEmbedderTest {

  private HttpServer server;
  private final AtomicReference<String> request = new AtomicReference<>();
  private final AtomicReference<String> authorization = new AtomicReference<>();
  private volatile int status = 200;
  private volatile String answer =
      """
      {"object":"list","data":[
        {"object":"embedding","index":1,"embedding":[0.0,1.0,0.5]},
        {"object":"embedding","index":0,"embedding":[1.0,0.0,0.5]}],
       "model":"text-embedding-3-small","usage":{"prompt_tokens":5,"total_tokens":5}}
      """;

  @BeforeEach
  void start() throws IOException {
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext(
        "/v1/embeddings",
        exchange -> {
          request.set(new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8));
          authorization.set(exchange.getRequestHeaders().getFirst("Authorization"));
          byte[] body = answer.getBytes(StandardCharsets.UTF_8);
          exchange.sendResponseHeaders(status, body.length);
          exchange.getResponseBody().write(body);
          exchange.close();
        });
    server.start();
  }

  @AfterEach
  void stop() {
    server.stop(0);
  }

  private EndpointEmbedder embedder(int dimension) {
    return new EndpointEmbedder(
        URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/v1"),
        "text-embedding-3-small",
        dimension,
        true,
        Optional.of("sk-test"),
        Duration.ofSeconds(5));
  }

  @Test
  void vectorsComeBackInTheOrderOfTheTextsWhateverTheOrderOfTheAnswer() {
    try (EndpointEmbedder embedder = embedder(3)) {
      List<float[]> vectors = embedder.embed(List.of("first", "second"));

      assertThat(vectors.get(0)).containsExactly(1.0f, 0.0f, 0.5f);
      assertThat(vectors.get(1)).containsExactly(0.0f, 1.0f, 0.5f);
      assertThat(request.get())
          .isEqualTo(
              "{\"model\":\"text-embedding-3-small\",\"input\":[\"first\",\"second\"],\"dimensions\":3}");
      assertThat(authorization.get()).isEqualTo("Bearer sk-test");
    }
  }

  @Test
  void anErrorStatusAWrongLengthOrADeadServerIsAnEmbedderExceptionWithoutTheKey() {
    try (EndpointEmbedder embedder = embedder(4)) {
      assertThatThrownBy(() -> embedder.embed(List.of("a", "b")))
          .isInstanceOf(EmbedderException.class)
          .hasMessageContaining("expected 4");
    }
    status = 503;
    try (EndpointEmbedder embedder = embedder(3)) {
      assertThatThrownBy(() -> embedder.embed(List.of("a", "b")))
          .isInstanceOf(EmbedderException.class)
          .hasMessageContaining("HTTP 503")
          .hasMessageNotContaining("sk-test");
    }
    server.stop(0);
    try (EndpointEmbedder embedder = embedder(3)) {
      assertThatThrownBy(() -> embedder.embed(List.of("a")))
          .isInstanceOf(EmbedderException.class)
          .hasMessageContaining("did not answer");
    }
  }
}
