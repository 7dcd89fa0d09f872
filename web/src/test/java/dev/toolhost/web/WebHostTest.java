package dev.toolhost.web;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSpec;
import dev.toolhost.core.spi.ConfigException;
import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.host.HostConfig;
import dev.toolhost.memory.WorkingMemoryExtension;
import dev.toolhost.testing.FakeSite;
import dev.toolhost.testing.TestHost;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The {@code web:} section: a host without it has no web tool; with it, web_browse reaches what the
 * allow-list opens and nothing internal; web_search appears with a provider; a wrong section is
 * refused with its place.
 */
class WebHostTest {

  private static final List<HostExtension<?>> EXTENSIONS =
      List.of(new WorkingMemoryExtension(), new WebExtension());

  private static HostConfig parse(String yaml) {
    return TestHost.config(yaml, EXTENSIONS, Path.of(""));
  }

  private static TestHost host(String yaml) {
    return TestHost.start(yaml, EXTENSIONS);
  }

  private static ToolResult call(TestHost host, String tool, String arguments) {
    return host.runtime()
        .dispatcher()
        .dispatch(host.runtime().toolSet("main"), ToolCall.of(tool, arguments).withSessionId("s1"));
  }

  @Test
  void aHostWithoutAWebSectionHasNoWebToolAndNoOutboundClient() {
    try (TestHost host = host("")) {
      assertThat(host.runtime().registry().specs())
          .extracting(ToolSpec::source)
          .doesNotContain("builtin:web");
      assertThat(host.runtime().service(OutboundHttp.class)).isEmpty();
    }
  }

  @Test
  void webBrowseReachesWhatTheAllowListOpensAndNothingInternal() {
    try (FakeSite site =
            FakeSite.start()
                .page("/", FakeSite.Page.ok("text/html", "<title>Allowed</title><p>Hello.</p>"));
        FakeSite internal =
            FakeSite.on("127.0.0.1").page("/", FakeSite.Page.ok("text/plain", "x"));
        TestHost host =
            host(
                "web:\n"
                    + "  outbound:\n"
                    + "    allow: [127.0.0.2/32]\n"
                    + "  browse: {robots: false}\n")) {
      assertThat(host.runtime().registry().specs())
          .filteredOn(spec -> spec.source().equals("builtin:web"))
          .extracting(ToolSpec::name)
          .containsExactly("web_browse");

      assertThat(call(host, "web_browse", "{\"url\": \"" + site.url() + "/\"}").text())
          .isEqualTo("# Allowed\n\nHello.");
      assertThat(call(host, "web_browse", "{\"url\": \"" + internal.url() + "/\"}").text())
          .isEqualTo(
              "web_browse refused to fetch it: 127.0.0.1, which lies in the loopback range"
                  + " 127.0.0.0/8; internal addresses are refused unless the config's"
                  + " web.outbound.allow opens them.");
      assertThat(internal.takeRequests()).isEmpty();
      assertThat(host.runtime().service(OutboundHttp.class)).isPresent();
    }
  }

  @Test
  void aSearchProviderAddsWebSearchAndItsGuide() {
    try (TestHost host =
        host("web:\n" + "  search: {provider: searxng, url: 'http://127.0.0.2:9', count: 3}\n")) {
      assertThat(host.runtime().registry().specs())
          .filteredOn(spec -> spec.source().equals("builtin:web"))
          .extracting(ToolSpec::name)
          .containsExactlyInAnyOrder("web_browse", "web_search");
      assertThat(host.runtime().guides()).isPresent();
      assertThat(host.runtime().guides().get().all())
          .extracting(g -> g.name())
          .contains("web-tools");
    }
  }

  @Test
  void aWrongSectionIsRefusedWithEachPlace() {
    assertThatThrownBy(
            () ->
                parse(
                    "web:\n"
                        + "  search: {provider: bing}\n"
                        + "  outbound:\n"
                        + "    allow: [10.0.0.0/33, 'not a host']\n"
                        + "    timeout: soon\n"
                        + "  github: {token_env: 'ghp_abc-123'}\n"))
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            "toolhost.yaml line 2, column 22: 'web.search.provider' is 'bing' (expected one of: brave,"
                + " searxng)\n"
                + "toolhost.yaml line 6, column 23: 'web.github.token_env' is 'ghp_abc-123' (expected"
                + " the name of an environment variable, such as BRAVE_API_KEY; the key itself"
                + " never goes in the config)\n"
                + "toolhost.yaml line 4, column 13: 'web.outbound.allow[0]': '10.0.0.0/33' has a prefix"
                + " length that is not 0 to 32 (such as 10.0.0.0/8 or fd00::/8)\n"
                + "toolhost.yaml line 4, column 26: 'web.outbound.allow[1]' is 'not a host' (expected a"
                + " host name such as wiki.internal or *.corp.example, or an IP address or CIDR"
                + " range such as 10.1.2.0/24)\n"
                + "toolhost.yaml line 5, column 14: 'web.outbound.timeout' is 'soon' (expected a"
                + " positive duration, such as 30s, 5m or 1h)");
  }

  @Test
  void aTypoKeyNamesTheNearestOne() {
    assertThatThrownBy(() -> parse("web:\n  browse: {robot: false}\n"))
        .isInstanceOf(ConfigException.class)
        .hasMessageStartingWith(
            "toolhost.yaml line 2, column 12: unknown key 'robot' under 'web.browse' (did you mean"
                + " 'robots'?");
  }
}
