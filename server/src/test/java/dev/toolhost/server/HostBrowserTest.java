package dev.toolhost.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSpec;
import dev.toolhost.core.spi.ConfigException;
import dev.toolhost.host.HostConfig;
import dev.toolhost.testing.FakeSite;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The browser extension in a real host: off without its section or with {@code enabled: false},
 * refused without a {@code web:} section or with a mistyped key, and with both sections a {@code
 * builtin:browser} tool whose pages pass the web section's checks.
 */
@Timeout(120)
class HostBrowserTest {

  @TempDir Path dir;

  private String section() {
    return "browser: {profile_dir: '"
        + dir.resolve("profiles")
        + "', screenshot_dir: '"
        + dir.resolve("shots")
        + "'}\n";
  }

  @Test
  void aHostWithoutTheSectionHasNoBrowser() throws Exception {
    try (Host host = Host.builder(HostConfig.parse("web: {}\n", "plain.yaml")).build()) {
      host.start();
      assertThat(host.registry().specs()).extracting(ToolSpec::name).doesNotContain("browser");
    }
  }

  @Test
  void enabledFalseKeepsTheSectionButRegistersNoTool() throws Exception {
    try (Host host =
        Host.builder(HostConfig.parse("web: {}\nbrowser: {enabled: false}\n", "off.yaml"))
            .build()) {
      host.start();
      assertThat(host.registry().specs()).extracting(ToolSpec::name).doesNotContain("browser");
    }
  }

  @Test
  void theSectionWithoutAWebSectionIsRefusedWithTheReason() {
    // The host does not start; the extensions started before the browser's are closed again.
    assertThatThrownBy(() -> Host.builder(HostConfig.parse(section(), "noweb.yaml")).build())
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("'browser' needs a 'web' section")
        .hasMessageContaining("outbound.allow");
  }

  @Test
  void aMistypedKeyIsRefusedWithItsLine() {
    assertThatThrownBy(() -> HostConfig.parse("web: {}\nbrowser:\n  max_browser: 2\n", "typo.yaml"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("typo.yaml line 3, column 3")
        .hasMessageContaining("did you mean 'max_browsers'");
    assertThatThrownBy(
            () -> HostConfig.parse("web: {}\nbrowser:\n  secrets: ['not a name']\n", "bad.yaml"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("'browser.secrets[0]' is 'not a name'");
  }

  @Test
  void theToolBrowsesWhatTheWebSectionOpensAndNothingElse() throws Exception {
    try (FakeSite site =
            FakeSite.on("127.0.0.4")
                .page(
                    "/", FakeSite.Page.ok("text/html", "<title>Open</title><a href='/x'>Go</a>"));
        Host host =
            Host.builder(
                    HostConfig.parse(
                        "web: {outbound: {allow: ['127.0.0.4/32']}}\n" + section(), "b.yaml"))
                .build()) {
      host.start();
      ToolSpec spec =
          host.registry().specs().stream()
              .filter(s -> s.name().equals("browser"))
              .findFirst()
              .orElseThrow();
      assertThat(spec.source()).isEqualTo("builtin:browser");
      assertThat(host.guides().orElseThrow().all()).anyMatch(g -> g.name().equals("browser"));
      ToolResult opened =
          host.dispatcher()
              .dispatch(
                  host.toolSet("main"),
                  ToolCall.of(
                          "browser", "{\"action\":\"navigate\",\"url\":\"" + site.url() + "/\"}")
                      .withSessionId("h"));
      assertThat(opened.isError()).as(opened.text()).isFalse();
      ToolResult refused =
          host.dispatcher()
              .dispatch(
                  host.toolSet("main"),
                  ToolCall.of(
                          "browser", "{\"action\":\"navigate\",\"url\":\"http://127.0.0.2:9/\"}")
                      .withSessionId("h"));
      assertThat(refused.text()).contains("will not open it", "127.0.0.2");
    }
    try (Stream<Path> left = Files.list(dir.resolve("profiles"))) {
      assertThat(left.toList()).isEmpty();
    }
  }
}
