package dev.toolhost.web;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.toolhost.testing.FakeSite;
import java.io.ByteArrayOutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;

class OutboundHttpTest {

  private static final OutboundPolicy OPEN =
      OutboundPolicy.defaults()
          .allowingRanges(List.of(Cidr.parse("127.0.0.2/32"), Cidr.parse("127.0.0.3/32")));

  @Test
  void credentialsDoNotFollowARedirectToAnotherOrigin() throws Exception {
    try (FakeSite first = FakeSite.start();
        FakeSite second = FakeSite.on("127.0.0.3");
        OutboundHttp http = OutboundHttp.start(OPEN)) {
      second.page("/landing", FakeSite.Page.ok("text/plain", "landed"));
      first.page("/same", FakeSite.Page.redirect("/here"));
      first.page("/here", FakeSite.Page.ok("text/plain", "here"));
      first.page("/away", FakeSite.Page.redirect(second.url() + "/landing"));
      Map<String, String> headers =
          Map.of("Authorization", "Bearer secret-token", "Accept", "text/plain");

      assertThat(http.get(first.url() + "/same", headers).text()).isEqualTo("here");
      assertThat(http.get(first.url() + "/away", headers).text()).isEqualTo("landed");

      assertThat(first.takeRequests())
          .extracting(r -> r.header("Authorization"))
          .containsExactly("Bearer secret-token", "Bearer secret-token", "Bearer secret-token");
      FakeSite.Request landed = second.takeRequests().getFirst();
      assertThat(landed.header("Authorization")).isNull();
      assertThat(landed.header("Accept")).isEqualTo("text/plain");
    }
  }

  @Test
  void aServerThatNeverAnswersEndsAtTheTimeout() throws Exception {
    List<Socket> held = new ArrayList<>();
    try (ServerSocket silent = new ServerSocket()) {
      silent.bind(new InetSocketAddress(InetAddress.getByName("127.0.0.2"), 0));
      Thread.ofVirtual()
          .start(
              () -> {
                try {
                  while (true) {
                    held.add(silent.accept());
                  }
                } catch (Exception e) {
                  // Closed at the end of the test.
                }
              });
      OutboundPolicy policy = OPEN.withCaps(5, 1 << 20, Duration.ofSeconds(1));
      try (OutboundHttp http = OutboundHttp.start(policy)) {
        long start = System.nanoTime();
        assertThatThrownBy(
                () -> http.get("http://127.0.0.2:" + silent.getLocalPort() + "/slow", Map.of()))
            .isInstanceOfSatisfying(
                OutboundException.class,
                e -> assertThat(e.reason()).isEqualTo(OutboundException.Reason.TIMEOUT))
            .hasMessage(
                "fetching 'http://127.0.0.2:"
                    + silent.getLocalPort()
                    + "/slow' took longer than 1 s");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
      }
    } finally {
      for (Socket socket : held) {
        socket.close();
      }
    }
  }

  @Test
  void theBodyCapCountsDecompressedBytesSoAGzipBombStopsAtIt() throws Exception {
    ByteArrayOutputStream compressed = new ByteArrayOutputStream();
    try (GZIPOutputStream gzip = new GZIPOutputStream(compressed)) {
      byte[] zeros = new byte[1 << 20];
      for (int i = 0; i < 50; i++) {
        gzip.write(zeros);
      }
    }
    assertThat(compressed.size()).isLessThan(100_000);
    try (FakeSite site = FakeSite.start();
        OutboundHttp http = OutboundHttp.start(OPEN.withCaps(5, 1 << 20, Duration.ofSeconds(10)))) {
      site.page(
          "/bomb",
          new FakeSite.Page(
              200,
              Map.of("Content-Type", "text/plain", "Content-Encoding", "gzip"),
              compressed.toByteArray()));

      assertThatThrownBy(() -> http.get(site.url() + "/bomb", Map.of()))
          .isInstanceOfSatisfying(
              OutboundException.class,
              e -> assertThat(e.reason()).isEqualTo(OutboundException.Reason.TOO_LARGE))
          .hasMessage(
              "the body of '" + site.url() + "/bomb' is larger than the cap of 1048576 bytes");
    }
  }

  @Test
  void vetChecksAUrlAsAFetchWouldWithoutFetchingIt() {
    try (OutboundHttp http = OutboundHttp.start(OPEN, WebFixture.LOOKUP)) {
      http.vet(URI.create("http://127.0.0.2:9/"));
      http.vet(URI.create("https://allowed.example/path"));
      assertThatThrownBy(() -> http.vet(URI.create("http://intranet.example/")))
          .hasMessageStartingWith(
              "'intranet.example' resolves to 10.0.0.5, which lies in a private");
      assertThatThrownBy(() -> http.vet(URI.create("http://[::1]/")))
          .hasMessageStartingWith("::1, which lies in the IPv6 loopback address");
      assertThatThrownBy(() -> http.vet(URI.create("http://nowhere.example/")))
          .hasMessage("the host 'nowhere.example' does not resolve");
      assertThatThrownBy(() -> http.vet(URI.create("ftp://allowed.example/")))
          .hasMessageContaining("is a ftp URL");
    }
  }

  @Test
  void anInternationalisedHostNameIsWrittenInPunycodeAndCheckedAsAnyOther() {
    assertThat(OutboundHttp.checkedUrl("https://Bücher.example:8443/a?q=ü#top").toString())
        .isEqualTo("https://xn--bcher-kva.example:8443/a?q=ü#top");
    assertThatThrownBy(() -> OutboundHttp.checkedUrl("http://bücher.example@127.0.0.1/"))
        .hasMessageContaining("holds a user name or password");
    assertThatThrownBy(() -> OutboundHttp.checkedUrl("http://exa mple.com/"))
        .hasMessageStartingWith("'http://exa mple.com/' is not a valid URL");
  }

  @Test
  void everyConnectionIsMadeToTheAddressesCheckedForItSoARebindingNameIsRefused() throws Exception {
    java.util.concurrent.atomic.AtomicInteger lookups =
        new java.util.concurrent.atomic.AtomicInteger();
    // DNS rebinding: the first answer passes the check, every later one points at loopback.
    OutboundHttp.Lookup rebinding =
        host ->
            List.of(
                InetAddress.getByName(lookups.getAndIncrement() == 0 ? "127.0.0.2" : "127.0.0.1"));
    try (FakeSite site = FakeSite.start();
        FakeSite internal = FakeSite.on("127.0.0.1");
        OutboundHttp http = OutboundHttp.start(OPEN, rebinding)) {
      site.page("/", FakeSite.Page.ok("text/plain", "checked address"));
      internal.page("/", FakeSite.Page.ok("text/plain", "internal"));
      String url = "http://rebind.example:" + site.port() + "/";
      // No connection is kept, so the second fetch must look the name up again.
      Map<String, String> close = Map.of("Connection", "close");

      assertThat(http.get(url, close).text()).isEqualTo("checked address");
      assertThatThrownBy(() -> http.get(url, close))
          .isInstanceOfSatisfying(
              OutboundException.class,
              e -> assertThat(e.reason()).isEqualTo(OutboundException.Reason.REFUSED))
          .hasMessage(
              "'rebind.example' resolves to 127.0.0.1, which lies in the loopback range"
                  + " 127.0.0.0/8; internal addresses are refused unless the config's"
                  + " web.outbound.allow opens them");

      // At least once per connection: Jetty may open (and look up for) one more than it uses.
      assertThat(lookups.get()).isGreaterThanOrEqualTo(2);
      assertThat(site.takeRequests()).hasSize(1);
      assertThat(internal.takeRequests()).isEmpty();
    }
  }

  @Test
  void checkedAddressesAreTheAllowedOnesAndARefusedOneRefusesTheName() throws Exception {
    OutboundHttp.Lookup lookup =
        host ->
            host.equals("mixed.example")
                ? List.of(InetAddress.getByName("127.0.0.2"), InetAddress.getByName("127.0.0.1"))
                : List.of(InetAddress.getByName("127.0.0.2"));
    try (OutboundHttp http = OutboundHttp.start(OPEN, lookup)) {
      assertThat(http.checkedAddresses("ok.example", 443))
          .containsExactly(InetAddress.getByName("127.0.0.2"));
      assertThatThrownBy(() -> http.checkedAddresses("mixed.example", 443))
          .isInstanceOfSatisfying(
              OutboundException.class,
              e -> assertThat(e.reason()).isEqualTo(OutboundException.Reason.REFUSED))
          .hasMessageContaining("127.0.0.1");
    }
    try (OutboundHttp http =
        OutboundHttp.start(
            OPEN,
            host -> {
              throw new java.net.UnknownHostException(host);
            })) {
      assertThatThrownBy(() -> http.checkedAddresses("nowhere.example", 80))
          .isInstanceOfSatisfying(
              OutboundException.class,
              e -> assertThat(e.reason()).isEqualTo(OutboundException.Reason.UNREACHABLE));
    }
  }
}
