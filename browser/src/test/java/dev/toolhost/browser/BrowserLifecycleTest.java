package dev.toolhost.browser;

import static dev.toolhost.browser.BrowserFixture.ok;
import static dev.toolhost.browser.BrowserFixture.ref;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.toolhost.core.ToolResult;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A browser's life: no Chromium process and no profile directory outlive a close, a host's shutdown
 * mid-session, an idle timeout or an eviction; and a typed secret appears in no output and no log
 * line.
 */
class BrowserLifecycleTest {

  private static final String SECRET = "hunter2-Zq9-x7";

  @TempDir Path root;

  private static List<Path> left(Path profiles) throws Exception {
    try (Stream<Path> list = Files.list(profiles)) {
      return list.toList();
    }
  }

  @Test
  void closeLeavesNoProcessAndNoProfile() throws Exception {
    try (BrowserFixture web = new BrowserFixture(root, BrowserFixture.config(), Map.of())) {
      ok(web.call("a", "action", "navigate", "url", web.pages.url("/js")));
      assertThat(BrowserFixture.processesUsing(web.profiles)).hasSizeGreaterThan(1);
      assertThat(left(web.profiles)).hasSize(1);
      ok(web.call("a", "action", "close"));
      assertThat(BrowserFixture.processesUsing(web.profiles)).isEmpty();
      assertThat(left(web.profiles)).isEmpty();
    }
  }

  @Test
  void shutdownMidSessionLeavesNoProcessAndNoProfile() throws Exception {
    BrowserFixture web = new BrowserFixture(root, BrowserFixture.config(), Map.of());
    try {
      ok(web.call("a", "action", "navigate", "url", web.pages.url("/form")));
      ok(web.call("b", "action", "tab_open", "url", web.pages.url("/js")));
      // A call still waiting on a page that never loads when the host goes.
      Thread pending =
          Thread.ofVirtual()
              .start(() -> web.call("a", "action", "navigate", "url", web.pages.url("/slow")));
      // The page's image is asked for and never answered: the call is waiting on it.
      await().atMost(Duration.ofSeconds(10)).until(() -> web.pages.requests.contains("/never"));
      web.browsers.close();
      pending.join(Duration.ofSeconds(20));
      assertThat(pending.isAlive()).isFalse();
    } finally {
      web.close();
    }
    assertThat(BrowserFixture.processesUsing(web.profiles)).isEmpty();
    assertThat(left(web.profiles)).isEmpty();
    assertThat(web.call("c", "action", "snapshot").text()).contains("shutting down");
  }

  @Test
  void anIdleBrowserIsClosed() throws Exception {
    BrowserConfig config = BrowserFixture.config(4, Duration.ofSeconds(1));
    try (BrowserFixture web = new BrowserFixture(root, config, Map.of())) {
      ok(web.call("a", "action", "navigate", "url", web.pages.url("/form")));
      await()
          .atMost(Duration.ofSeconds(15))
          .untilAsserted(
              () -> {
                assertThat(web.browsers.open()).isZero();
                assertThat(BrowserFixture.processesUsing(web.profiles)).isEmpty();
                assertThat(left(web.profiles)).isEmpty();
              });
      // The next action starts a fresh browser.
      ok(web.call("a", "action", "navigate", "url", web.pages.url("/form")));
      assertThat(web.launches.get()).isEqualTo(2);
    }
  }

  @Test
  void theOldestIdleBrowserMakesRoomForANewOne() throws Exception {
    BrowserConfig config = BrowserFixture.config(2, BrowserConfig.defaults().idleTimeout());
    try (BrowserFixture web = new BrowserFixture(root, config, Map.of())) {
      ok(web.call("first", "action", "navigate", "url", web.pages.url("/form")));
      ok(web.call("second", "action", "navigate", "url", web.pages.url("/form")));
      ok(web.call("first", "action", "snapshot"));
      ok(web.call("third", "action", "navigate", "url", web.pages.url("/form")));
      assertThat(web.browsers.open()).isEqualTo(2);
      assertThat(left(web.profiles)).hasSize(2);
      // "second" was the oldest idle one: its tab is gone, "first" kept its page.
      assertThat(web.call("first", "action", "tab_list").text()).contains("'Sign up'");
      assertThat(web.call("second", "action", "tab_list").text()).doesNotContain("Sign up");
      assertThat(web.launches.get()).isEqualTo(4);
    }
  }

  @Test
  void aTypedSecretAppearsInNoOutputAndNoLogLine() throws Exception {
    PrintStream original = System.err;
    ByteArrayOutputStream log = new ByteArrayOutputStream();
    System.setErr(new PrintStream(log, true, StandardCharsets.UTF_8));
    StringBuilder outputs = new StringBuilder();
    try (BrowserFixture web =
        new BrowserFixture(root, BrowserFixture.config(), Map.of("SITE_PASSWORD", SECRET))) {
      ok(web.call("a", "action", "navigate", "url", web.pages.url("/form")));
      ToolResult snapshot = web.call("a", "action", "snapshot");
      ToolResult typed =
          web.call(
              "a",
              "action",
              "type",
              "ref",
              ref(snapshot, "textbox \"Password\""),
              "secret",
              "SITE_PASSWORD");
      ok(typed);
      outputs.append(typed.text());
      assertThat(typed.text()).contains("the secret SITE_PASSWORD");
      ToolResult after = web.call("a", "action", "snapshot");
      outputs.append(after.text());
      // The field holds it, and the snapshot shows its name in its place.
      assertThat(after.text()).contains("textbox \"Password\" value=\"[secret SITE_PASSWORD]\"");
      ToolResult sent = web.call("a", "action", "click", "ref", ref(after, "button \"Send\""));
      outputs.append(sent.text());
      for (String action : List.of("snapshot", "content", "tab_list", "screenshot")) {
        ToolResult result = web.call("a", "action", action);
        ok(result);
        outputs.append(result.text());
        if (result instanceof ToolResult.Success success) {
          outputs.append(success.structured().map(Object::toString).orElse(""));
          // A screenshot's pixels could show the secret: no image goes to the model.
          assertThat(success.images()).isEmpty();
        }
      }
      assertThat(outputs.toString()).contains("pw=[secret SITE_PASSWORD]");
      // The page got it: the secret was typed, not its name.
      assertThat(web.pages.requests).contains("/result");
    } finally {
      System.setErr(original);
    }
    assertThat(outputs.toString()).doesNotContain(SECRET);
    assertThat(log.toString(StandardCharsets.UTF_8)).doesNotContain(SECRET);
  }
}
