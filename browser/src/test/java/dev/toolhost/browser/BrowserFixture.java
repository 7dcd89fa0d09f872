package dev.toolhost.browser;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import dev.toolhost.core.spi.ChildProcesses;
import dev.toolhost.memory.InProcessWorkingMemory;
import dev.toolhost.memory.WorkingMemory;
import dev.toolhost.memory.WorkingMemoryTools;
import dev.toolhost.web.Cidr;
import dev.toolhost.web.OutboundHttp;
import dev.toolhost.web.OutboundPolicy;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import tools.jackson.databind.json.JsonMapper;

/**
 * A browser fixture is the browser tool over the real Chromium, called through a real dispatcher as
 * a host calls it, with test pages on 127.0.0.3 (opened in the outbound policy) and an internal
 * site on 127.0.0.1 (refused, as the rest of loopback is) that records any request.
 */
final class BrowserFixture implements AutoCloseable {

  private static final JsonMapper JSON = JsonMapper.shared();

  final TestPages internal;
  final TestPages pages;
  final OutboundHttp http;
  final Browsers browsers;
  final VettingProxy proxy;
  final ChildProcesses children = new ChildProcesses("browser");
  final WorkingMemory memory = new InProcessWorkingMemory();
  final Path profiles;
  final Path screenshots;
  final AtomicInteger launches = new AtomicInteger();
  private final ToolSet tools;
  private final ToolDispatcher dispatcher = ToolDispatcher.create();

  BrowserFixture(Path root, BrowserConfig base, Map<String, String> environment)
      throws IOException {
    this(root, base, environment, OutboundHttp.Lookup.system());
  }

  /** A fixture whose outbound checks resolve names with the lookup (a rebinding test's). */
  BrowserFixture(
      Path root, BrowserConfig base, Map<String, String> environment, OutboundHttp.Lookup lookup)
      throws IOException {
    this.internal = new TestPages("127.0.0.1", "http://127.0.0.1:1");
    String refused = internal.url("").replaceAll("/$", "");
    this.pages = new TestPages("127.0.0.3", refused);
    this.profiles = Files.createDirectories(root.resolve("profiles"));
    this.screenshots = root.resolve("screenshots");
    BrowserConfig config = base.withDirectories(profiles, screenshots);
    this.http =
        OutboundHttp.start(
            OutboundPolicy.defaults().allowingRanges(List.of(Cidr.parse("127.0.0.3/32"))), lookup);
    this.proxy = VettingProxy.start(http);
    this.browsers =
        new Browsers(
            config.maxBrowsers(),
            config.idleTimeout(),
            () -> {
              launches.incrementAndGet();
              return Chromium.start(
                  config.binary(),
                  config.headless(),
                  config.profileDir(),
                  config.startTimeout(),
                  http::vet,
                  proxy.address(),
                  children);
            },
            () -> {
              children.close();
              proxy.close();
            });
    ToolRegistry registry = new ToolRegistry();
    registry.register(
        new BrowserTool(config, browsers, http, environment, Optional.of(memory)).tool());
    registry.registerAll(new WorkingMemoryTools(memory).tools());
    this.tools = ToolSet.of(registry, ToolProfiles.MAIN);
  }

  /** The defaults with a short navigation timeout, evaluate off, and one secret. */
  static BrowserConfig config() {
    return config(4, BrowserConfig.defaults().idleTimeout());
  }

  /** {@link #config()} with at most that many browsers, each closed when idle that long. */
  static BrowserConfig config(int maxBrowsers, java.time.Duration idleTimeout) {
    BrowserConfig d = BrowserConfig.defaults();
    return new BrowserConfig(
        true,
        d.binary(),
        true,
        d.profileDir(),
        d.screenshotDir(),
        maxBrowsers,
        idleTimeout,
        d.startTimeout(),
        java.time.Duration.ofSeconds(4),
        200,
        200,
        100,
        20_000,
        2_000,
        1_000,
        d.chunkTtl(),
        false,
        List.of("SITE_PASSWORD"));
  }

  ToolResult call(String session, Map<String, Object> arguments) {
    ToolCall call = ToolCall.of(BrowserTool.NAME, JSON.writeValueAsString(arguments));
    return dispatcher.dispatch(tools, call.withSessionId(session));
  }

  ToolResult call(String session, Object... pairs) {
    Map<String, Object> arguments = new java.util.LinkedHashMap<>();
    for (int i = 0; i < pairs.length; i += 2) {
      arguments.put((String) pairs[i], pairs[i + 1]);
    }
    return call(session, arguments);
  }

  /** The result, checked to be a success (its text is the failure's message where it is not). */
  static ToolResult ok(ToolResult result) {
    assertThat(result.isError()).as(result.text()).isFalse();
    return result;
  }

  /** A new session id: a browser of its own. */
  static String session() {
    return "s-" + java.util.UUID.randomUUID();
  }

  /** The text of a result, success or failure. */
  static String text(ToolResult result) {
    return result.text();
  }

  /** The ref the snapshot gives the element whose label line contains the text. */
  static String ref(ToolResult snapshot, String label) {
    for (String line : snapshot.text().lines().toList()) {
      if (line.startsWith("[") && line.contains(label)) {
        return line.substring(1, line.indexOf(']'));
      }
    }
    throw new AssertionError("no element '" + label + "' in:\n" + snapshot.text());
  }

  /** The processes whose command line names the path: a browser of this fixture still running. */
  static List<ProcessHandle> processesUsing(Path path) {
    String needle = path.toString();
    return ProcessHandle.allProcesses()
        .filter(ProcessHandle::isAlive)
        .filter(
            p ->
                p.info().commandLine().map(c -> c.contains(needle)).orElse(false)
                    || p.info()
                        .arguments()
                        .map(a -> String.join(" ", a).contains(needle))
                        .orElse(false))
        .toList();
  }

  @Override
  public void close() {
    browsers.close();
    http.close();
    memory.close();
    pages.close();
    internal.close();
  }
}
