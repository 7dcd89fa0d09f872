package dev.toolhost.web;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ToolResult;
import dev.toolhost.testing.FakeSite;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class WebBrowseTest {

  private static final String PAGE =
      """
      <!doctype html>
      <html><head><title>Kettle care
      </title><style>body { color: red }</style><script>alert('x')</script></head>
      <body>
      <header><a href="/">Home</a> <a href="/shop">Shop</a></header>
      <nav><ul><li><a href="/a">A</a></li></ul></nav>
      <main>
      <h1>Descaling a kettle</h1>
      <p>Fill it with <strong>vinegar</strong> and water; see <a href="tips.html">the tips</a>.</p>
      <h2>Steps</h2>
      <ol><li>Boil.</li><li>Wait an hour.</li></ol>
      <table><tr><th>Water</th><th>Every</th></tr><tr><td>Hard</td><td>month</td></tr></table>
      <img src="/img/kettle.png" alt="A kettle">
      <form action="/subscribe"><input name="email"><button>Subscribe</button></form>
      <div hidden>secret menu</div>
      </main>
      <aside>Related: toasters</aside>
      <footer>© 2026 Kettles Inc.</footer>
      </body></html>
      """;

  private FakeSite site;
  private WebFixture web;

  @BeforeEach
  void start() {
    site = FakeSite.start();
    web = WebFixture.start(site, WebFixture.config(site));
  }

  @AfterEach
  void stop() {
    web.close();
  }

  @Test
  void aPageComesBackAsMarkdownWithItsTitleAndWithoutItsNoise() {
    site.page("/guide/kettle", FakeSite.Page.ok("text/html; charset=utf-8", PAGE));

    String markdown = web.browse(site.url() + "/guide/kettle").text();

    assertThat(markdown)
        .isEqualTo(
            "# Kettle care\n\n"
                + "# Descaling a kettle\n\n"
                + "Fill it with **vinegar** and water; see [the tips]("
                + site.url()
                + "/guide/tips.html).\n\n"
                + "## Steps\n\n"
                + "1. Boil.\n"
                + "2. Wait an hour.\n\n"
                + "| Water | Every |\n"
                + "|-------|-------|\n"
                + "| Hard  | month |\n\n"
                + "![A kettle]("
                + site.url()
                + "/img/kettle.png)");
  }

  @Test
  void robotsTxtThatDisallowsAPathIsHonoured() {
    site.page("/robots.txt", FakeSite.Page.ok("text/plain", "User-agent: *\nDisallow: /private\n"));
    site.page("/private/report", FakeSite.Page.ok("text/plain", "private report"));
    site.page("/public", FakeSite.Page.ok("text/plain", "public report"));

    ToolResult refused = web.browse(site.url() + "/private/report");

    assertThat(refused.text())
        .isEqualTo(
            "The site's robots.txt does not allow automated agents to fetch '"
                + site.url()
                + "/private/report'. Find the information elsewhere (web_search), or ask the"
                + " operator to set web.browse.robots to false if this site may be fetched"
                + " anyway.");
    assertThat(web.browse(site.url() + "/public").text()).isEqualTo("public report");
    assertThat(site.takeRequests())
        .extracting(r -> r.uri().getPath())
        .containsExactly("/robots.txt", "/public");
  }

  @Test
  void robotsTxtIsNotReadWhenTheConfigSaysSo() {
    site.page("/robots.txt", FakeSite.Page.ok("text/plain", "User-agent: *\nDisallow: /\n"));
    site.page("/page", FakeSite.Page.ok("text/plain", "fetched anyway"));
    WebConfig config = WebFixture.config(site);
    config =
        new WebConfig(
            config.search(),
            new WebConfig.Browse(8_000, 4_000, Duration.ofMinutes(30), false),
            config.github(),
            config.outbound());
    try (WebFixture unbound = WebFixture.start(FakeSite.start(), config)) {
      assertThat(unbound.browse(site.url() + "/page").text()).isEqualTo("fetched anyway");
    }
  }

  @Test
  void plainTextAndJsonPassThroughAndOtherTypesAreRefusedByName() {
    site.page("/notes.txt", FakeSite.Page.ok("text/plain; charset=utf-8", "line one\nline two"));
    site.page("/data.json", FakeSite.Page.ok("application/json", "{\"a\": [1, 2]}"));
    site.page("/report.pdf", FakeSite.Page.ok("application/pdf", "%PDF-1.7"));

    assertThat(web.browse(site.url() + "/notes.txt").text()).isEqualTo("line one\nline two");
    assertThat(web.browse(site.url() + "/data.json").text()).isEqualTo("{\"a\": [1, 2]}");
    ToolResult pdf = web.browse(site.url() + "/report.pdf");
    assertThat(((ToolResult.Failure) pdf).error().code()).isEqualTo(ErrorCode.EXECUTION_FAILED);
    assertThat(pdf.text())
        .isEqualTo(
            "'"
                + site.url()
                + "/report.pdf' is application/pdf, which web_browse cannot read: it reads HTML"
                + " pages, plain text and JSON.");
  }

  @Test
  void aMissingPageIsAnErrorWithItsStatus() {
    ToolResult missing = web.browse(site.url() + "/gone");

    assertThat(missing.text())
        .isEqualTo(
            "'" + site.url() + "/gone' answered HTTP 404 (not found); the page could not be read.");
  }

  @Test
  void aBodyOverTheCapIsAnErrorAndNotReadWhole() {
    site.page("/big.txt", FakeSite.Page.ok("text/plain", "x".repeat(5_000)));
    WebConfig config = WebFixture.config(site);
    config = config.withOutbound(config.outbound().withCaps(5, 2_000, Duration.ofSeconds(10)));
    try (WebFixture capped = WebFixture.start(FakeSite.start(), config)) {
      ToolResult result = capped.browse(site.url() + "/big.txt");
      assertThat(((ToolResult.Failure) result).error().code()).isEqualTo(ErrorCode.UNAVAILABLE);
      assertThat(result.text())
          .isEqualTo(
              "the body of '" + site.url() + "/big.txt' is larger than the cap of 2000 bytes.");
    }
  }

  @Test
  void aLongPageComesBackAsAChunkIndexAndEveryChunkReadsBackWithNothingLost() {
    StringBuilder html = new StringBuilder("<html><head><title>Field guide</title></head><body>");
    for (int section = 1; section <= 12; section++) {
      html.append("<h2>Section ").append(section).append("</h2>");
      for (int paragraph = 1; paragraph <= 5; paragraph++) {
        html.append("<p>Paragraph ")
            .append(section)
            .append('.')
            .append(paragraph)
            .append(": ")
            .append("the quick brown fox jumps over the lazy dog. ".repeat(10))
            .append("</p>");
      }
    }
    html.append("</body></html>");
    byte[] body = html.toString().getBytes(StandardCharsets.UTF_8);
    site.page("/field-guide", FakeSite.Page.ok("text/html", html.toString()));
    String whole =
        new PageConverter()
            .convert(
                body,
                Optional.of(StandardCharsets.UTF_8),
                java.net.URI.create(site.url() + "/field-guide"))
            .markdown();
    assertThat(whole.length()).isBetween(28_000, 34_000);

    String index = web.browse(site.url() + "/field-guide").text();

    String base = "session/s1/web-http___127.0.0.2_" + site.port() + "_field-guide";
    assertThat(index)
        .startsWith(
            "Page '"
                + site.url()
                + "/field-guide' is large ("
                + dev.toolhost.memory.ResultChunker.chars(whole.length())
                + " chars) and has been split into ")
        .contains("A document outline is stored at key `" + base + "-index`")
        .contains("| 0  | Field guide | `" + base + "-chunk0`")
        .contains("`" + base + "-chunk0`");
    Matcher keys = Pattern.compile("`(" + Pattern.quote(base) + "-chunk[0-9]+)`").matcher(index);
    List<String> chunks = new ArrayList<>();
    while (keys.find()) {
      ToolResult chunk =
          web.call("get_from_working_memory", Map.of("key", keys.group(1)), Optional.of("s1"));
      assertThat(chunk.isError()).isFalse();
      assertThat(chunk.text().length()).isLessThanOrEqualTo(4_000);
      chunks.add(chunk.text());
    }
    assertThat(chunks).hasSizeGreaterThan(7);
    // Each chunk is an exact slice of the page; only the blank lines between chunks are gone.
    assertThat(String.join("\n", chunks).replaceAll("\n{2,}", "\n"))
        .isEqualTo(whole.replaceAll("\n{2,}", "\n"));
    assertThat(
            web.call("get_from_working_memory", Map.of("key", base + "-index"), Optional.of("s1"))
                .text())
        .contains("**Section 12** → `" + base + "-chunk");
  }

  @Test
  void aLongPageWithoutASessionIsCutAtTheThresholdWithANotice() {
    site.page("/long.txt", FakeSite.Page.ok("text/plain", "a".repeat(10_000)));

    ToolResult result =
        web.call("web_browse", Map.of("url", site.url() + "/long.txt"), Optional.empty());

    assertThat(result.text())
        .isEqualTo("a".repeat(8_000) + "\n\n[Content truncated — 2 000 chars omitted]");
  }

  @Test
  void aGitHubIssueIsReadThroughTheApiWithTheConfiguredToken() {
    site.page(
        "/repos/octo/kettle/issues/42",
        FakeSite.Page.ok(
            "application/json",
            """
            {"html_url":"https://github.com/octo/kettle/issues/42","number":42,
             "title":"Kettle whistles twice","state":"open","user":{"login":"alice"},
             "labels":[{"name":"bug"},{"name":"help wanted"}],"comments":3,
             "created_at":"2026-01-02T03:04:05Z","updated_at":"2026-01-05T00:00:00Z",
             "closed_at":null,"body":"It whistles twice.\\r\\n\\r\\nSteps below."}
            """));
    WebConfig config = WebFixture.config(site);
    config =
        config.withGitHub(
            new WebConfig.GitHub(java.net.URI.create(site.url()), Optional.of("GITHUB_TOKEN")));
    try (WebFixture github =
        WebFixture.start(FakeSite.start(), config, Map.of("GITHUB_TOKEN", "ghp_test_token"))) {
      String issue =
          github
              .browse("http://github.com:" + site.port() + "/octo/kettle/issues/42#issuecomment-1")
              .text();

      assertThat(issue)
          .isEqualTo(
              "# Issue #42: Kettle whistles twice [octo/kettle]\n\n"
                  + "**Repository:** octo/kettle\n"
                  + "**State:** open\n"
                  + "**Author:** alice\n"
                  + "**Created:** 2026-01-02T03:04:05Z\n"
                  + "**Updated:** 2026-01-05T00:00:00Z\n"
                  + "**Labels:** bug, help wanted\n"
                  + "**Comments:** 3\n"
                  + "**URL:** https://github.com/octo/kettle/issues/42\n\n"
                  + "---\n\n"
                  + "It whistles twice.\r\n\r\nSteps below.");
      FakeSite.Request request = site.takeRequests().getFirst();
      assertThat(request.uri().getPath()).isEqualTo("/repos/octo/kettle/issues/42");
      assertThat(request.header("Authorization")).isEqualTo("Bearer ghp_test_token");
      assertThat(request.header("Accept")).isEqualTo("application/vnd.github+json");
    }
  }

  @Test
  void aPullRequestWithAPathAfterItIsReadThroughThePullsApi() {
    site.page(
        "/repos/octo/kettle/pulls/7",
        FakeSite.Page.ok(
            "application/json",
            """
            {"html_url":"https://github.com/octo/kettle/pull/7","number":7,"title":"Quieter whistle",
             "state":"closed","merged":true,"merged_at":"2026-02-01T10:00:00Z","draft":false,
             "user":{"login":"bob"},"labels":[],"created_at":"2026-01-20T00:00:00Z",
             "updated_at":"2026-02-01T10:00:00Z","closed_at":"2026-02-01T10:00:00Z",
             "head":{"label":"bob:quiet"},"base":{"label":"octo:main"},"body":""}
            """));

    String pull =
        web.browse("http://github.com:" + site.port() + "/octo/kettle/pull/7/files").text();

    assertThat(pull)
        .isEqualTo(
            "# Pull Request #7: Quieter whistle [octo/kettle]\n\n"
                + "**Repository:** octo/kettle\n"
                + "**State:** merged\n"
                + "**Author:** bob\n"
                + "**Created:** 2026-01-20T00:00:00Z\n"
                + "**Updated:** 2026-02-01T10:00:00Z\n"
                + "**Closed:** 2026-02-01T10:00:00Z\n"
                + "**Merged:** 2026-02-01T10:00:00Z\n"
                + "**Branches:** bob:quiet → octo:main\n"
                + "**Labels:** none\n"
                + "**URL:** https://github.com/octo/kettle/pull/7\n\n"
                + "---\n\n"
                + "(no description)");
  }

  @Test
  void anApiErrorFallsBackToThePageAndARepositoryRootIsNotRouted() {
    site.page(
        "/repos/octo/kettle/issues/404",
        FakeSite.Page.of(404, "application/json", "{\"message\":\"Not Found\"}"));
    site.page(
        "/octo/kettle/issues/404",
        FakeSite.Page.ok("text/html", "<title>Issue page</title><p>As rendered.</p>"));
    site.page("/octo/kettle", FakeSite.Page.ok("text/html", "<title>Repo</title><p>Readme.</p>"));

    assertThat(web.browse("http://github.com:" + site.port() + "/octo/kettle/issues/404").text())
        .isEqualTo("# Issue page\n\nAs rendered.");
    assertThat(web.browse("http://github.com:" + site.port() + "/octo/kettle").text())
        .isEqualTo("# Repo\n\nReadme.");
    assertThat(site.takeRequests())
        .extracting(r -> r.uri().getPath())
        .containsExactly(
            "/repos/octo/kettle/issues/404",
            "/robots.txt",
            "/octo/kettle/issues/404",
            "/octo/kettle");
  }
}
