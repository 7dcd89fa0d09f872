package dev.toolhost.browser;

import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import dev.toolhost.core.spi.ChildProcesses;
import dev.toolhost.testing.FakeSite;
import dev.toolhost.web.Cidr;
import dev.toolhost.web.OutboundHttp;
import dev.toolhost.web.OutboundPolicy;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import tools.jackson.databind.JsonNode;

/**
 * The browser load measures a navigate + snapshot of a local page (a form and 60 links) through the
 * {@code browser} tool and the dispatch path, beside the same work through the bare DevTools
 * protocol on a second Chromium started with the same flags (no request interception, no vetting,
 * no refs, no dispatcher): {@code Page.navigate}, wait for {@code Page.loadEventFired}, {@code
 * Accessibility.getFullAXTree}. It also times the browser's start (process to a tab ready for
 * vetted requests), beside the bare start (process to DevTools connected).
 *
 * <p>In this module's jar, in the browser's package for its package-private parts. Usage: {@code
 * java -cp benchmarks/target/benchmarks.jar dev.toolhost.browser.BrowserLoad [rounds] [starts]},
 * defaults {@code 200 5}. Needs Debian's chromium at /usr/bin/chromium.
 */
public final class BrowserLoad {

  private static final Pattern LISTENING = Pattern.compile("DevTools listening on (ws://\\S+)");

  private BrowserLoad() {}

  public static void main(String[] args) throws Exception {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 200;
    int starts = args.length > 1 ? Integer.parseInt(args[1]) : 5;
    StringBuilder page = new StringBuilder("<title>Bench</title><h1>Bench</h1><form>");
    page.append("<input name=q aria-label=Query><input type=checkbox aria-label=Exact>");
    page.append("<button>Search</button></form><ul>");
    for (int i = 1; i <= 60; i++) {
      page.append("<li><a href='/p")
          .append(i)
          .append("'>Link ")
          .append(i)
          .append("</a> text ")
          .append(i);
    }
    page.append("</ul>");
    Path root = Files.createTempDirectory("toolhost-browser-bench");
    try (FakeSite site =
            FakeSite.on("127.0.0.5").page("/", FakeSite.Page.ok("text/html", page.toString()));
        OutboundHttp http =
            OutboundHttp.start(
                OutboundPolicy.defaults().allowingRanges(List.of(Cidr.parse("127.0.0.5/32"))));
        VettingProxy proxy = VettingProxy.start(http);
        ChildProcesses children = new ChildProcesses("browser")) {
      String url = site.url() + "/";
      BrowserConfig config = BrowserConfig.defaults().withDirectories(root, root.resolve("shots"));

      Browsers.Launcher launcher =
          () ->
              Chromium.start(
                  config.binary(),
                  true,
                  root,
                  config.startTimeout(),
                  http::vet,
                  proxy.address(),
                  children);

      // Start times.
      long[] tool = new long[starts];
      long[] bare = new long[starts];
      for (int i = 0; i < starts; i++) {
        long t0 = System.nanoTime();
        try (Chromium c = launcher.launch()) {
          tool[i] = System.nanoTime() - t0;
        }
        t0 = System.nanoTime();
        try (Bare b = Bare.start(config.binary(), root)) {
          bare[i] = System.nanoTime() - t0;
        }
      }
      System.out.printf(
          Locale.ROOT,
          "start: tool p50 %.0f ms (min %.0f), bare p50 %.0f ms (min %.0f)%n",
          ms(p50(tool)),
          ms(Arrays.stream(tool).min().orElse(0)),
          ms(p50(bare)),
          ms(Arrays.stream(bare).min().orElse(0)));

      // Navigate + snapshot through the tool.
      try (Browsers browsers = new Browsers(1, Duration.ofHours(1), launcher)) {
        ToolRegistry registry = new ToolRegistry();
        registry.register(
            new BrowserTool(config, browsers, http, Map.of(), Optional.empty()).tool());
        ToolSet tools = ToolSet.of(registry, ToolProfiles.MAIN);
        ToolDispatcher dispatcher = ToolDispatcher.create();
        long[] times = new long[rounds];
        for (int i = -20; i < rounds; i++) {
          long t0 = System.nanoTime();
          ToolResult nav =
              dispatcher.dispatch(
                  tools,
                  ToolCall.of("browser", "{\"action\":\"navigate\",\"url\":\"" + url + "\"}")
                      .withSessionId("bench"));
          ToolResult snap =
              dispatcher.dispatch(
                  tools,
                  ToolCall.of("browser", "{\"action\":\"snapshot\"}").withSessionId("bench"));
          long took = System.nanoTime() - t0;
          if (nav.isError() || snap.isError() || !snap.text().contains("Link 60")) {
            throw new IllegalStateException(nav.text() + "\n" + snap.text());
          }
          if (i >= 0) {
            times[i] = took;
          }
        }
        long[] baseline = new long[rounds];
        try (Bare b = Bare.start(config.binary(), root)) {
          for (int i = -20; i < rounds; i++) {
            long t0 = System.nanoTime();
            JsonNode tree = b.navigateAndSnapshot(url);
            long took = System.nanoTime() - t0;
            if (!tree.toString().contains("Link 60")) {
              throw new IllegalStateException("the bare snapshot missed the page");
            }
            if (i >= 0) {
              baseline[i] = took;
            }
          }
        }
        System.out.printf(
            Locale.ROOT,
            "navigate + snapshot (%d rounds): tool p50 %.2f ms p90 %.2f ms; bare CDP p50 %.2f ms"
                + " p90 %.2f ms; ratio p50 %.2fx%n",
            rounds,
            ms(p50(times)),
            ms(pct(times, 0.9)),
            ms(p50(baseline)),
            ms(pct(baseline, 0.9)),
            (double) p50(times) / p50(baseline));
      }
    } finally {
      Chromium.delete(root);
    }
  }

  private static double ms(long nanos) {
    return nanos / 1e6;
  }

  private static long p50(long[] values) {
    return pct(values, 0.5);
  }

  private static long pct(long[] values, double q) {
    long[] sorted = values.clone();
    Arrays.sort(sorted);
    return sorted[Math.min(sorted.length - 1, (int) (q * sorted.length))];
  }

  /** The bare driver: Chromium and one DevTools connection, nothing else. */
  private static final class Bare implements AutoCloseable {
    private final Process process;
    private final Cdp cdp;
    private final Path profile;
    private final String session;
    private volatile CompletableFuture<Void> loaded = new CompletableFuture<>();

    private Bare(Process process, Cdp cdp, Path profile, String session) {
      this.process = process;
      this.cdp = cdp;
      this.profile = profile;
      this.session = session;
    }

    static Bare start(Path binary, Path root) throws Exception {
      Path profile = Files.createTempDirectory(root, "bare-");
      List<String> command =
          new ArrayList<>(
              List.of(
                  binary.toString(),
                  "--headless",
                  "--no-sandbox",
                  "--disable-gpu",
                  "--disable-quic",
                  "--no-first-run",
                  "--disable-background-networking",
                  "--disable-component-update",
                  "--disable-sync",
                  "--user-data-dir=" + profile,
                  "--remote-debugging-port=0",
                  "about:blank"));
      Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
      BufferedReader out =
          new BufferedReader(
              new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
      String ws = null;
      for (String line; ws == null && (line = out.readLine()) != null; ) {
        Matcher m = LISTENING.matcher(line);
        if (m.find()) {
          ws = m.group(1);
        }
      }
      Thread.ofVirtual().start(() -> out.lines().forEach(l -> {}));
      Cdp cdp = Cdp.connect(URI.create(ws), Duration.ofSeconds(10));
      Duration t = Duration.ofSeconds(10);
      String target = null;
      for (JsonNode info : cdp.send("Target.getTargets", Optional.empty(), t).path("targetInfos")) {
        if (info.path("type").asString().equals("page")) {
          target = info.path("targetId").asString();
        }
      }
      String session =
          cdp.send(
                  "Target.attachToTarget",
                  Cdp.params().put("targetId", target).put("flatten", true),
                  Optional.empty(),
                  t)
              .path("sessionId")
              .asString();
      Bare bare = new Bare(process, cdp, profile, session);
      cdp.listen(
          e -> {
            if (e.method().equals("Page.loadEventFired")) {
              bare.loaded.complete(null);
            }
          });
      cdp.send("Page.enable", Optional.of(session), t);
      return bare;
    }

    JsonNode navigateAndSnapshot(String url) throws Exception {
      Duration t = Duration.ofSeconds(10);
      loaded = new CompletableFuture<>();
      cdp.send("Page.navigate", Cdp.params().put("url", url), Optional.of(session), t);
      loaded.get(10, TimeUnit.SECONDS);
      return cdp.send("Accessibility.getFullAXTree", Cdp.params(), Optional.of(session), t);
    }

    @Override
    public void close() throws Exception {
      try {
        cdp.send("Browser.close", Optional.empty(), Duration.ofSeconds(2));
      } catch (Exception e) {
        // Ended below.
      }
      cdp.close();
      List<ProcessHandle> all = new ArrayList<>(process.descendants().toList());
      process.waitFor(2, TimeUnit.SECONDS);
      all.forEach(ProcessHandle::destroyForcibly);
      process.destroyForcibly().waitFor();
      Chromium.delete(profile);
    }
  }
}
