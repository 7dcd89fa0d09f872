package dev.toolhost.web;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ToolResult;
import dev.toolhost.testing.FakeSite;
import java.net.URI;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class WebSearchTest {

  /** Brave's answer, condensed from a recorded one. */
  private static final String BRAVE =
      """
      {"type":"search","query":{"original":"kotlin coroutines","more_results_available":true},
       "web":{"type":"search","family_friendly":true,"results":[
        {"type":"search_result","subtype":"generic","title":"Coroutines basics | Kotlin Documentation",
         "url":"https://kotlinlang.org/docs/coroutines-basics.html",
         "description":"Kotlin uses coroutines. <strong>A coroutine is a suspendable computation</strong>.",
         "page_age":"2022-11-21T11:31:26","age":"November 21, 2022","language":"en","is_source_local":false,
         "meta_url":{"scheme":"https","netloc":"kotlinlang.org","hostname":"kotlinlang.org"},"extra_snippets":["…"]},
        {"type":"search_result","title":"Guide to [Kotlin] &amp; coroutines","url":"https://example.org/guide (1)",
         "description":"Structured &lt;concurrency&gt; explained."}]},
       "videos":{"type":"videos","results":[],"mutated_by_goggles":false}}
      """;

  private static final String SEARXNG =
      """
      {"query":"kotlin coroutines","number_of_results":0,"results":[
        {"url":"https://kotlinlang.org/docs/coroutines-overview.html","title":"Coroutines | Kotlin",
         "content":"Asynchronous or non-blocking programming is important.","engine":"duckduckgo",
         "score":3.0,"category":"general","publishedDate":null},
        {"url":"https://example.org/a","title":"A","content":"First.","engine":"bing","score":1.0},
        {"url":"https://example.org/b","title":"B","content":"Second.","engine":"bing","score":0.5}],
       "answers":[],"suggestions":[],"infoboxes":[],"unresponsive_engines":[]}
      """;

  private final FakeSite site = FakeSite.start();
  private WebFixture web;

  @AfterEach
  void stop() {
    web.close();
  }

  private void brave(Map<String, String> env) {
    WebConfig config =
        WebFixture.config(site)
            .withSearch(
                new WebConfig.Search(
                    WebConfig.Provider.BRAVE, URI.create(site.url()), "BRAVE_API_KEY", 5));
    web = WebFixture.start(site, config, env);
  }

  /** Brave at the fake site, answering every search with the page; the key in BRAVE_API_KEY. */
  private void braveAnswering(FakeSite.Page answer, String key) {
    site.page("/res/v1/web/search", answer);
    brave(Map.of("BRAVE_API_KEY", key));
  }

  /** SearXNG at the fake site, answering every search with the page. */
  private void searxngAnswering(FakeSite.Page answer) {
    site.page("/search", answer);
    WebConfig config =
        WebFixture.config(site)
            .withSearch(
                new WebConfig.Search(
                    WebConfig.Provider.SEARXNG, URI.create(site.url()), "BRAVE_API_KEY", 2));
    web = WebFixture.start(site, config, Map.of());
  }

  private ToolResult search(Map<String, Object> arguments) {
    return web.call("web_search", arguments, Optional.of("s1"));
  }

  @Test
  void braveResultsComeBackAsTheSeedsNumberedListWithTagsAndEntitiesStripped() {
    braveAnswering(FakeSite.Page.ok("application/json", BRAVE), "BSA-test-key");

    ToolResult result = search(Map.of("query", "kotlin coroutines", "count", 50));

    assertThat(result.text())
        .isEqualTo(
            "1. [Coroutines basics | Kotlin Documentation](https://kotlinlang.org/docs/coroutines-basics.html)\n"
                + "   Kotlin uses coroutines. A coroutine is a suspendable computation.\n"
                + "2. [Guide to \\[Kotlin\\] & coroutines](https://example.org/guide%20%281%29)\n"
                + "   Structured <concurrency> explained.");
    FakeSite.Request request = site.takeRequests().getFirst();
    assertThat(request.uri().getRawQuery()).isEqualTo("q=kotlin+coroutines&count=20");
    assertThat(request.header("X-Subscription-Token")).isEqualTo("BSA-test-key");
    assertThat(request.header("Accept")).isEqualTo("application/json");
  }

  @Test
  void theCountDefaultsToTheConfiguredOneAndZeroIsRefused() {
    braveAnswering(FakeSite.Page.ok("application/json", BRAVE), "BSA-test-key");

    search(Map.of("query", "kotlin"));
    ToolResult zero = search(Map.of("query", "kotlin", "count", 0));

    assertThat(site.takeRequests().getFirst().uri().getRawQuery()).isEqualTo("q=kotlin&count=5");
    assertThat(zero.text()).isEqualTo("count is 0; it must be 1 to 20.");
  }

  @Test
  void aMissingKeyIsItsOwnErrorAndNothingIsSent() {
    brave(Map.of());

    ToolResult result = search(Map.of("query", "kotlin"));

    assertThat(((ToolResult.Failure) result).error().code()).isEqualTo(ErrorCode.UNAVAILABLE);
    assertThat(result.text())
        .isEqualTo(
            "web_search has no Brave Search API key: the environment variable BRAVE_API_KEY is"
                + " not set. Set it to a key from https://api-dashboard.search.brave.com and"
                + " restart the host.");
    assertThat(site.takeRequests()).isEmpty();
  }

  @Test
  void aRefusedKeyNamesBravesOwnErrorAndTheVariable() {
    braveAnswering(
        FakeSite.Page.of(
            422,
            "application/json",
            """
            {"type":"ErrorResponse","error":{"status":422,"code":"SUBSCRIPTION_TOKEN_INVALID",
             "detail":"The provided subscription token is invalid.","meta":{"component":"authentication"}}}
            """),
        "BSA-wrong");

    assertThat(search(Map.of("query", "kotlin")).text())
        .isEqualTo(
            "Brave Search refused the API key in BRAVE_API_KEY (HTTP 422"
                + " SUBSCRIPTION_TOKEN_INVALID: The provided subscription token is invalid.). Check"
                + " the key at https://api-dashboard.search.brave.com.");
  }

  @Test
  void anUnauthorizedAnswerIsAlsoARefusedKey() {
    braveAnswering(FakeSite.Page.of(401, "application/json", "{}"), "BSA-wrong");

    assertThat(search(Map.of("query", "kotlin")).text())
        .isEqualTo(
            "Brave Search refused the API key in BRAVE_API_KEY (HTTP 401). Check the key at"
                + " https://api-dashboard.search.brave.com.");
  }

  @Test
  void aRateLimitIsItsOwnError() {
    braveAnswering(
        FakeSite.Page.of(
            429,
            "application/json",
            "{\"type\":\"ErrorResponse\",\"error\":{\"status\":429,\"code\":\"RATE_LIMITED\","
                + "\"detail\":\"Request rate limit exceeded for plan.\"}}"),
        "BSA-test-key");

    ToolResult result = search(Map.of("query", "kotlin"));

    assertThat(((ToolResult.Failure) result).error().code()).isEqualTo(ErrorCode.UNAVAILABLE);
    assertThat(result.text())
        .isEqualTo(
            "Brave Search's rate limit or monthly quota is spent (HTTP 429 RATE_LIMITED: Request"
                + " rate limit exceeded for plan.). Wait a moment before searching again, or raise"
                + " the plan's limits.");
  }

  @Test
  void anAnswerWithoutWebResultsIsAnErrorAndNotNoResults() {
    braveAnswering(
        FakeSite.Page.ok(
            "application/json", "{\"type\":\"search\",\"query\":{\"original\":\"x\"}}"),
        "BSA-test-key");

    assertThat(search(Map.of("query", "x")).text())
        .isEqualTo(
            "Brave Search answered without a web results section for 'x' (the answer holds: type,"
                + " query).");
  }

  @Test
  void aSearchThatFindsNothingSaysSo() {
    braveAnswering(
        FakeSite.Page.ok("application/json", "{\"type\":\"search\",\"web\":{\"results\":[]}}"),
        "BSA-test-key");

    assertThat(search(Map.of("query", "qwxzv")).text())
        .isEqualTo(
            "Brave Search found no web pages for 'qwxzv'. Try fewer or other words, or check the"
                + " spelling.");
  }

  @Test
  void searxngResultsAreCutToTheCount() {
    searxngAnswering(FakeSite.Page.ok("application/json", SEARXNG));

    ToolResult result = search(Map.of("query", "kotlin coroutines"));

    assertThat(result.text())
        .isEqualTo(
            "1. [Coroutines | Kotlin](https://kotlinlang.org/docs/coroutines-overview.html)\n"
                + "   Asynchronous or non-blocking programming is important.\n"
                + "2. [A](https://example.org/a)\n"
                + "   First.");
    assertThat(site.takeRequests().getFirst().uri().getRawQuery())
        .isEqualTo("q=kotlin+coroutines&format=json");
  }

  @Test
  void searxngWithoutJsonEnabledSaysHowToEnableIt() {
    searxngAnswering(FakeSite.Page.of(403, "text/html", "<h1>403 Forbidden</h1>"));

    assertThat(search(Map.of("query", "kotlin")).text())
        .isEqualTo(
            "SearXNG at "
                + site.url()
                + " refused a JSON search (HTTP 403): add 'json' to search.formats in the"
                + " instance's settings.yml.");
  }

  @Test
  void withoutAProviderThereIsNoWebSearchTool() {
    web = WebFixture.start(site, WebFixture.config(site));

    ToolResult result = search(Map.of("query", "kotlin"));

    assertThat(((ToolResult.Failure) result).error().code()).isEqualTo(ErrorCode.TOOL_NOT_FOUND);
  }
}
