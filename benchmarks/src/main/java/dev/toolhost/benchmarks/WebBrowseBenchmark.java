package dev.toolhost.benchmarks;

import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import dev.toolhost.memory.InProcessWorkingMemory;
import dev.toolhost.memory.WorkingMemory;
import dev.toolhost.testing.FakeSite;
import dev.toolhost.web.Cidr;
import dev.toolhost.web.OutboundHttp;
import dev.toolhost.web.OutboundPolicy;
import dev.toolhost.web.WebConfig;
import dev.toolhost.web.WebTools;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.jsoup.Jsoup;
import org.jsoup.nodes.Document;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Browsing a 1 MB page from a local server: {@code web_browse} through the dispatcher (the outbound
 * client's address checks, the fetch, jsoup's parse, noise removal, flexmark's markdown, and the
 * chunking of the result into working memory) beside the raw baseline: the JDK's HTTP client
 * fetching the same page and jsoup parsing it, nothing else.
 *
 * <p>Average time per page, in milliseconds.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(
    value = 1,
    jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class WebBrowseBenchmark {

  private FakeSite site;
  private OutboundHttp pages;
  private WorkingMemory memory;
  private ToolDispatcher dispatcher;
  private ToolSet tools;
  private HttpClient bare;
  private URI url;
  private ToolCall call;

  @Setup(Level.Trial)
  public void setUp() {
    String html = page(1_000_000);
    site = FakeSite.start().page("/manual", FakeSite.Page.ok("text/html; charset=utf-8", html));
    url = URI.create(site.url() + "/manual");
    WebConfig config =
        WebConfig.defaults()
            .withOutbound(
                OutboundPolicy.defaults().allowingRanges(List.of(Cidr.parse("127.0.0.2/32"))));
    // robots.txt off: a 404 for it on every call would measure the fake server, not the path.
    config =
        new WebConfig(
            config.search(),
            new WebConfig.Browse(8_000, 4_000, Duration.ofMinutes(30), false),
            config.github(),
            config.outbound());
    pages = OutboundHttp.start(config.outbound());
    memory = new InProcessWorkingMemory();
    ToolRegistry registry = new ToolRegistry();
    registry.registerAll(
        new WebTools(config, pages, pages, Optional.empty(), Optional.empty(), Optional.of(memory))
            .tools());
    tools = ToolSet.of(registry, ToolProfiles.MAIN);
    dispatcher = ToolDispatcher.create();
    call =
        ToolCall.of("web_browse", "{\"url\": \"" + url + "\"}")
            .withSessionId("bench")
            .withTimeout(Duration.ofMinutes(1));
    bare = HttpClient.newHttpClient();
    ToolResult result = dispatcher.dispatch(tools, call);
    if (result.isError() || !result.text().startsWith("Page '")) {
      throw new IllegalStateException("web_browse did not chunk the page: " + result.text());
    }
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    bare.close();
    pages.close();
    memory.close();
    site.close();
  }

  @Benchmark
  public int webBrowse() {
    return dispatcher.dispatch(tools, call).text().length();
  }

  /** The raw baseline: a bare fetch and jsoup's parse of the same page. */
  @Benchmark
  public int bareFetchAndParse() throws Exception {
    HttpResponse<byte[]> response =
        bare.send(HttpRequest.newBuilder(url).build(), HttpResponse.BodyHandlers.ofByteArray());
    Document document =
        Jsoup.parse(new java.io.ByteArrayInputStream(response.body()), "UTF-8", url.toString());
    return document.childNodeSize();
  }

  /** A documentation page of about {@code length} bytes: navigation, sections, tables, code. */
  static String page(int length) {
    StringBuilder html =
        new StringBuilder(length + 4_096)
            .append("<!doctype html><html><head><title>Reference manual</title>")
            .append(
                "<style>body{font:14px sans-serif}</style><script>var a=1;</script></head><body>")
            .append("<header><nav><a href=\"/\">Home</a> <a href=\"/docs\">Docs</a></nav></header>")
            .append("<main>");
    int section = 0;
    while (html.length() < length - 2_000) {
      section++;
      html.append("<h2>Section ").append(section).append("</h2>");
      for (int p = 0; p < 4; p++) {
        html.append("<p>The <strong>option ")
            .append(section)
            .append('.')
            .append(p)
            .append("</strong> sets how the client reads a response; see <a href=\"/docs/opt")
            .append(section)
            .append("\">its reference</a> and the notes on defaults, limits and errors.</p>");
      }
      html.append("<ul><li>Default: 30 s</li><li>Range: 1 to 600</li></ul>")
          .append("<table><tr><th>Name</th><th>Value</th></tr><tr><td>timeout</td><td>")
          .append(section)
          .append("</td></tr></table><pre><code>client.timeout(")
          .append(section)
          .append(");</code></pre>");
    }
    return html.append("</main><footer>© 2026</footer></body></html>").toString();
  }
}
