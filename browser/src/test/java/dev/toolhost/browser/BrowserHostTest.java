package dev.toolhost.browser;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSpec;
import dev.toolhost.core.spi.ConfigException;
import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.memory.WorkingMemoryExtension;
import dev.toolhost.testing.FakeSite;
import dev.toolhost.testing.TestHost;
import dev.toolhost.web.WebExtension;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
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
class BrowserHostTest {

  private static final List<HostExtension<?>> EXTENSIONS =
      List.of(new WorkingMemoryExtension(), new WebExtension(), new BrowserExtension());

  @TempDir Path dir;

  private String section() {
    return "browser: {profile_dir: '"
        + dir.resolve("profiles")
        + "', screenshot_dir: '"
        + dir.resolve("shots")
        + "'}\n";
  }

  private static TestHost host(String yaml) {
    return TestHost.start(yaml, EXTENSIONS);
  }

  private static List<String> toolNames(TestHost host) {
    return host.runtime().registry().specs().stream().map(ToolSpec::name).toList();
  }

  @Test
  void aHostWithoutTheSectionHasNoBrowser() {
    try (TestHost host = host("web: {}\n")) {
      assertThat(toolNames(host)).doesNotContain("browser");
    }
  }

  @Test
  void enabledFalseKeepsTheSectionButRegistersNoTool() {
    try (TestHost host = host("web: {}\nbrowser: {enabled: false}\n")) {
      assertThat(toolNames(host)).doesNotContain("browser");
    }
  }

  @Test
  void theSectionWithoutAWebSectionIsRefusedWithTheReason() {
    // The host does not start; the extensions started before the browser's are closed again.
    assertThatThrownBy(() -> host(section()))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("'browser' needs a 'web' section")
        .hasMessageContaining("outbound.allow");
  }

  @Test
  void aMistypedKeyIsRefusedWithItsLine() {
    assertThatThrownBy(() -> host("web: {}\nbrowser:\n  max_browser: 2\n"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining(TestHost.FILE_NAME + " line 3, column 3")
        .hasMessageContaining("did you mean 'max_browsers'");
    assertThatThrownBy(() -> host("web: {}\nbrowser:\n  secrets: ['not a name']\n"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("'browser.secrets[0]' is 'not a name'");
  }

  @Test
  void theToolBrowsesWhatTheWebSectionOpensAndNothingElse() throws Exception {
    try (FakeSite site =
            FakeSite.on("127.0.0.4")
                .page(
                    "/", FakeSite.Page.ok("text/html", "<title>Open</title><a href='/x'>Go</a>"));
        TestHost host = host("web: {outbound: {allow: ['127.0.0.4/32']}}\n" + section())) {
      ToolSpec spec =
          host.runtime().registry().specs().stream()
              .filter(s -> s.name().equals("browser"))
              .findFirst()
              .orElseThrow();
      assertThat(spec.source()).isEqualTo("builtin:browser");
      assertThat(host.runtime().guides().orElseThrow().all())
          .anyMatch(g -> g.name().equals("browser"));
      ToolResult opened = browse(host, "{\"action\":\"navigate\",\"url\":\"" + site.url() + "/\"}");
      assertThat(opened.isError()).as(opened.text()).isFalse();
      ToolResult refused =
          browse(host, "{\"action\":\"navigate\",\"url\":\"http://127.0.0.2:9/\"}");
      assertThat(refused.text()).contains("will not open it", "127.0.0.2");
    }
    try (Stream<Path> left = Files.list(dir.resolve("profiles"))) {
      assertThat(left.toList()).isEmpty();
    }
  }

  private static ToolResult browse(TestHost host, String arguments) {
    return host.runtime()
        .dispatcher()
        .dispatch(
            host.runtime().toolSet("main"), ToolCall.of("browser", arguments).withSessionId("h"));
  }
}
