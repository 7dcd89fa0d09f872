package dev.toolhost.browser;

import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolException;
import dev.toolhost.core.ToolGuide;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSpec;
import dev.toolhost.memory.ContentChunker;
import dev.toolhost.memory.ResultChunker;
import dev.toolhost.memory.WorkingMemory;
import dev.toolhost.web.OutboundException;
import dev.toolhost.web.OutboundHttp;
import dev.toolhost.web.PageConverter;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeoutException;
import org.jsoup.Jsoup;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The browser tool is {@code browser(action, ...)}: one headless Chromium per session of a user
 * ({@link #owner}), driven through its accessibility tree. {@code snapshot} numbers the page's
 * interactive elements as refs that {@code click} and {@code type} take; {@code content} reads the
 * page as markdown through the web extension's converter, chunked into working memory when long.
 *
 * <p>Every URL the model gives is checked as {@code web_browse}'s are before the browser sees it,
 * and every request the page then makes is checked again in the browser ({@link Chromium}). A
 * secret typed with {@code type(ref, secret=NAME)} is read from the environment variable the config
 * names, and every output of the session (snapshots, content, script results, URLs, titles) shows
 * {@code [secret NAME]} in its place; it is never logged. Errors name what went wrong and what to
 * do next.
 */
final class BrowserTool {

  private static final Logger LOG = LoggerFactory.getLogger(BrowserTool.class);
  private static final JsonMapper JSON = JsonMapper.shared();

  /** The tool's name. */
  static final String NAME = "browser";

  /** The source of the tool. */
  static final String SOURCE = "builtin:browser";

  /** The category of stored content chunks. */
  static final String CATEGORY = "browser-page";

  /** The guide for the model. */
  static final ToolGuide GUIDE =
      ToolGuide.fromResource(
          "browser",
          "How to drive the browser: navigate, snapshot, act on refs, read, tabs.",
          BrowserTool.class,
          "guides/browser.md");

  static final List<String> ACTIONS =
      List.of(
          "navigate",
          "snapshot",
          "click",
          "type",
          "press_key",
          "scroll",
          "screenshot",
          "content",
          "evaluate",
          "tab_open",
          "tab_list",
          "tab_focus",
          "tab_close",
          "close");

  /** The keys press_key takes by name, with their Windows virtual key codes. */
  static final Map<String, Integer> KEYS =
      Map.ofEntries(
          Map.entry("Enter", 13),
          Map.entry("Tab", 9),
          Map.entry("Escape", 27),
          Map.entry("Backspace", 8),
          Map.entry("Delete", 46),
          Map.entry("Space", 32),
          Map.entry("ArrowUp", 38),
          Map.entry("ArrowDown", 40),
          Map.entry("ArrowLeft", 37),
          Map.entry("ArrowRight", 39),
          Map.entry("Home", 36),
          Map.entry("End", 35),
          Map.entry("PageUp", 33),
          Map.entry("PageDown", 34));

  private final BrowserConfig config;
  private final Browsers browsers;
  private final OutboundHttp vetting;
  private final Map<String, String> environment;
  private final Optional<WorkingMemory> memory;
  private final PageConverter converter = new PageConverter();

  BrowserTool(
      BrowserConfig config,
      Browsers browsers,
      OutboundHttp vetting,
      Map<String, String> environment,
      Optional<WorkingMemory> memory) {
    this.config = Objects.requireNonNull(config, "config");
    this.browsers = Objects.requireNonNull(browsers, "browsers");
    this.vetting = Objects.requireNonNull(vetting, "vetting");
    this.environment = Map.copyOf(environment);
    this.memory = Objects.requireNonNull(memory, "memory");
  }

  /** The tool, with a timeout that covers a browser's start and a page's load. */
  ExecutableTool tool() {
    ObjectNode schema = JSON.createObjectNode().put("type", "object");
    ObjectNode p = schema.putObject("properties");
    ObjectNode action = p.putObject("action").put("type", "string");
    action.put("description", "What to do; see the tool description.");
    ArrayNode actions = action.putArray("enum");
    ACTIONS.forEach(actions::add);
    p.putObject("url")
        .put("type", "string")
        .put("description", "navigate, tab_open: the http or https URL.");
    p.putObject("ref")
        .put("type", "string")
        .put(
            "description", "click, type: an element's ref from the latest snapshot, such as 3-12.");
    p.putObject("text").put("type", "string").put("description", "type: the text to type.");
    p.putObject("secret")
        .put("type", "string")
        .put(
            "description",
            "type: instead of text, the name of a configured secret to type; its value is never"
                + " shown.");
    p.putObject("key")
        .put("type", "string")
        .put(
            "description",
            "press_key: Enter, Tab, Escape, Backspace, Delete, Space, ArrowUp, ArrowDown,"
                + " ArrowLeft, ArrowRight, Home, End, PageUp, PageDown, or one character.");
    ObjectNode direction =
        p.putObject("direction")
            .put("type", "string")
            .put("description", "scroll: up or down (default down), by most of a screen.");
    direction.putArray("enum").add("up").add("down");
    p.putObject("full_page")
        .put("type", "boolean")
        .put("description", "screenshot: the whole page rather than the visible part.");
    p.putObject("script")
        .put("type", "string")
        .put("description", "evaluate: a JavaScript expression; its value is returned as JSON.");
    p.putObject("tab")
        .put("type", "integer")
        .put("description", "tab_focus, tab_close: the tab's number from tab_list.");
    schema.putArray("required").add("action");
    schema.put("additionalProperties", false);
    String description =
        "Drives a headless web browser for pages that need one (scripts, forms, logins)."
            + " navigate(url) loads a page; snapshot() lists its interactive elements with refs"
            + " such as 3-12; click(ref), type(ref, text or secret), press_key(key) and"
            + " scroll(direction) act on it; content() reads it as markdown; screenshot(full_page)"
            + " takes a PNG; evaluate(script) runs JavaScript when the host allows it; tab_open(url),"
            + " tab_list, tab_focus(tab) and tab_close(tab) manage tabs; close ends the browser."
            + " Take a new snapshot after anything that changes the page: older refs are refused.";
    Duration timeout =
        config.startTimeout().plus(config.navigationTimeout()).plus(Duration.ofSeconds(15));
    if (timeout.compareTo(ToolCall.DEFAULT_TIMEOUT) < 0) {
      timeout = ToolCall.DEFAULT_TIMEOUT;
    }
    return ExecutableTool.of(new ToolSpec(NAME, description, schema, SOURCE), this::execute)
        .withTimeout(timeout);
  }

  private ToolResult execute(ToolCall call, JsonNode arguments) throws Exception {
    String action = arguments.path("action").asString("");
    String id = owner(call);
    if (action.equals("close")) {
      return ToolResult.success(
          browsers.close(id)
              ? "The browser is closed and its profile deleted. The next action starts a new one."
              : "No browser was open in this session.");
    }
    // Check what needs no browser before starting one.
    switch (action) {
      case "navigate", "tab_open" -> checked(text(arguments, "url", action));
      case "evaluate" -> {
        if (!config.evaluate()) {
          throw ToolException.invalidArguments(
              "evaluate is turned off on this host (browser.evaluate is false): read the page with"
                  + " snapshot or content instead.");
        }
        text(arguments, "script", action);
      }
      default -> {}
    }
    Browsers.Session session = browsers.acquire(id);
    try {
      ToolResult result = act(session, action, arguments, call);
      return redacted(session, result);
    } catch (ToolException e) {
      // A URL or title in an error may hold what a secret made (a form sent by GET).
      throw new ToolException(
          new dev.toolhost.core.ToolError(
              e.error().code(), session.redacted(e.error().message()), e.error().detail()));
    } catch (Cdp.CdpException e) {
      if (session.browser.gone()) {
        browsers.close(id);
        throw new ToolException(
            ErrorCode.UNAVAILABLE,
            "The browser has gone (it crashed or was closed); the next action starts a new one.");
      }
      throw new ToolException(
          ErrorCode.EXECUTION_FAILED, session.redacted("The browser refused: " + e.getMessage()));
    } catch (TimeoutException e) {
      throw new ToolException(
          ErrorCode.TIMEOUT,
          "The browser did not answer within " + Chromium.COMMAND.toSeconds() + "s.");
    } finally {
      session.used = Instant.now();
      session.lock.unlock();
    }
  }

  /**
   * The key of the browser a call reaches: its user's and its session's. The session id alone for a
   * call of no user; for a user's, the user and the session each as one segment ({@code /} and
   * {@code %} escaped) joined by a {@code /}, which no key of a call without a user holds: so two
   * users who send one session id, or both none, never reach one browser.
   */
  static String owner(ToolCall call) {
    String session = segment(call.sessionId().filter(s -> !s.isBlank()).orElse(""));
    return call.user()
        .filter(user -> !user.isBlank())
        .map(user -> segment(user) + "/" + session)
        .orElse(session);
  }

  private static String segment(String text) {
    return text.replace("%", "%25").replace("/", "%2F");
  }

  private ToolResult act(Browsers.Session session, String action, JsonNode arguments, ToolCall call)
      throws Exception {
    return switch (action) {
      case "navigate" -> navigate(session, tab(session), checked(text(arguments, "url", action)));
      case "snapshot" -> ToolResult.success(snapshot(session).text());
      case "click" -> click(session, arguments);
      case "type" -> type(session, arguments);
      case "press_key" -> pressKey(session, text(arguments, "key", action));
      case "scroll" -> scroll(session, arguments.path("direction").asString("down"));
      case "screenshot" -> screenshot(session, arguments.path("full_page").asBoolean(false));
      case "content" -> content(session, call);
      case "evaluate" -> evaluate(session, text(arguments, "script", action));
      case "tab_open" -> {
        URI url = checked(text(arguments, "url", action));
        Chromium.Tab tab = session.browser.open();
        session.current = tab;
        yield navigate(session, tab, url);
      }
      case "tab_list" -> ToolResult.success(tabList(session));
      case "tab_focus" -> {
        Chromium.Tab tab = numbered(session, arguments);
        session.browser.send(
            "Target.activateTarget",
            Cdp.params().put("targetId", tab.targetId),
            Optional.empty(),
            Chromium.COMMAND);
        session.current = tab;
        yield ToolResult.success(
            "Tab "
                + tab.number
                + " is current: "
                + describe(session, tab)
                + ". Take a snapshot to act on it.");
      }
      case "tab_close" -> {
        Chromium.Tab tab = numbered(session, arguments);
        session.browser.close(tab);
        List<Chromium.Tab> left = session.browser.tabs();
        if (session.current == tab) {
          session.current = left.isEmpty() ? null : left.get(left.size() - 1);
        }
        yield ToolResult.success(
            "Closed tab "
                + tab.number
                + "."
                + (session.current == null
                    ? " No tab is open; navigate opens one."
                    : " Tab "
                        + session.current.number
                        + " is current: "
                        + describe(session, session.current)
                        + "."));
      }
      default ->
          throw ToolException.invalidArguments(
              "action '" + action + "' is not one of: " + String.join(", ", ACTIONS) + ".");
    };
  }

  // ---- navigation ----

  private URI checked(String url) {
    URI uri;
    try {
      uri = OutboundHttp.checkedUrl(url);
      vetting.vet(uri);
    } catch (OutboundException e) {
      throw ToolException.invalidArguments("The browser will not open it: " + e.getMessage() + ".");
    }
    return uri;
  }

  private ToolResult navigate(Browsers.Session session, Chromium.Tab tab, URI url)
      throws Exception {
    tab.takeRefusal();
    JsonNode answer;
    try {
      answer =
          session.browser.send(
              "Page.navigate",
              Cdp.params().put("url", url.toString()),
              Optional.of(tab.session),
              config.navigationTimeout());
    } catch (TimeoutException e) {
      stop(session, tab);
      throw new ToolException(ErrorCode.TIMEOUT, notLoaded(url));
    }
    String error = answer.path("errorText").asString("");
    if (!error.isEmpty()) {
      Optional<String> refusal = tab.takeRefusal();
      if (refusal.isPresent()) {
        throw ToolException.invalidArguments(
            "The page was not opened: "
                + refusal.get()
                + ". Addresses like it are refused in any"
                + " spelling.");
      }
      throw new ToolException(
          ErrorCode.UNAVAILABLE, "The page '" + url + "' did not load (" + error + ").");
    }
    if (!settle(session, tab, false)) {
      throw new ToolException(ErrorCode.TIMEOUT, notLoaded(url));
    }
    return ToolResult.success(
        "Opened "
            + describe(session, tab)
            + " in tab "
            + tab.number
            + "."
            + refusals(tab)
            + " Take a snapshot to see what you can act on.");
  }

  private String notLoaded(URI url) {
    return "The page '"
        + url
        + "' did not finish loading within "
        + config.navigationTimeout().toSeconds()
        + "s, so loading was stopped. What had loaded can still be read with snapshot or content.";
  }

  /**
   * Waits for the tab's page to finish loading, after a navigation or an action that may start one;
   * on time out, stops the loading and returns false.
   */
  private boolean settle(Browsers.Session session, Chromium.Tab tab, boolean afterAction)
      throws Exception {
    long end = System.nanoTime() + config.navigationTimeout().toNanos();
    if (afterAction) {
      // An action's navigation starts a moment after it.
      Thread.sleep(150);
    }
    while (true) {
      Duration left = Duration.ofNanos(end - System.nanoTime());
      if (left.isNegative() || left.isZero() || !tab.awaitLoaded(left)) {
        stop(session, tab);
        return false;
      }
      JsonNode state =
          session.browser.send(
              "Runtime.evaluate",
              Cdp.params().put("expression", "document.readyState").put("returnByValue", true),
              Optional.of(tab.session),
              Chromium.COMMAND);
      if (state.path("result").path("value").asString("").equals("complete") && !tab.loading()) {
        return true;
      }
      Thread.sleep(50);
    }
  }

  private void stop(Browsers.Session session, Chromium.Tab tab) {
    try {
      session.browser.send("Page.stopLoading", Optional.of(tab.session), Chromium.COMMAND);
    } catch (Exception e) {
      LOG.debug("Page.stopLoading failed: {}", e.toString());
    }
  }

  private static String refusals(Chromium.Tab tab) {
    return tab.takeRefusal()
        .map(r -> " Some of the page's requests were refused, for example: " + r + ".")
        .orElse("");
  }

  private static String describe(Chromium.Tab tab) {
    String title = tab.title().isBlank() ? "(no title)" : "'" + tab.title() + "'";
    return title + " at " + tab.url();
  }

  /** The tab's title and URL as its page has them now. */
  private static String describe(Browsers.Session session, Chromium.Tab tab) {
    try {
      JsonNode now =
          session
              .browser
              .send(
                  "Runtime.evaluate",
                  Cdp.params()
                      .put("expression", "[document.title, location.href]")
                      .put("returnByValue", true),
                  Optional.of(tab.session),
                  Chromium.COMMAND)
              .path("result")
              .path("value");
      tab.seen(now.path(0).asString(""), now.path(1).asString(tab.url()));
    } catch (Exception e) {
      // A page that does not answer keeps what was last known of it.
      LOG.debug("The tab's title was not read: {}", e.toString());
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
    }
    return describe(tab);
  }

  /** The session's current tab; a new one when it has none. */
  private Chromium.Tab tab(Browsers.Session session) throws Exception {
    List<Chromium.Tab> tabs = session.browser.tabs();
    if (session.current == null || !tabs.contains(session.current)) {
      session.current = tabs.isEmpty() ? session.browser.open() : tabs.get(0);
    }
    return session.current;
  }

  // ---- snapshots and refs ----

  private Snapshot snapshot(Browsers.Session session) throws Exception {
    Chromium.Tab tab = tab(session);
    JsonNode tree =
        session.browser.send(
            "Accessibility.getFullAXTree",
            Cdp.params(),
            Optional.of(tab.session),
            Chromium.COMMAND);
    String header =
        "Tab " + tab.number + ": " + describe(session, tab) + "\n" + refusals(tab).strip() + "\n";
    Snapshot snapshot =
        Snapshot.of(++session.snapshots, tree, header.replace("\n\n", "\n"), config);
    session.snapshot = Optional.of(snapshot);
    session.snapshotTab = tab;
    session.snapshotNavigations = tab.navigations();
    return snapshot;
  }

  /** A ref's element: its backend node id and label, or a clear error. */
  private record Target(long node, String label, String ref) {}

  private Target target(Browsers.Session session, JsonNode arguments, String action)
      throws Exception {
    String ref = text(arguments, "ref", action).strip();
    int dash = ref.indexOf('-');
    int number;
    int index;
    try {
      number = Integer.parseInt(ref.substring(0, Math.max(0, dash)));
      index = Integer.parseInt(ref.substring(dash + 1));
    } catch (NumberFormatException | StringIndexOutOfBoundsException e) {
      throw ToolException.invalidArguments(
          "ref '"
              + ref
              + "' is not a ref: refs look like 3-12, as the latest snapshot lists them.");
    }
    if (session.snapshot.isEmpty()) {
      throw ToolException.invalidArguments(
          "ref '"
              + ref
              + "' is unknown: no snapshot was taken yet. Take a snapshot, then use a ref"
              + " from it.");
    }
    Snapshot latest = session.snapshot.get();
    if (number != latest.number()) {
      throw ToolException.invalidArguments(
          "ref '"
              + ref
              + "' is from snapshot "
              + number
              + ", but the latest is snapshot "
              + latest.number()
              + ": take a new snapshot and use a ref from it.");
    }
    Chromium.Tab tab = tab(session);
    if (tab != session.snapshotTab || tab.navigations() != session.snapshotNavigations) {
      throw ToolException.invalidArguments(
          "ref '"
              + ref
              + "' is stale: the page has changed since snapshot "
              + number
              + " ("
              + (tab != session.snapshotTab ? "another tab is current" : "it navigated")
              + "). Take a new snapshot and use a ref from it.");
    }
    if (index < 1 || index > latest.nodes().size()) {
      throw ToolException.invalidArguments(
          "ref '"
              + ref
              + "' is out of range: snapshot "
              + number
              + (latest.nodes().isEmpty()
                  ? " has no refs."
                  : " has refs " + number + "-1 to " + number + "-" + latest.nodes().size() + ".")
              + " Take a new snapshot if the page has changed.");
    }
    return new Target(latest.nodes().get(index - 1), latest.labels().get(index - 1), ref);
  }

  private ToolException gone(Target target) {
    return ToolException.invalidArguments(
        "ref '"
            + target.ref()
            + "' ("
            + target.label()
            + ") is no longer in the page: take a new snapshot and use a ref from it.");
  }

  // ---- actions ----

  private ToolResult click(Browsers.Session session, JsonNode arguments) throws Exception {
    Target target = target(session, arguments, "click");
    Chromium.Tab tab = tab(session);
    Optional<String> s = Optional.of(tab.session);
    ObjectNode node = Cdp.params().put("backendNodeId", target.node());
    JsonNode quads;
    try {
      session.browser.send("DOM.scrollIntoViewIfNeeded", node, s, Chromium.COMMAND);
      quads = session.browser.send("DOM.getContentQuads", node, s, Chromium.COMMAND).path("quads");
    } catch (Cdp.CdpException e) {
      if (e.getMessage().contains("No node") || e.getMessage().contains("not found")) {
        throw gone(target);
      }
      if (e.getMessage().contains("not visible")) {
        throw ToolException.invalidArguments(
            "ref '"
                + target.ref()
                + "' ("
                + target.label()
                + ") is not visible, so it cannot be"
                + " clicked.");
      }
      throw e;
    }
    if (quads.isEmpty()) {
      throw ToolException.invalidArguments(
          "ref '"
              + target.ref()
              + "' ("
              + target.label()
              + ") has no visible box, so it cannot be"
              + " clicked.");
    }
    JsonNode q = quads.get(0);
    double x =
        (q.get(0).asDouble() + q.get(2).asDouble() + q.get(4).asDouble() + q.get(6).asDouble()) / 4;
    double y =
        (q.get(1).asDouble() + q.get(3).asDouble() + q.get(5).asDouble() + q.get(7).asDouble()) / 4;
    for (String type : List.of("mouseMoved", "mousePressed", "mouseReleased")) {
      ObjectNode event = Cdp.params().put("type", type).put("x", x).put("y", y);
      if (!type.equals("mouseMoved")) {
        event.put("button", "left").put("clickCount", 1);
      }
      session.browser.send("Input.dispatchMouseEvent", event, s, Chromium.COMMAND);
    }
    boolean loaded = settle(session, tab, true);
    return ToolResult.success(
        "Clicked "
            + target.ref()
            + " ("
            + target.label()
            + "). The tab shows "
            + describe(session, tab)
            + "."
            + (loaded ? "" : " It did not finish loading in time, so loading was stopped.")
            + refusals(tab)
            + " Take a new snapshot to see the result.");
  }

  private ToolResult type(Browsers.Session session, JsonNode arguments) throws Exception {
    boolean hasText = arguments.hasNonNull("text");
    boolean hasSecret = arguments.hasNonNull("secret");
    if (hasText == hasSecret) {
      throw ToolException.invalidArguments(
          "type needs exactly one of 'text' (what to type) and 'secret' (the name of a configured"
              + " secret).");
    }
    String text;
    String what;
    if (hasSecret) {
      String name = arguments.path("secret").asString();
      if (!config.secrets().contains(name)) {
        throw ToolException.invalidArguments(
            "secret '"
                + name
                + "' is not configured; "
                + (config.secrets().isEmpty()
                    ? "this host configures none (browser.secrets)."
                    : "the configured ones are: " + String.join(", ", config.secrets()) + "."));
      }
      String value = environment.get(name);
      if (value == null || value.isEmpty()) {
        throw new ToolException(
            ErrorCode.UNAVAILABLE,
            "secret '"
                + name
                + "' is configured but not set in the host's environment; ask the"
                + " operator.");
      }
      session.typed.put(name, value);
      text = value;
      what = "the secret " + name;
    } else {
      text = arguments.path("text").asString();
      what = text.length() == 1 ? "1 character" : text.length() + " characters";
    }
    Target target = target(session, arguments, "type");
    Chromium.Tab tab = tab(session);
    Optional<String> s = Optional.of(tab.session);
    ObjectNode node = Cdp.params().put("backendNodeId", target.node());
    try {
      session.browser.send("DOM.focus", node, s, Chromium.COMMAND);
      String objectId =
          session
              .browser
              .send("DOM.resolveNode", node, s, Chromium.COMMAND)
              .path("object")
              .path("objectId")
              .asString();
      // Select what the field holds, so that typing replaces it.
      session.browser.send(
          "Runtime.callFunctionOn",
          Cdp.params()
              .put("objectId", objectId)
              .put(
                  "functionDeclaration",
                  "function() { if (typeof this.select === 'function') { this.select(); }"
                      + " else if (this.isContentEditable) {"
                      + " document.getSelection().selectAllChildren(this); } }"),
          s,
          Chromium.COMMAND);
    } catch (Cdp.CdpException e) {
      if (e.getMessage().contains("No node") || e.getMessage().contains("not found")) {
        throw gone(target);
      }
      if (e.getMessage().contains("focusable")) {
        throw ToolException.invalidArguments(
            "ref '"
                + target.ref()
                + "' ("
                + target.label()
                + ") cannot take typing; type into a"
                + " text field.");
      }
      throw e;
    }
    session.browser.send("Input.insertText", Cdp.params().put("text", text), s, Chromium.COMMAND);
    return ToolResult.success(
        "Typed " + what + " into " + target.ref() + " (" + target.label() + ").");
  }

  private ToolResult pressKey(Browsers.Session session, String key) throws Exception {
    ObjectNode down = Cdp.params().put("type", "keyDown");
    if (KEYS.containsKey(key)) {
      int code = KEYS.get(key);
      String name = key.equals("Space") ? " " : key;
      down.put("key", name).put("windowsVirtualKeyCode", code).put("nativeVirtualKeyCode", code);
      down.put("code", key.equals("Space") ? "Space" : key);
      if (key.equals("Enter")) {
        down.put("text", "\r");
      } else if (key.equals("Space")) {
        down.put("text", " ");
      }
    } else if (key.codePointCount(0, key.length()) == 1) {
      int code = Character.toUpperCase(key.codePointAt(0));
      down.put("key", key).put("text", key);
      if ((code >= 'A' && code <= 'Z') || (code >= '0' && code <= '9')) {
        down.put("windowsVirtualKeyCode", code);
      }
    } else {
      throw ToolException.invalidArguments(
          "key '"
              + key
              + "' is not one press_key knows: use one of "
              + String.join(", ", KEYS.keySet().stream().sorted().toList())
              + ", or one character. To type text, use type.");
    }
    Chromium.Tab tab = tab(session);
    Optional<String> s = Optional.of(tab.session);
    session.browser.send("Input.dispatchKeyEvent", down, s, Chromium.COMMAND);
    ObjectNode up = down.deepCopy().put("type", "keyUp");
    up.remove("text");
    session.browser.send("Input.dispatchKeyEvent", up, s, Chromium.COMMAND);
    boolean loaded = settle(session, tab, true);
    return ToolResult.success(
        "Pressed "
            + key
            + ". The tab shows "
            + describe(session, tab)
            + "."
            + (loaded ? "" : " It did not finish loading in time, so loading was stopped.")
            + refusals(tab));
  }

  private ToolResult scroll(Browsers.Session session, String direction) throws Exception {
    int sign =
        switch (direction) {
          case "down" -> 1;
          case "up" -> -1;
          default ->
              throw ToolException.invalidArguments(
                  "direction '" + direction + "' is not up or down.");
        };
    Chromium.Tab tab = tab(session);
    JsonNode value =
        session
            .browser
            .send(
                "Runtime.evaluate",
                Cdp.params()
                    .put(
                        "expression",
                        "(() => { window.scrollBy(0, "
                            + sign
                            + " * Math.round(window.innerHeight * 0.8)); return [Math.round(window.scrollY),"
                            + " window.innerHeight, document.documentElement.scrollHeight]; })()")
                    .put("returnByValue", true),
                Optional.of(tab.session),
                Chromium.COMMAND)
            .path("result")
            .path("value");
    long top = value.path(0).asLong();
    long height = value.path(1).asLong();
    long total = value.path(2).asLong();
    return ToolResult.success(
        "Scrolled "
            + direction
            + ": the view shows "
            + top
            + " to "
            + Math.min(total, top + height)
            + " of "
            + total
            + " pixels.");
  }

  private ToolResult screenshot(Browsers.Session session, boolean fullPage) throws Exception {
    Chromium.Tab tab = tab(session);
    Optional<String> s = Optional.of(tab.session);
    ObjectNode params = Cdp.params().put("format", "png");
    if (fullPage) {
      JsonNode size =
          session.browser.send("Page.getLayoutMetrics", s, Chromium.COMMAND).path("cssContentSize");
      params.put("captureBeyondViewport", true);
      params
          .putObject("clip")
          .put("x", 0)
          .put("y", 0)
          .put("width", Math.min(4096, Math.max(1, size.path("width").asDouble())))
          .put("height", Math.min(16384, Math.max(1, size.path("height").asDouble())))
          .put("scale", 1);
    }
    String data =
        session
            .browser
            .send("Page.captureScreenshot", params, s, config.navigationTimeout())
            .path("data")
            .asString();
    byte[] png = Base64.getDecoder().decode(data);
    Path directory = config.screenshotDir().toAbsolutePath().normalize();
    Files.createDirectories(directory);
    String name =
        "browser-"
            + fileSafe(session.id)
            + "-"
            + System.currentTimeMillis()
            + "-"
            + (++session.screenshots)
            + ".png";
    Path file = directory.resolve(name).normalize();
    if (!file.getParent().equals(directory)) {
      // fileSafe leaves no separator; this guards the rule itself.
      throw new IOException("screenshot path left its directory");
    }
    // O_CREAT|O_EXCL with O_NOFOLLOW: a name planted in the directory beforehand (a link to a
    // host file, should the directory be one a sandbox can write) fails the write, never
    // redirects it.
    Files.write(
        file,
        png,
        java.nio.file.StandardOpenOption.CREATE_NEW,
        java.nio.file.StandardOpenOption.WRITE,
        java.nio.file.LinkOption.NOFOLLOW_LINKS);
    int width = png.length >= 24 ? readInt(png, 16) : 0;
    int height = png.length >= 24 ? readInt(png, 20) : 0;
    ObjectNode structured =
        JSON.createObjectNode()
            .put("path", file.toString())
            .put("mime_type", "image/png")
            .put("width", width)
            .put("height", height)
            .put("bytes", png.length);
    ToolResult.Success shot =
        ToolResult.success(
            "Screenshot of "
                + describe(session, tab)
                + (fullPage ? " (whole page)" : "")
                + ": "
                + width
                + "x"
                + height
                + " PNG saved to "
                + file,
            structured);
    if (!session.typed.isEmpty()) {
      // Pixels cannot be redacted: a typed secret may show in a field, so the model gets no image.
      return ToolResult.success(
          shot.content()
              + ". It is not shown here, for a secret was typed in this session and may be"
              + " visible in it.",
          structured);
    }
    // MCP clients get the PNG itself; others the path the text gives.
    return shot.withImages(
        List.of(new ToolResult.Image("image/png", Base64.getEncoder().encodeToString(png))));
  }

  private static int readInt(byte[] b, int at) {
    return ((b[at] & 0xff) << 24)
        | ((b[at + 1] & 0xff) << 16)
        | ((b[at + 2] & 0xff) << 8)
        | (b[at + 3] & 0xff);
  }

  static String fileSafe(String text) {
    StringBuilder out = new StringBuilder();
    for (char c : text.toCharArray()) {
      if (out.length() >= 40) {
        break;
      }
      out.append(Character.isLetterOrDigit(c) && c < 0x80 ? c : '_');
    }
    return out.isEmpty() ? "default" : out.toString();
  }

  private ToolResult content(Browsers.Session session, ToolCall call) throws Exception {
    Chromium.Tab tab = tab(session);
    String html =
        session
            .browser
            .send(
                "Runtime.evaluate",
                Cdp.params()
                    .put("expression", "document.documentElement.outerHTML")
                    .put("returnByValue", true),
                Optional.of(tab.session),
                Chromium.COMMAND)
            .path("result")
            .path("value")
            .asString("");
    PageConverter.Page page = converter.convert(Jsoup.parse(html, tab.url()));
    String markdown = session.redacted(page.markdown());
    if (markdown.length() <= config.chunkThreshold()) {
      return ToolResult.success(markdown);
    }
    Optional<String> sessionId = call.sessionId().filter(id -> !id.isBlank());
    if (sessionId.isPresent() && memory.isPresent()) {
      List<ContentChunker.Chunk> chunks = new ContentChunker(config.chunkLength()).chunk(markdown);
      String base =
          WorkingMemory.sessionNamespace(sessionId.get())
              + "/browser-tab"
              + tab.number
              + "-"
              // Random, not the time: two reads of a tab in one millisecond keep their own chunks.
              + UUID.randomUUID().toString().substring(0, 8);
      ResultChunker.Stored stored =
          ResultChunker.store(memory.get(), base, chunks, config.chunkTtl(), CATEGORY);
      return ToolResult.success(
          ResultChunker.index(
              "Page '" + session.redacted(tab.url()) + "'",
              "page",
              markdown.length(),
              chunks,
              stored.keys(),
              stored.indexKey()));
    }
    int cut = config.chunkThreshold();
    if (Character.isHighSurrogate(markdown.charAt(cut - 1))) {
      cut--;
    }
    return ToolResult.success(
        markdown.substring(0, cut)
            + "\n\n[Content truncated — "
            + ResultChunker.chars(markdown.length() - cut)
            + " chars omitted]");
  }

  private ToolResult evaluate(Browsers.Session session, String script) throws Exception {
    Chromium.Tab tab = tab(session);
    JsonNode answer =
        session.browser.send(
            "Runtime.evaluate",
            Cdp.params()
                .put("expression", script)
                .put("returnByValue", true)
                .put("awaitPromise", true)
                .put("timeout", config.navigationTimeout().toMillis()),
            Optional.of(tab.session),
            config.navigationTimeout().plusSeconds(5));
    JsonNode thrown = answer.path("exceptionDetails");
    if (!thrown.isMissingNode()) {
      String message =
          thrown
              .path("exception")
              .path("description")
              .asString(thrown.path("text").asString("an error"));
      throw new ToolException(
          ErrorCode.EXECUTION_FAILED,
          session.redacted("The script threw: " + Snapshot.cut(message, 1000)));
    }
    JsonNode result = answer.path("result");
    String value =
        result.has("value")
            ? JSON.writeValueAsString(result.path("value"))
            : result.path("description").asString(result.path("type").asString("undefined"));
    return ToolResult.success(Snapshot.cut(value, Math.max(1000, config.maxTextChars())));
  }

  private String tabList(Browsers.Session session) throws Exception {
    Chromium.Tab current = tab(session);
    StringBuilder out = new StringBuilder();
    for (Chromium.Tab tab : session.browser.tabs()) {
      out.append("Tab ")
          .append(tab.number)
          .append(tab == current ? " (current)" : "")
          .append(": ")
          .append(describe(session, tab))
          .append('\n');
    }
    return out.toString();
  }

  private static Chromium.Tab numbered(Browsers.Session session, JsonNode arguments) {
    if (!arguments.path("tab").isIntegralNumber()) {
      throw ToolException.invalidArguments(
          "this action needs 'tab': a tab's number from tab_list.");
    }
    int number = arguments.path("tab").asInt();
    List<Integer> numbers = new ArrayList<>();
    for (Chromium.Tab tab : session.browser.tabs()) {
      if (tab.number == number) {
        return tab;
      }
      numbers.add(tab.number);
    }
    throw ToolException.invalidArguments(
        "there is no tab "
            + number
            + "; the open tabs are "
            + (numbers.isEmpty() ? "none" : numbers.toString())
            + " (see tab_list).");
  }

  private static String text(JsonNode arguments, String name, String action) {
    JsonNode value = arguments.path(name);
    if (!value.isString() || value.asString().isBlank()) {
      throw ToolException.invalidArguments(action + " needs '" + name + "'.");
    }
    return value.asString();
  }

  private static ToolResult redacted(Browsers.Session session, ToolResult result) {
    if (session.typed.isEmpty() || !(result instanceof ToolResult.Success success)) {
      return result;
    }
    Optional<JsonNode> structured =
        success.structured().map(s -> JSON.readTree(session.redacted(JSON.writeValueAsString(s))));
    return new ToolResult.Success(
        session.redacted(success.content()), structured, success.images());
  }
}
