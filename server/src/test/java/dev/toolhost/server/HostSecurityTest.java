package dev.toolhost.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.toolhost.core.spi.ConfigException;
import dev.toolhost.host.HostConfig;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** The host's defaults keep it safe: loopback only unless a token guards it. */
class HostSecurityTest {

  private static final HttpClient CLIENT =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private static final JsonMapper JSON = JsonMapper.builder().build();

  private static final HostConfig ON_A_FREE_PORT =
      HostConfig.defaults().withHttp(HostConfig.Http.defaults().withPort(0));

  @AfterAll
  static void closeClient() {
    CLIENT.close();
  }

  @Test
  void withATokenRequestsWithoutItAreUnauthorized() throws Exception {
    try (Host host =
        Host.builder(ON_A_FREE_PORT).environment(Map.of("TOOLHOST_TOKEN", "s3cret")).build()) {
      URI base = host.start();

      HttpResponse<String> without = get(base.resolve("/v1/tools"));
      HttpResponse<String> wrong = get(base.resolve("/v1/tools"), "Bearer not-it");
      HttpResponse<String> basic = get(base.resolve("/v1/tools"), "Basic czNjcmV0");
      HttpResponse<String> right = get(base.resolve("/v1/tools"), "Bearer s3cret");

      assertThat(without.statusCode()).isEqualTo(401);
      assertThat(without.headers().firstValue("www-authenticate"))
          .hasValueSatisfying(value -> assertThat(value).startsWith("Bearer"));
      JsonNode error = JSON.readTree(without.body()).get("error");
      assertThat(error.get("code").asString()).isEqualTo("unauthorized");
      assertThat(error.get("message").asString()).contains("Authorization: Bearer");
      assertThat(wrong.statusCode()).isEqualTo(401);
      assertThat(wrong.body()).doesNotContain("s3cret");
      assertThat(basic.statusCode()).isEqualTo(401);
      assertThat(right.statusCode()).isEqualTo(200);
    }
  }

  @Test
  void withATokenEveryRouteButHealthNeedsIt() throws Exception {
    HostConfig config = ON_A_FREE_PORT.withHttp(ON_A_FREE_PORT.http().withToken("literal-token"));
    try (Host host = Host.builder(config).environment(Map.of()).build()) {
      URI base = host.start();

      assertThat(get(base.resolve("/healthz")).statusCode()).isEqualTo(200);
      assertThat(get(base.resolve("/metrics")).statusCode()).isEqualTo(401);
      assertThat(get(base.resolve("/v1/profiles")).statusCode()).isEqualTo(401);
      assertThat(get(base.resolve("/no/such/path")).statusCode()).isEqualTo(401);
      HttpResponse<String> metrics = get(base.resolve("/metrics"), "Bearer literal-token");
      assertThat(metrics.statusCode()).isEqualTo(200);
      // The refused requests are measured too, with their status, as each response completes.
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (!metrics.body().contains("http_route=\"/v1/profiles\"")
          && System.nanoTime() < deadline) {
        Thread.sleep(20);
        metrics = get(base.resolve("/metrics"), "Bearer literal-token");
      }
      assertThat(metrics.body().lines())
          .anySatisfy(
              line ->
                  assertThat(line)
                      .startsWith("http_server_request_duration_seconds_count{")
                      .contains("http_route=\"/v1/profiles\"")
                      .contains("http_response_status_code=\"401\"")
                      .endsWith(" 1"));
    }
  }

  @Test
  void refusesToBindANonLoopbackAddressWithoutAToken() {
    HostConfig config = ON_A_FREE_PORT.withHttp(ON_A_FREE_PORT.http().withHost("0.0.0.0"));
    try (Host host = Host.builder(config).environment(Map.of()).build()) {
      assertThatThrownBy(host::start)
          .isInstanceOf(ConfigException.class)
          .hasMessageStartingWith("Refusing to listen on 0.0.0.0 without a bearer token")
          .hasMessageContaining("TOOLHOST_TOKEN");
    }
  }

  @Test
  void bindsANonLoopbackAddressWithAToken() throws Exception {
    HostConfig config = ON_A_FREE_PORT.withHttp(ON_A_FREE_PORT.http().withHost("0.0.0.0"));
    try (Host host = Host.builder(config).environment(Map.of("TOOLHOST_TOKEN", "s3cret")).build()) {
      host.start();

      URI loopback = URI.create("http://127.0.0.1:" + host.port() + "/v1/tools");
      assertThat(get(loopback, "Bearer s3cret").statusCode()).isEqualTo(200);
    }
  }

  @Test
  void aPortInUseIsAClearError() {
    try (Host first = Host.builder(ON_A_FREE_PORT).environment(Map.of()).build()) {
      first.start();
      HostConfig samePort = ON_A_FREE_PORT.withHttp(ON_A_FREE_PORT.http().withPort(first.port()));
      try (Host second = Host.builder(samePort).environment(Map.of()).build()) {
        assertThatThrownBy(second::start)
            .isInstanceOf(java.io.UncheckedIOException.class)
            .hasMessageStartingWith("Cannot listen on 127.0.0.1:" + first.port())
            .hasMessageEndingWith(
                " (another process holds the port: stop it, choose another with --port N or"
                    + " http.port, or let the system pick a free one with --port 0)");
      }
    }
  }

  @Test
  void closingTheHostLeavesNoThreadsBehind() throws Exception {
    Host host = Host.builder(ON_A_FREE_PORT).environment(Map.of()).build();
    URI base = host.start();
    assertThat(get(base.resolve("/healthz")).statusCode()).isEqualTo(200);

    host.close();
    host.close();

    Instant deadline = Instant.now().plusSeconds(5);
    while (hostThreadsAlive() && Instant.now().isBefore(deadline)) {
      Thread.sleep(20);
    }
    assertThat(hostThreadsAlive()).isFalse();
  }

  private static boolean hostThreadsAlive() {
    return Thread.getAllStackTraces().keySet().stream()
        .anyMatch(thread -> thread.getName().startsWith(Host.THREAD_POOL_NAME));
  }

  private static HttpResponse<String> get(URI uri, String... authorization) throws Exception {
    HttpRequest.Builder request = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10));
    if (authorization.length > 0) {
      request.header("Authorization", authorization[0]);
    }
    return CLIENT.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }
}
