package dev.toolhost.browser;

import dev.toolhost.core.spi.ChildProcesses;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * A Chromium is one headless browser process with its own fresh profile directory, driven over one
 * {@link Cdp} connection, whose every network request is vetted before it leaves.
 *
 * <p>The browser is told to attach to every target it opens (tabs, pop-ups, out-of-process frames,
 * workers) and to hold each one paused until it is set up: request interception ({@code
 * Fetch.enable}) is on before the target makes its first request, and every intercepted request
 * (navigations, each redirect hop, frames, subresources) goes to the {@link Vetter}; a refused one
 * fails in the page as a blocked request. A target that cannot be intercepted is closed. Only
 * {@code http} and {@code https} requests reach the network; {@code data:} and {@code blob:} never
 * leave the page and pass.
 *
 * <p>The browser is also started with a {@link VettingProxy} as its only way to the network
 * (loopback included), which checks each connection's target again where it connects: a name whose
 * answer changes between the check here and the connection (DNS rebinding) reaches nothing the
 * policy refuses, and WebSocket handshakes, which pass no interception, are checked there. The
 * interception stays for its clear per-request refusals; the proxy is the guarantee. Pages also get
 * a stub in place of {@code WebSocket} and WebRTC, as defence in depth only (a pop-up's first
 * document, reached from its opener, has the real ones).
 *
 * <p>{@link #close()} ends the browser and every process it started, then deletes the profile; it
 * is safe to call more than once and from any thread. The process gets a minimal environment: no
 * variable of the host's reaches it.
 */
final class Chromium implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(Chromium.class);
  private static final Pattern LISTENING = Pattern.compile("DevTools listening on (ws://\\S+)");
  static final Duration COMMAND = Duration.ofSeconds(10);

  /** What every document runs first: no WebSocket, no WebRTC. */
  private static final String NO_SOCKETS =
      "(() => { const refuse = function () { throw new DOMException('WebSockets and WebRTC are"
          + " refused in this browser', 'SecurityError'); };"
          + " for (const name of ['WebSocket', 'WebSocketStream', 'RTCPeerConnection',"
          + " 'webkitRTCPeerConnection']) {"
          + " try { Object.defineProperty(window, name, {value: refuse, writable: false,"
          + " configurable: false}); } catch (e) {} } })();";

  /** Checks a request's URL; throws with the reason when it may not be fetched. */
  @FunctionalInterface
  interface Vetter {
    void vet(URI url);
  }

  /** A tab: a page target, its flattened session, and its loading state. */
  static final class Tab {
    final int number;
    final String targetId;
    final String session;
    private final Object lock = new Object();
    private boolean loading;
    private long navigations;
    private volatile String url = "about:blank";
    private volatile String title = "";
    private volatile Optional<String> refusal = Optional.empty();

    Tab(int number, String targetId, String session) {
      this.number = number;
      this.targetId = targetId;
      this.session = session;
    }

    String url() {
      return url;
    }

    String title() {
      return title;
    }

    /** Records the title and URL the page reported. */
    void seen(String title, String url) {
      this.title = title;
      this.url = url;
    }

    /** How many times the main frame navigated: a snapshot's refs hold only within one. */
    long navigations() {
      synchronized (lock) {
        return navigations;
      }
    }

    /** The last request this tab had refused, taken (so it is reported once). */
    Optional<String> takeRefusal() {
      Optional<String> taken = refusal;
      refusal = Optional.empty();
      return taken;
    }

    /** Whether the main frame is loading. */
    boolean loading() {
      synchronized (lock) {
        return loading;
      }
    }

    /** Waits until the main frame is not loading; false when the time ran out first. */
    boolean awaitLoaded(Duration timeout) throws InterruptedException {
      long end = System.nanoTime() + timeout.toNanos();
      synchronized (lock) {
        while (loading) {
          long left = end - System.nanoTime();
          if (left <= 0) {
            return false;
          }
          TimeUnit.NANOSECONDS.timedWait(lock, left);
        }
        return true;
      }
    }

    private void loading(boolean now) {
      synchronized (lock) {
        loading = now;
        lock.notifyAll();
      }
    }

    private void navigated(String to) {
      synchronized (lock) {
        navigations++;
        url = to;
      }
    }
  }

  private final Process process;
  private final Path profile;
  private final Cdp cdp;
  private final Vetter vetter;
  private final Map<String, Tab> tabs = new LinkedHashMap<>();
  private final Map<String, CompletableFuture<Tab>> awaited = new LinkedHashMap<>();
  private int tabNumbers;
  private volatile boolean closing;

  private Chromium(Process process, Path profile, Cdp cdp, Vetter vetter) {
    this.process = process;
    this.profile = profile;
    this.cdp = cdp;
    this.vetter = vetter;
  }

  /**
   * Starts a browser.
   *
   * @param binary the Chromium executable
   * @param headless whether it runs headless
   * @param profiles the directory its fresh profile directory is made in
   * @param startTimeout how long it may take to listen for DevTools
   * @param vetter the check each request passes
   * @param proxy the vetting proxy every connection goes through, as {@code http://127.0.0.1:PORT}
   * @param children what starts the process, so that it dies with the host
   * @throws IOException when it does not start
   */
  static Chromium start(
      Path binary,
      boolean headless,
      Path profiles,
      Duration startTimeout,
      Vetter vetter,
      String proxy,
      ChildProcesses children)
      throws IOException, InterruptedException {
    Files.createDirectories(profiles);
    Path profile = Files.createTempDirectory(profiles, "toolhost-browser-");
    List<String> command = new ArrayList<>();
    command.add(binary.toString());
    if (headless) {
      command.add("--headless");
    }
    command.addAll(
        List.of(
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            // Every connection goes through the vetting proxy, loopback included ("<-loopback>"
            // takes away the implicit bypass of localhost and 127.0.0.0/8), and WebRTC sends no
            // UDP the proxy does not carry.
            "--proxy-server=" + proxy,
            "--proxy-bypass-list=<-loopback>",
            "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
            "--disable-default-apps",
            "--mute-audio",
            "--password-store=basic",
            "--user-data-dir=" + profile,
            // Port 0: the browser picks a free one and says it; DevTools refuses a page's socket
            // to it, for no --remote-allow-origins is given.
            "--remote-debugging-port=0",
            "--remote-debugging-address=127.0.0.1",
            "about:blank"));
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
    Map<String, String> environment = builder.environment();
    environment.clear();
    environment.put("PATH", "/usr/local/bin:/usr/bin:/bin");
    environment.put("HOME", profile.toString());
    environment.put("XDG_CONFIG_HOME", profile.resolve(".config").toString());
    environment.put("XDG_CACHE_HOME", profile.resolve(".cache").toString());
    environment.put("LANG", "C.UTF-8");
    Process process;
    try {
      process = children.start(builder);
    } catch (IOException e) {
      delete(profile);
      throw new IOException(
          "the browser '" + binary + "' did not start (" + e.getMessage() + ")", e);
    }
    CompletableFuture<URI> endpoint = new CompletableFuture<>();
    Thread.ofVirtual()
        .name("toolhost-browser-output")
        .start(
            () -> {
              // Read the DevTools address, then drain the rest unread so the browser never blocks.
              try (BufferedReader out =
                  new BufferedReader(
                      new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = out.readLine()) != null) {
                  if (!endpoint.isDone()) {
                    Matcher m = LISTENING.matcher(line);
                    if (m.find()) {
                      endpoint.complete(URI.create(m.group(1)));
                    }
                  }
                }
              } catch (IOException e) {
                // The process ended.
              }
              endpoint.completeExceptionally(
                  new IOException("the browser exited before it listened"));
            });
    Cdp cdp;
    try {
      URI ws = endpoint.get(startTimeout.toMillis(), TimeUnit.MILLISECONDS);
      cdp = Cdp.connect(ws, COMMAND);
    } catch (ExecutionException | TimeoutException | Cdp.CdpException | InterruptedException e) {
      List<ProcessHandle> family = new ArrayList<>(process.descendants().toList());
      family.add(process.toHandle());
      end(family);
      delete(profile);
      if (e instanceof InterruptedException interrupted) {
        throw interrupted;
      }
      throw new IOException(
          "the browser '"
              + binary
              + "' did not open its DevTools endpoint within "
              + startTimeout.toSeconds()
              + "s ("
              + (e instanceof ExecutionException ? e.getCause().getMessage() : e.toString())
              + ")");
    }
    Chromium browser = new Chromium(process, profile, cdp, vetter);
    try {
      browser.attach();
    } catch (RuntimeException | IOException | InterruptedException e) {
      browser.close();
      throw e;
    }
    return browser;
  }

  private void attach() throws IOException, InterruptedException {
    cdp.listen(this::event);
    ObjectNode auto =
        Cdp.params()
            .put("autoAttach", true)
            .put("waitForDebuggerOnStart", true)
            .put("flatten", true);
    try {
      cdp.send("Target.setAutoAttach", auto, Optional.empty(), COMMAND);
      // The first tab (about:blank, opened with the process) is attached by the call above.
      JsonNode targets = cdp.send("Target.getTargets", Optional.empty(), COMMAND);
      for (JsonNode info : targets.path("targetInfos")) {
        if (info.path("type").asString().equals("page")) {
          tab(info.path("targetId").asString(), COMMAND);
        }
      }
    } catch (Cdp.CdpException | TimeoutException e) {
      throw new IOException("the browser did not take its set-up: " + e.getMessage());
    }
  }

  /** The profile directory, deleted on close. */
  Path profile() {
    return profile;
  }

  /** The browser's process id. */
  long pid() {
    return process.pid();
  }

  /** The open tabs, oldest first. */
  synchronized List<Tab> tabs() {
    return List.copyOf(tabs.values());
  }

  /** Sends a command to the browser or a tab's session. */
  JsonNode send(String method, ObjectNode params, Optional<String> session, Duration timeout)
      throws Cdp.CdpException, InterruptedException, TimeoutException {
    return cdp.send(method, params, session, timeout);
  }

  /** Sends a command with no parameters. */
  JsonNode send(String method, Optional<String> session, Duration timeout)
      throws Cdp.CdpException, InterruptedException, TimeoutException {
    return cdp.send(method, session, timeout);
  }

  /** Whether the browser has gone (crashed, or closed). */
  boolean gone() {
    return closing || cdp.isClosed() || !process.isAlive();
  }

  /** Opens a new tab on about:blank, ready for requests to be vetted. */
  Tab open() throws Cdp.CdpException, InterruptedException, TimeoutException {
    JsonNode created =
        cdp.send(
            "Target.createTarget",
            Cdp.params().put("url", "about:blank"),
            Optional.empty(),
            COMMAND);
    return tab(created.path("targetId").asString(), COMMAND);
  }

  /** Waits for the tab of a page target to be attached and set up. */
  private Tab tab(String targetId, Duration timeout)
      throws InterruptedException, TimeoutException, Cdp.CdpException {
    CompletableFuture<Tab> ready;
    synchronized (this) {
      Tab known = tabs.get(targetId);
      if (known != null) {
        return known;
      }
      ready = awaited.computeIfAbsent(targetId, id -> new CompletableFuture<>());
    }
    try {
      return ready.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      throw new Cdp.CdpException("the tab did not open: " + e.getCause().getMessage());
    }
  }

  /** Closes a tab. */
  void close(Tab tab) throws Cdp.CdpException, InterruptedException, TimeoutException {
    cdp.send(
        "Target.closeTarget",
        Cdp.params().put("targetId", tab.targetId),
        Optional.empty(),
        COMMAND);
    synchronized (this) {
      tabs.remove(tab.targetId);
    }
  }

  private void event(Cdp.Event event) {
    switch (event.method()) {
      case "Target.attachedToTarget" -> {
        JsonNode info = event.params().path("targetInfo");
        String session = event.params().path("sessionId").asString();
        String type = info.path("type").asString();
        String targetId = info.path("targetId").asString();
        Thread.ofVirtual()
            .name("toolhost-browser-attach")
            .start(() -> setUp(session, type, targetId));
      }
      case "Target.detachedFromTarget" -> {
        String session = event.params().path("sessionId").asString();
        synchronized (this) {
          tabs.values().removeIf(tab -> tab.session.equals(session));
        }
      }
      case "Target.targetInfoChanged" -> {
        JsonNode info = event.params().path("targetInfo");
        Tab tab;
        synchronized (this) {
          tab = tabs.get(info.path("targetId").asString());
        }
        if (tab != null) {
          tab.title = info.path("title").asString("");
          tab.url = info.path("url").asString(tab.url);
        }
      }
      case "Fetch.requestPaused" -> {
        String session = event.session().orElse("");
        JsonNode params = event.params();
        Thread.ofVirtual().name("toolhost-browser-vet").start(() -> vet(session, params));
      }
      case "Page.frameStartedLoading", "Page.frameStoppedLoading", "Page.frameNavigated" -> {
        Tab tab = bySession(event.session());
        if (tab == null) {
          return;
        }
        JsonNode frame = event.params().path("frame");
        String frameId =
            frame.isMissingNode()
                ? event.params().path("frameId").asString()
                : frame.path("id").asString();
        if (!frameId.equals(tab.targetId) || !frame.path("parentId").isMissingNode()) {
          return;
        }
        switch (event.method()) {
          case "Page.frameStartedLoading" -> tab.loading(true);
          case "Page.frameStoppedLoading" -> tab.loading(false);
          default -> tab.navigated(frame.path("url").asString(tab.url));
        }
      }
      default -> {}
    }
  }

  private synchronized Tab bySession(Optional<String> session) {
    if (session.isEmpty()) {
      return null;
    }
    for (Tab tab : tabs.values()) {
      if (tab.session.equals(session.get())) {
        return tab;
      }
    }
    return null;
  }

  /** Sets up a newly attached target; a target whose requests cannot be vetted is closed. */
  private void setUp(String session, String type, String targetId) {
    Optional<String> s = Optional.of(session);
    try {
      cdp.send(
          "Fetch.enable",
          Cdp.params()
              .set(
                  "patterns",
                  Cdp.params()
                      .arrayNode()
                      .add(Cdp.params().put("urlPattern", "*").put("requestStage", "Request"))),
          s,
          COMMAND);
      cdp.send(
          "Target.setAutoAttach",
          Cdp.params()
              .put("autoAttach", true)
              .put("waitForDebuggerOnStart", true)
              .put("flatten", true),
          s,
          COMMAND);
      Tab tab = null;
      if (type.equals("page")) {
        synchronized (this) {
          tab = new Tab(++tabNumbers, targetId, session);
          tabs.put(targetId, tab);
        }
      }
      // Interception is on; the page may run. Page events need the page running (a pop-up's
      // renderer answers nothing before), so they are turned on after.
      cdp.send("Runtime.runIfWaitingForDebugger", s, COMMAND);
      if (type.equals("page") || type.equals("iframe")) {
        cdp.send("Page.enable", s, COMMAND);
      }
      if (type.equals("page")) {
        // WebSocket handshakes pass no request interception; the vetting proxy checks them. This
        // stub in the page is defence in depth, not a network rule: a pop-up's first document,
        // reached from its opener before it is set, still has the real constructors.
        cdp.send(
            "Page.addScriptToEvaluateOnNewDocument",
            Cdp.params().put("source", NO_SOCKETS).put("runImmediately", true),
            s,
            COMMAND);
      }
      if (tab != null) {
        CompletableFuture<Tab> waiting;
        synchronized (this) {
          waiting = awaited.remove(targetId);
        }
        if (waiting != null) {
          waiting.complete(tab);
        }
      }
    } catch (Cdp.CdpException | TimeoutException | InterruptedException e) {
      if (closing || cdp.isClosed()) {
        return;
      }
      // Fail closed: what cannot be watched does not run.
      LOG.warn(
          "Closing a browser {} target whose requests cannot be vetted: {}", type, e.toString());
      try {
        cdp.send(
            "Target.closeTarget",
            Cdp.params().put("targetId", targetId),
            Optional.empty(),
            COMMAND);
      } catch (Cdp.CdpException | TimeoutException | InterruptedException again) {
        LOG.warn("The browser target did not close: {}", again.toString());
      }
      CompletableFuture<Tab> waiting;
      synchronized (this) {
        waiting = awaited.remove(targetId);
      }
      if (waiting != null) {
        waiting.completeExceptionally(e);
      }
    }
  }

  private void vet(String session, JsonNode params) {
    String requestId = params.path("requestId").asString();
    String url = params.path("request").path("url").asString();
    Optional<String> refusal = refusal(url);
    try {
      if (refusal.isEmpty()) {
        cdp.send(
            "Fetch.continueRequest",
            Cdp.params().put("requestId", requestId),
            Optional.of(session),
            COMMAND);
        return;
      }
      Tab tab = bySession(Optional.of(session));
      if (tab != null) {
        tab.refusal = Optional.of(refusal.get());
      }
      cdp.send(
          "Fetch.failRequest",
          Cdp.params().put("requestId", requestId).put("errorReason", "BlockedByClient"),
          Optional.of(session),
          COMMAND);
    } catch (Cdp.CdpException | TimeoutException | InterruptedException e) {
      // The request went with its page (closed, navigated away): nothing was sent for it.
      LOG.debug("A paused request was not answered: {}", e.toString());
    }
  }

  /** Why the URL may not be fetched, or empty when it may. */
  private Optional<String> refusal(String url) {
    String scheme =
        url.contains(":") ? url.substring(0, url.indexOf(':')).toLowerCase(Locale.ROOT) : "";
    if (scheme.equals("data") || scheme.equals("blob")) {
      return Optional.empty();
    }
    try {
      vetter.vet(URI.create(url));
      return Optional.empty();
    } catch (RuntimeException e) {
      return Optional.of("'" + shortened(url) + "' was refused: " + e.getMessage());
    }
  }

  private static String shortened(String url) {
    return url.length() <= 200 ? url : url.substring(0, 200) + "…";
  }

  @Override
  public void close() {
    synchronized (this) {
      if (closing) {
        return;
      }
      closing = true;
      for (CompletableFuture<Tab> waiting : awaited.values()) {
        waiting.completeExceptionally(new IllegalStateException("the browser closed"));
      }
    }
    // Its children, taken before it ends, for an orphan is no longer its descendant.
    List<ProcessHandle> all = new ArrayList<>(process.descendants().toList());
    all.add(process.toHandle());
    try {
      cdp.send("Browser.close", Optional.empty(), Duration.ofSeconds(2));
    } catch (Cdp.CdpException | TimeoutException e) {
      // It is ended below.
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      cdp.close();
      end(all);
      delete(profile);
    }
  }

  /** Ends the processes: politely, then by force, waiting for each. */
  private static void end(List<ProcessHandle> processes) {
    boolean interrupted = Thread.interrupted();
    try {
      // The browser was asked to close: give it a moment to end its own children.
      waitFor(processes.get(processes.size() - 1), Duration.ofSeconds(2));
      for (ProcessHandle p : processes) {
        p.destroy();
      }
      for (ProcessHandle p : processes) {
        if (!waitFor(p, Duration.ofSeconds(2))) {
          p.destroyForcibly();
          waitFor(p, Duration.ofSeconds(5));
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private static boolean waitFor(ProcessHandle p, Duration timeout) {
    if (!p.isAlive()) {
      return true;
    }
    try {
      p.onExit().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
      return true;
    } catch (TimeoutException | ExecutionException e) {
      return !p.isAlive();
    } catch (InterruptedException e) {
      // Finish ending it regardless; the interrupt is restored by the caller.
      return !p.isAlive();
    }
  }

  /** Deletes a directory tree, retrying once for files the browser wrote as it ended. */
  static void delete(Path directory) {
    for (int attempt = 0; attempt < 3 && Files.exists(directory); attempt++) {
      try (Stream<Path> walk = Files.walk(directory)) {
        for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
          Files.deleteIfExists(p);
        }
      } catch (IOException | UncheckedIOException e) {
        if (attempt == 2) {
          LOG.warn("The browser profile {} was not deleted: {}", directory, e.toString());
        }
      }
    }
  }
}
