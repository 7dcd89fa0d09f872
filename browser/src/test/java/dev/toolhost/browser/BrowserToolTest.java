package dev.toolhost.browser;

import static dev.toolhost.browser.BrowserFixture.ok;
import static dev.toolhost.browser.BrowserFixture.ref;
import static dev.toolhost.browser.BrowserFixture.session;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ToolResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * The browser tool against the real Chromium and local pages: every action, and every error, as the
 * model sees them.
 */
class BrowserToolTest {

  @TempDir static Path root;
  private static BrowserFixture web;

  @BeforeAll
  static void start() throws Exception {
    web = new BrowserFixture(root, BrowserFixture.config(), Map.of());
  }

  @AfterAll
  static void stop() {
    web.close();
  }

  private static ToolResult.Failure failed(ToolResult result, ErrorCode code) {
    assertThat(result).as(result.text()).isInstanceOf(ToolResult.Failure.class);
    ToolResult.Failure failure = (ToolResult.Failure) result;
    assertThat(failure.error().code()).as(result.text()).isEqualTo(code);
    return failure;
  }

  @Test
  void aFormIsFilledCheckedSubmittedAndItsResultRead() {
    String s = session();
    assertThat(ok(web.call(s, "action", "navigate", "url", web.pages.url("/form"))).text())
        .contains("'Sign up'", "tab 1");
    ToolResult first = ok(web.call(s, "action", "snapshot"));
    assertThat(first.text())
        .contains("textbox \"Name\"", "checkbox \"I agree\" checked=false", "button \"Send\"")
        .contains("Page text:", "Sign up");
    ok(
        web.call(
            s, "action", "type", "ref", ref(first, "textbox \"Name\""), "text", "Ada Lovelace"));
    ok(web.call(s, "action", "click", "ref", ref(first, "checkbox \"I agree\"")));
    ToolResult second = ok(web.call(s, "action", "snapshot"));
    assertThat(second.text()).contains("textbox \"Name\" value=\"Ada Lovelace\"", "checked=true");
    assertThat(ok(web.call(s, "action", "click", "ref", ref(second, "button \"Send\""))).text())
        .contains("'Result'");
    assertThat(ok(web.call(s, "action", "content")).text())
        .contains("# Thanks", "name=Ada Lovelace", "agree=on");
  }

  @Test
  void enterSubmitsTheFormFromItsField() {
    String s = session();
    ok(web.call(s, "action", "navigate", "url", web.pages.url("/form")));
    ToolResult snapshot = ok(web.call(s, "action", "snapshot"));
    ok(web.call(s, "action", "type", "ref", ref(snapshot, "textbox \"Name\""), "text", "Grace"));
    assertThat(ok(web.call(s, "action", "press_key", "key", "Enter")).text()).contains("'Result'");
    assertThat(ok(web.call(s, "action", "content")).text()).contains("name=Grace", "agree=off");
  }

  @Test
  void aPageBuiltByScriptIsSeenAndItsButtonWorks() {
    String s = session();
    ok(web.call(s, "action", "navigate", "url", web.pages.url("/js")));
    ToolResult snapshot = ok(web.call(s, "action", "snapshot"));
    assertThat(snapshot.text()).contains("button \"Dynamic button\"", "Built by script");
    ok(web.call(s, "action", "click", "ref", ref(snapshot, "Dynamic button")));
    assertThat(ok(web.call(s, "action", "snapshot")).text()).contains("'Clicked'", "Was clicked");
  }

  @Test
  void threeHundredButtonsAreCappedAndTheCapIsSaid() {
    String s = session();
    ok(web.call(s, "action", "navigate", "url", web.pages.url("/buttons")));
    ToolResult snapshot = ok(web.call(s, "action", "snapshot"));
    String n = ref(snapshot, "\"Button 1\"").split("-")[0];
    assertThat(snapshot.text())
        .contains("300 interactive elements, the first 200 numbered; 100 more left out")
        .contains("[" + n + "-200] button \"Button 200\"")
        .doesNotContain("\"Button 201\"");
    assertThat(
            failed(web.call(s, "action", "click", "ref", n + "-201"), ErrorCode.INVALID_ARGUMENTS)
                .text())
        .contains("out of range", "refs " + n + "-1 to " + n + "-200");
    assertThat(
            failed(web.call(s, "action", "click", "ref", n + "-0"), ErrorCode.INVALID_ARGUMENTS)
                .text())
        .contains("out of range");
    assertThat(
            failed(web.call(s, "action", "click", "ref", "twelve"), ErrorCode.INVALID_ARGUMENTS)
                .text())
        .contains("is not a ref");
  }

  @Test
  void refsFromAnOlderSnapshotOrPageAreRefused() {
    String s = session();
    ok(web.call(s, "action", "navigate", "url", web.pages.url("/form")));
    assertThat(
            failed(web.call(s, "action", "click", "ref", "1-1"), ErrorCode.INVALID_ARGUMENTS)
                .text())
        .contains("no snapshot was taken yet");
    ToolResult first = ok(web.call(s, "action", "snapshot"));
    String old = ref(first, "button \"Send\"");
    ok(web.call(s, "action", "snapshot"));
    assertThat(
            failed(web.call(s, "action", "click", "ref", old), ErrorCode.INVALID_ARGUMENTS).text())
        .contains("is from snapshot", "take a new snapshot");
    ToolResult third = ok(web.call(s, "action", "snapshot"));
    ok(web.call(s, "action", "navigate", "url", web.pages.url("/js")));
    assertThat(
            failed(
                    web.call(s, "action", "click", "ref", ref(third, "button \"Send\"")),
                    ErrorCode.INVALID_ARGUMENTS)
                .text())
        .contains("is stale", "it navigated", "Take a new snapshot");
  }

  @Test
  void aPageThatNeverFinishesLoadingTimesOutAndWhatLoadedCanBeRead() {
    String s = session();
    ToolResult result = web.call(s, "action", "navigate", "url", web.pages.url("/slow"));
    assertThat(failed(result, ErrorCode.TIMEOUT).text())
        .contains("did not finish loading within 4s", "loading was stopped");
    assertThat(ok(web.call(s, "action", "content")).text()).contains("Partly here");
  }

  @Test
  void aRedirectToARefusedAddressIsRefusedAndNeverReachesIt() {
    String s = session();
    web.internal.requests.clear();
    ToolResult result = web.call(s, "action", "navigate", "url", web.pages.url("/redirect"));
    assertThat(failed(result, ErrorCode.INVALID_ARGUMENTS).text())
        .contains("was refused", "127.0.0.1", "loopback");
    assertThat(web.internal.requests).isEmpty();
  }

  @Test
  void partsOfAPageOnRefusedAddressesFailWhileThePageLoads() {
    String s = session();
    web.internal.requests.clear();
    assertThat(ok(web.call(s, "action", "navigate", "url", web.pages.url("/parts"))).text())
        .contains("'Parts'", "were refused", "127.0.0.1");
    assertThat(ok(web.call(s, "action", "content")).text()).contains("Outer page");
    assertThat(web.internal.requests).isEmpty();
  }

  @Test
  void aPageScriptsWebSocketIsRefusedAndNeverReachesARefusedAddress() throws Exception {
    String s = session();
    web.internal.requests.clear();
    ok(web.call(s, "action", "navigate", "url", web.pages.url("/socket")));
    // The page says how its socket ended: refused by the in-page stub, or failed on its way out.
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () -> ok(web.call(s, "action", "content")).text(),
            content -> content.contains("refused") || content.contains("failed"));
    assertThat(ok(web.call(s, "action", "content")).text()).doesNotContain("open");
    assertThat(web.internal.requests).isEmpty();
  }

  @Test
  void urlsTheWebChecksRefuseAreRefusedBeforeAnyBrowserStarts() {
    String s = session();
    int before = web.launches.get();
    for (String url :
        List.of(
            web.internal.url("/"),
            "http://169.254.169.254/latest/meta-data/",
            "http://[::1]:9/",
            "http://2130706433/",
            "file:///etc/passwd",
            "javascript:alert(1)",
            "chrome://version",
            "data:text/html,<h1>x</h1>")) {
      ToolResult result = web.call(s, "action", "navigate", "url", url);
      assertThat(failed(result, ErrorCode.INVALID_ARGUMENTS).text())
          .as(url)
          .contains("The browser will not open it");
    }
    assertThat(
            failed(
                    web.call(s, "action", "tab_open", "url", "ftp://x.example/"),
                    ErrorCode.INVALID_ARGUMENTS)
                .text())
        .contains("only http and https");
    assertThat(web.launches.get()).isEqualTo(before);
    assertThat(web.internal.requests).isEmpty();
  }

  @Test
  void aScreenshotIsARealPngInTheConfiguredDirectory() throws Exception {
    String s = session();
    ok(web.call(s, "action", "navigate", "url", web.pages.url("/buttons")));
    ToolResult shot = ok(web.call(s, "action", "screenshot"));
    JsonNode meta = ((ToolResult.Success) shot).structured().orElseThrow();
    Path file = Path.of(meta.path("path").asString());
    assertThat(file.getParent()).isEqualTo(web.screenshots.toAbsolutePath().normalize());
    byte[] png = Files.readAllBytes(file);
    // The same PNG goes to MCP clients as image content.
    assertThat(((ToolResult.Success) shot).images())
        .singleElement()
        .satisfies(
            image -> {
              assertThat(image.mimeType()).isEqualTo("image/png");
              assertThat(java.util.Base64.getDecoder().decode(image.data())).isEqualTo(png);
            });
    assertThat(png).startsWith(0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n');
    assertThat(meta.path("width").asInt()).isPositive();
    int viewport = meta.path("height").asInt();
    JsonNode full =
        ((ToolResult.Success) ok(web.call(s, "action", "screenshot", "full_page", true)))
            .structured()
            .orElseThrow();
    assertThat(full.path("height").asInt()).isGreaterThan(viewport);
    assertThat(Files.readAllBytes(Path.of(full.path("path").asString()))).startsWith(0x89, 'P');
  }

  @Test
  void tabsOpenListFocusAndClose() {
    String s = session();
    ok(web.call(s, "action", "navigate", "url", web.pages.url("/form")));
    assertThat(ok(web.call(s, "action", "tab_open", "url", web.pages.url("/js"))).text())
        .contains("'Built'", "tab 2");
    assertThat(ok(web.call(s, "action", "tab_list")).text())
        .contains("Tab 1: 'Sign up'", "Tab 2 (current): 'Built'");
    assertThat(ok(web.call(s, "action", "tab_focus", "tab", 1)).text())
        .contains("Tab 1 is current");
    assertThat(ok(web.call(s, "action", "snapshot")).text()).contains("button \"Send\"");
    assertThat(ok(web.call(s, "action", "tab_close", "tab", 2)).text())
        .contains("Closed tab 2", "Tab 1 is current");
    assertThat(
            failed(web.call(s, "action", "tab_focus", "tab", 2), ErrorCode.INVALID_ARGUMENTS)
                .text())
        .contains("there is no tab 2", "[1]");
    assertThat(failed(web.call(s, "action", "tab_close"), ErrorCode.INVALID_ARGUMENTS).text())
        .contains("needs 'tab'");
  }

  @Test
  void aLinkThatOpensAWindowAddsATab() {
    String s = session();
    ok(web.call(s, "action", "navigate", "url", web.pages.url("/popup")));
    ToolResult snapshot = ok(web.call(s, "action", "snapshot"));
    ok(web.call(s, "action", "click", "ref", ref(snapshot, "link \"Open built page\"")));
    org.awaitility.Awaitility.await()
        .atMost(java.time.Duration.ofSeconds(10))
        .untilAsserted(
            () ->
                assertThat(ok(web.call(s, "action", "tab_list")).text())
                    .contains("Tab 2: 'Built'"));
  }

  @Test
  void scrollMovesTheView() {
    String s = session();
    ok(web.call(s, "action", "navigate", "url", web.pages.url("/buttons")));
    assertThat(ok(web.call(s, "action", "scroll")).text())
        .containsPattern("Scrolled down: the view shows [1-9]");
    assertThat(ok(web.call(s, "action", "scroll", "direction", "up")).text())
        .contains("Scrolled up: the view shows 0 to");
  }

  @Test
  void longContentIsChunkedIntoWorkingMemory() {
    String s = session();
    ok(web.call(s, "action", "navigate", "url", web.pages.url("/long")));
    String index = ok(web.call(s, "action", "content")).text();
    assertThat(index).contains("get_from_working_memory", "browser-tab1", "Section 1");
    assertThat(web.memory.toString()).isNotNull();
  }

  @Test
  void evaluateIsRefusedWhenTheConfigLeavesItOff() {
    String s = session();
    int before = web.launches.get();
    assertThat(
            failed(
                    web.call(s, "action", "evaluate", "script", "1 + 1"),
                    ErrorCode.INVALID_ARGUMENTS)
                .text())
        .contains("evaluate is turned off");
    assertThat(web.launches.get()).isEqualTo(before);
  }

  @Test
  void badArgumentsAreNamed() {
    String s = session();
    ok(web.call(s, "action", "navigate", "url", web.pages.url("/form")));
    ToolResult snapshot = ok(web.call(s, "action", "snapshot"));
    String name = ref(snapshot, "textbox \"Name\"");
    assertThat(failed(web.call(s, "action", "click"), ErrorCode.INVALID_ARGUMENTS).text())
        .contains("click needs 'ref'");
    assertThat(
            failed(web.call(s, "action", "type", "ref", name), ErrorCode.INVALID_ARGUMENTS).text())
        .contains("exactly one of 'text'");
    assertThat(
            failed(
                    web.call(
                        s, "action", "type", "ref", name, "text", "a", "secret", "SITE_PASSWORD"),
                    ErrorCode.INVALID_ARGUMENTS)
                .text())
        .contains("exactly one of 'text'");
    assertThat(
            failed(web.call(s, "action", "press_key", "key", "Hyper"), ErrorCode.INVALID_ARGUMENTS)
                .text())
        .contains("key 'Hyper' is not one press_key knows", "Enter");
    assertThat(failed(web.call(s, "action", "navigate"), ErrorCode.INVALID_ARGUMENTS).text())
        .contains("navigate needs 'url'");
    assertThat(failed(web.call(s, "action", "fly"), ErrorCode.INVALID_ARGUMENTS).text())
        .contains("action", "navigate", "tab_close");
    assertThat(
            failed(
                    web.call(
                        s,
                        "action",
                        "type",
                        "ref",
                        ref(snapshot, "button \"Send\""),
                        "secret",
                        "OTHER"),
                    ErrorCode.INVALID_ARGUMENTS)
                .text())
        .contains("secret 'OTHER' is not configured", "SITE_PASSWORD");
    assertThat(
            failed(
                    web.call(s, "action", "type", "ref", name, "secret", "SITE_PASSWORD"),
                    ErrorCode.UNAVAILABLE)
                .text())
        .contains("not set in the host's environment");
  }

  @Test
  void closeEndsTheBrowserAndDeletesItsProfile() {
    String s = session();
    ok(web.call(s, "action", "navigate", "url", web.pages.url("/form")));
    assertThat(BrowserFixture.processesUsing(web.profiles)).isNotEmpty();
    assertThat(ok(web.call(s, "action", "close")).text()).contains("The browser is closed");
    // Other tests' browsers share the profiles directory: this session's is the one gone.
    assertThat(ok(web.call(s, "action", "close")).text()).contains("No browser was open");
  }
}
