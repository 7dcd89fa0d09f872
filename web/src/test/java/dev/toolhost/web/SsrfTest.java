package dev.toolhost.web;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ToolResult;
import dev.toolhost.testing.FakeSite;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The SSRF suite: every way of pointing web_browse at an internal address is refused with an error
 * that names it, both directly and behind a 302 from an allowed site, and the internal server
 * standing in for the host's own port never sees a request.
 */
class SsrfTest {

  private static FakeSite internal;
  private static WebFixture web;
  private static final AtomicInteger HOP = new AtomicInteger();

  @BeforeAll
  static void start() {
    // Stands for the host's own HTTP port and anything else on 127.0.0.1.
    internal = FakeSite.on("127.0.0.1").page("/", FakeSite.Page.ok("text/plain", "internal"));
    FakeSite site = FakeSite.start().page("/", FakeSite.Page.ok("text/plain", "public page"));
    WebConfig config = WebFixture.config(site);
    config =
        new WebConfig(
            config.search(),
            new WebConfig.Browse(8_000, 4_000, java.time.Duration.ofMinutes(30), false),
            config.github(),
            config.outbound());
    web = WebFixture.start(site, config);
  }

  @AfterAll
  static void stop() {
    web.close();
    internal.close();
  }

  static Stream<Arguments> vectors() {
    int port = internal.port();
    String unusual = "is an IPv4 address in a short, octal, hex or single-number form";
    return Stream.of(
        Arguments.of(
            "http://127.0.0.1:" + port + "/",
            "127.0.0.1, which lies in the loopback range 127.0.0.0/8"),
        Arguments.of("http://2130706433:" + port + "/", "the host '2130706433' " + unusual),
        Arguments.of("http://127.1:" + port + "/", "the host '127.1' " + unusual),
        Arguments.of("http://0x7f000001:" + port + "/", "the host '0x7f000001' " + unusual),
        Arguments.of("http://0177.0.0.1:" + port + "/", "the host '0177.0.0.1' " + unusual),
        Arguments.of("http://127.0.0.1.:" + port + "/", "the host '127.0.0.1.' " + unusual),
        Arguments.of(
            "http://[::1]:" + port + "/", "::1, which lies in the IPv6 loopback address ::1/128"),
        Arguments.of(
            "http://[::ffff:127.0.0.1]:" + port + "/",
            "'::ffff:127.0.0.1' resolves to 127.0.0.1, which lies in the loopback range"),
        Arguments.of(
            "http://[::ffff:7f00:1]:" + port + "/",
            "'::ffff:7f00:1' resolves to 127.0.0.1, which lies in the loopback range"),
        Arguments.of(
            "http://[64:ff9b::7f00:1]:" + port + "/",
            "64:ff9b::7f00:1, which lies in the loopback range 127.0.0.0/8, inside an IPv6 address"
                + " that carries an IPv4 one"),
        Arguments.of(
            "http://[2002:7f00:1::]:" + port + "/",
            "2002:7f00:1::, which lies in the loopback range 127.0.0.0/8, inside an IPv6 address"),
        Arguments.of(
            "http://169.254.169.254/latest/meta-data/iam/",
            "169.254.169.254, which is a cloud metadata address; it is never fetched"),
        Arguments.of(
            "http://[64:ff9b::a9fe:a9fe]/",
            "64:ff9b::a9fe:a9fe, which is a cloud metadata address"),
        Arguments.of(
            "http://100.100.100.200/", "100.100.100.200, which is a cloud metadata address"),
        Arguments.of("http://10.0.0.5/", "10.0.0.5, which lies in a private range 10.0.0.0/8"),
        Arguments.of(
            "http://192.168.1.1/", "192.168.1.1, which lies in a private range 192.168.0.0/16"),
        Arguments.of("http://100.64.0.1/", "the carrier-grade NAT range 100.64.0.0/10"),
        Arguments.of("http://0.0.0.0:" + port + "/", "0.0.0.0, which lies in the unspecified"),
        Arguments.of(
            "http://[fd00::1]/", "fd00::1, which lies in the IPv6 unique-local range fc00::/7"),
        Arguments.of(
            "http://[fe80::1]/", "fe80::1, which lies in the IPv6 link-local range fe80::/10"),
        Arguments.of(
            "http://intranet.example/",
            "'intranet.example' resolves to 10.0.0.5, which lies in a private range 10.0.0.0/8"),
        Arguments.of(
            "http://mixed.example/",
            "'mixed.example' resolves to 10.1.1.1, which lies in a private"),
        Arguments.of("http://localhost:" + port + "/", "'localhost' resolves to "),
        Arguments.of(
            "file:///etc/passwd",
            "only http and https URLs are fetched, and 'file:///etc/passwd' is a file URL"),
        Arguments.of("gopher://127.0.0.1:" + port + "/", "is a gopher URL"),
        Arguments.of(
            "http://allowed.example@127.0.0.1:" + port + "/",
            "holds a user name or password before '@'"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("vectors")
  void anInternalTargetIsRefusedWithAnErrorThatNamesIt(String url, String expected) {
    ToolResult result = web.browse(url);

    assertThat(result).isInstanceOf(ToolResult.Failure.class);
    assertThat(((ToolResult.Failure) result).error().code()).isEqualTo(ErrorCode.INVALID_ARGUMENTS);
    assertThat(result.text()).startsWith("web_browse ").contains(expected);
    assertThat(internal.takeRequests()).isEmpty();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("vectors")
  void anInternalTargetBehindARedirectFromAnAllowedSiteIsRefusedAsWell(
      String url, String expected) {
    String path = "/hop" + HOP.incrementAndGet();
    web.site.page(path, FakeSite.Page.redirect(url));

    ToolResult result = web.browse(web.site.url() + path);

    assertThat(result).isInstanceOf(ToolResult.Failure.class);
    assertThat(((ToolResult.Failure) result).error().code()).isEqualTo(ErrorCode.INVALID_ARGUMENTS);
    assertThat(result.text()).contains(expected);
    assertThat(internal.takeRequests()).isEmpty();
  }

  @Test
  void theAllowedSiteIsFetched() {
    assertThat(web.browse(web.site.url() + "/").text()).isEqualTo("public page");
  }

  @Test
  void aRedirectChainLongerThanFiveIsCut() {
    for (int i = 0; i < 7; i++) {
      web.site.page("/loop" + i, FakeSite.Page.redirect("/loop" + (i + 1)));
    }
    web.site.page("/loop7", FakeSite.Page.ok("text/plain", "the end"));

    ToolResult result = web.browse(web.site.url() + "/loop0");

    assertThat(result.text())
        .isEqualTo(
            "web_browse refused to fetch it: '"
                + web.site.url()
                + "/loop0' redirected more than 5 times (the last to '/loop6'); no more are"
                + " followed.");
    web.site.page("/five0", FakeSite.Page.redirect("/loop3"));
    assertThat(web.browse(web.site.url() + "/five0").text()).isEqualTo("the end");
  }
}
