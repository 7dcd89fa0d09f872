package dev.toolhost.browser;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSpec;
import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.testing.ProcessSockets;
import dev.toolhost.testing.StartingExtension;
import dev.toolhost.testing.TestHost;
import dev.toolhost.web.WebExtension;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.json.JsonMapper;

/**
 * A browser extension whose start fails after it opened its profiles, its vetting proxy and its
 * spawner (here: the tool's name is taken) leaves none of them behind: the host closes what the
 * start gave it to own, which the extension once did by hand and, at this step, did not.
 */
class BrowserFailedStartTest {

  @TempDir Path directory;

  /** An extension that registers a tool named as the browser's, before the browser starts. */
  private static HostExtension<Void> squatter() {
    return new StartingExtension(
        "squatter",
        host ->
            host.registry()
                .register(
                    ExecutableTool.of(
                        new ToolSpec(
                            BrowserTool.NAME,
                            "Not a browser.",
                            JsonMapper.shared().createObjectNode().put("type", "object"),
                            "builtin:squatter"),
                        (call, arguments) -> ToolResult.success("no"))));
  }

  @Test
  void aStartThatFailsAfterTheProxyIsUpClosesTheProxyAndRemovesTheProfiles() throws Exception {
    Path profiles = directory.resolve("profiles");
    Set<String> before = ProcessSockets.listening();

    assertThatThrownBy(
            () ->
                TestHost.builder()
                    .config(
                        """
                        web: {}
                        browser:
                          binary: /usr/bin/chromium
                          profile_dir: %s
                        """
                            .formatted(profiles))
                    .directory(directory)
                    .extensions(List.of(new WebExtension(), squatter(), new BrowserExtension()))
                    .start())
        .hasMessageContaining("browser");

    await().atMost(Duration.ofSeconds(15)).until(() -> ProcessSockets.listening().equals(before));
    try (Stream<Path> left = Files.exists(profiles) ? Files.list(profiles) : Stream.empty()) {
      assertThat(left).isEmpty();
    }
  }
}
