package dev.toolhost.browser;

import static dev.toolhost.browser.BrowserFixture.ok;
import static dev.toolhost.browser.BrowserFixture.session;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.toolhost.core.ToolResult;
import dev.toolhost.web.OutboundHttp;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The vetting proxy every browser connection goes through: what the in-page checks cannot stop (a
 * fresh frame's WebSocket, a name that rebinds between the check and the connection) never reaches
 * a refused address, ordinary pages still load, and the proxy itself refuses what is not a proxy
 * request.
 */
class BrowserProxyTest {

  @TempDir static Path root;
  private static BrowserFixture web;
  private static final AtomicInteger rebindLookups = new AtomicInteger();

  /**
   * "localhost" answers the allowed 127.0.0.3 to its first lookup (the request interception's check
   * of an image's URL), and 127.0.0.1 (refused) after: a rebinding name. Chromium resolves
   * "localhost" to loopback itself, so without the proxy it would connect to 127.0.0.1.
   */
  private static List<InetAddress> lookup(String host) throws java.net.UnknownHostException {
    if (host.equals("localhost")) {
      String answer = rebindLookups.incrementAndGet() <= 1 ? "127.0.0.3" : "127.0.0.1";
      return List.of(InetAddress.getByName(answer));
    }
    return OutboundHttp.Lookup.system().addresses(host);
  }

  @BeforeAll
  static void start() throws Exception {
    web = new BrowserFixture(root, BrowserFixture.config(), Map.of(), BrowserProxyTest::lookup);
  }

  @AfterAll
  static void stop() {
    web.close();
  }

  @Test
  void aPopUpsWebSocketNeverReachesARefusedAddress() throws Exception {
    String s = session();
    web.internal.requests.clear();
    ok(web.call(s, "action", "navigate", "url", web.pages.url("/popup-socket")));
    ToolResult snapshot = ok(web.call(s, "action", "snapshot"));
    ok(web.call(s, "action", "click", "ref", BrowserFixture.ref(snapshot, "Open socket")));
    ok(web.call(s, "action", "tab_focus", "tab", 1));
    String state = "";
    for (int i = 0; i < 40 && !state.contains("socket "); i++) {
      Thread.sleep(100);
      state = ok(web.call(s, "action", "content")).text();
    }
    assertThat(web.internal.requests).isEmpty();
    assertThat(state).contains("socket failed").doesNotContain("socket open");
  }

  @Test
  void aNameThatRebindsToARefusedAddressNeverReachesIt() throws Exception {
    String s = session();
    web.internal.requests.clear();
    rebindLookups.set(0);
    URI internal = URI.create(web.internal.url("/"));
    String image = "http://localhost:" + internal.getPort() + "/rebound.png";
    ok(
        web.call(
            s,
            "action",
            "navigate",
            "url",
            web.pages.url("/image?src=" + java.net.URLEncoder.encode(image, "UTF-8"))));
    // The page says when the image's load has ended, here in failure: no request for it is to come.
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () -> ok(web.call(s, "action", "content")).text(),
            content -> content.contains("failed") || content.contains("loaded"));
    assertThat(ok(web.call(s, "action", "content")).text()).contains("failed");
    assertThat(web.internal.requests).isEmpty();
    assertThat(rebindLookups.get()).as("the name was looked up after it rebound").isGreaterThan(1);
  }

  @Test
  void ordinaryPagesAndRedirectsStillLoadThroughTheProxy() {
    String s = session();
    assertThat(ok(web.call(s, "action", "navigate", "url", web.pages.url("/js"))).text())
        .contains("'Built'");
    assertThat(ok(web.call(s, "action", "navigate", "url", web.pages.url("/to-form"))).text())
        .contains("'Sign up'");
  }

  @Test
  void theProxyRefusesARequestThatIsNotAProxyRequest() throws Exception {
    String answer = exchange("GET /form HTTP/1.1\r\nHost: 127.0.0.3\r\n\r\n");
    assertThat(answer).startsWith("HTTP/1.1 400").contains("not a proxy request");
  }

  @Test
  void theProxyRefusesAnOversizedHead() throws Exception {
    String answer =
        exchange(
            "GET "
                + web.pages.url("/form")
                + " HTTP/1.1\r\nX-Big: "
                + "a".repeat(20_000)
                + "\r\n\r\n");
    assertThat(answer).startsWith("HTTP/1.1 431");
  }

  @Test
  void theProxyRefusesATunnelToARefusedAddressAndCarriesAnAllowedOne() throws Exception {
    web.internal.requests.clear();
    URI internal = URI.create(web.internal.url("/"));
    assertThat(exchange("CONNECT 127.0.0.1:" + internal.getPort() + " HTTP/1.1\r\n\r\n"))
        .startsWith("HTTP/1.1 403")
        .contains("127.0.0.1");
    assertThat(web.internal.requests).isEmpty();
    URI pages = URI.create(web.pages.url("/"));
    String tunnelled =
        exchange(
            "CONNECT 127.0.0.3:"
                + pages.getPort()
                + " HTTP/1.1\r\n\r\nGET /form HTTP/1.1\r\nHost: 127.0.0.3\r\nConnection:"
                + " close\r\n\r\n");
    assertThat(tunnelled).startsWith("HTTP/1.1 200 Connection Established").contains("Sign up");
    assertThat(
            exchange(
                "GET "
                    + web.pages.url("/form")
                    + " HTTP/1.1\r\nHost: 127.0.0.3\r\nProxy-Connection: keep-alive\r\n\r\n"))
        .startsWith("HTTP/1.1 200")
        .contains("Sign up");
  }

  /** Sends the text to the proxy and reads its answer to the end. */
  private static String exchange(String request) throws IOException {
    try (Socket socket = new Socket("127.0.0.1", web.proxy.port())) {
      socket.setSoTimeout(10_000);
      OutputStream out = socket.getOutputStream();
      try {
        out.write(request.getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
      } catch (IOException e) {
        // The proxy may answer and close before all of an oversized head is sent.
      }
      InputStream in = socket.getInputStream();
      ByteArrayOutputStream answer = new ByteArrayOutputStream();
      try {
        in.transferTo(answer);
      } catch (IOException e) {
        // A reset after the answer.
      }
      return answer.toString(StandardCharsets.UTF_8);
    }
  }
}
