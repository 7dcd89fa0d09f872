package dev.toolhost.web;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.testing.FakeSite;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A 401 or 407 is an answer the caller reads, as APIs send it: most (OpenRouter, Brave) send no
 * {@code WWW-Authenticate} challenge, which Jetty's client would otherwise fail as a protocol
 * violation.
 */
@Timeout(30)
class OutboundHttpChallengeTest {

  @Test
  void a401WithoutAChallengeIsAnsweredWithItsBody() throws Exception {
    String body = "{\"error\":{\"message\":\"No auth credentials found\",\"code\":401}}";
    try (FakeSite site =
            FakeSite.start().page("/credits", FakeSite.Page.of(401, "application/json", body));
        OutboundHttp http =
            OutboundHttp.start(OutboundPolicy.defaults().allowingHost("127.0.0.2"))) {

      OutboundHttp.Response response =
          http.get(site.url() + "/credits", Map.of("Authorization", "Bearer wrong"));

      assertThat(response.status()).isEqualTo(401);
      assertThat(response.text()).isEqualTo(body);
      assertThat(site.takeRequests()).hasSize(1);
    }
  }

  @Test
  void a401WithAChallengeIsAnsweredWithItsBodyAndNotRetried() throws Exception {
    FakeSite.Page challenge =
        new FakeSite.Page(
            401,
            Map.of("Content-Type", "text/plain", "WWW-Authenticate", "Basic realm=\"api\""),
            "who are you?".getBytes(java.nio.charset.StandardCharsets.UTF_8));
    try (FakeSite site = FakeSite.start().page("/private", challenge);
        OutboundHttp http =
            OutboundHttp.start(OutboundPolicy.defaults().allowingHost("127.0.0.2"))) {

      OutboundHttp.Response response = http.get(site.url() + "/private", Map.of());

      assertThat(response.status()).isEqualTo(401);
      assertThat(response.text()).isEqualTo("who are you?");
      assertThat(site.takeRequests()).hasSize(1);
    }
  }

  @Test
  void a407IsAnsweredWithItsBody() throws Exception {
    try (FakeSite site =
            FakeSite.start().page("/", FakeSite.Page.of(407, "text/plain", "proxy says no"));
        OutboundHttp http =
            OutboundHttp.start(OutboundPolicy.defaults().allowingHost("127.0.0.2"))) {

      OutboundHttp.Response response = http.get(site.url() + "/", Map.of());

      assertThat(response.status()).isEqualTo(407);
      assertThat(response.text()).isEqualTo("proxy says no");
    }
  }
}
