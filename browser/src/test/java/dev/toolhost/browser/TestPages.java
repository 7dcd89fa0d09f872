package dev.toolhost.browser;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Test pages are a local web site on a loopback address that the browser tests load: a form, a page
 * built by a script, 300 buttons, a page that never finishes loading, a redirect to a refused
 * address, a page whose parts sit on a refused address, and a long page. It records each path it is
 * asked for.
 */
final class TestPages implements AutoCloseable {

  private final HttpServer server;
  private final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
  private final CountDownLatch stopping = new CountDownLatch(1);
  final List<String> requests = new CopyOnWriteArrayList<>();

  /**
   * A site on the address.
   *
   * @param address the loopback address to listen on
   * @param refused a base URL on a refused address, which some pages point at
   */
  TestPages(String address, String refused) throws IOException {
    server = HttpServer.create(new InetSocketAddress(address, 0), 0);
    server.setExecutor(threads);
    server.createContext("/", exchange -> handle(exchange, refused));
    server.start();
  }

  String url(String path) {
    InetSocketAddress a = server.getAddress();
    return "http://" + a.getAddress().getHostAddress() + ":" + a.getPort() + path;
  }

  private void handle(HttpExchange exchange, String refused) throws IOException {
    try (exchange) {
      String path = exchange.getRequestURI().getRawPath();
      requests.add(path);
      Map<String, String> query = query(exchange.getRequestURI().getRawQuery());
      switch (path) {
        case "/form" ->
            html(
                exchange,
                "<title>Sign up</title><h1>Sign up</h1>"
                    + "<form action='/result' method='get'>"
                    + "<label for='name'>Name</label> <input id='name' name='name' type='text'>"
                    + "<label for='pw'>Password</label> <input id='pw' name='pw' type='text'>"
                    + "<label><input type='checkbox' name='agree'> I agree</label>"
                    + "<button type='submit'>Send</button></form>");
        case "/result" ->
            html(
                exchange,
                "<title>Result</title><h1>Thanks</h1><p>name="
                    + escape(query.getOrDefault("name", ""))
                    + "</p><p>agree="
                    + escape(query.getOrDefault("agree", "off"))
                    + "</p><p>pw="
                    + escape(query.getOrDefault("pw", ""))
                    + "</p>");
        case "/js" ->
            html(
                exchange,
                "<title>Built</title><div id='root'></div><script>"
                    + "const root = document.getElementById('root');"
                    + "const h = document.createElement('h1'); h.textContent = 'Built by script';"
                    + "root.appendChild(h);"
                    + "const b = document.createElement('button'); b.textContent = 'Dynamic button';"
                    + "b.onclick = () => { document.title = 'Clicked'; h.textContent = 'Was clicked'; };"
                    + "root.appendChild(b);"
                    + "</script>");
        case "/buttons" -> {
          StringBuilder page = new StringBuilder("<title>Buttons</title>");
          for (int i = 1; i <= 300; i++) {
            page.append("<button>Button ").append(i).append("</button>");
          }
          html(exchange, page.toString());
        }
        case "/slow" ->
            html(exchange, "<title>Slow</title><p>Partly here</p><img src='/never' alt='never'>");
        case "/never" -> {
          try {
            // Never answers while the test runs: the page that embeds it never finishes.
            stopping.await();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        }
        case "/to-form" -> {
          exchange.getResponseHeaders().add("Location", "/form");
          exchange.sendResponseHeaders(302, -1);
        }
        case "/redirect" -> {
          exchange.getResponseHeaders().add("Location", refused + "/");
          exchange.sendResponseHeaders(302, -1);
        }
        case "/parts" ->
            html(
                exchange,
                "<title>Parts</title><p>Outer page</p><img src='"
                    + refused
                    + "/pixel.png' alt='x'><iframe src='"
                    + refused
                    + "/frame'></iframe><script>fetch('"
                    + refused
                    + "/api').catch(() => {});</script>");
        case "/long" -> {
          StringBuilder page = new StringBuilder("<title>Long</title>");
          for (int i = 1; i <= 40; i++) {
            page.append("<h2>Section ").append(i).append("</h2><p>");
            page.append("Words of section ")
                .append(i)
                .append(". ".repeat(1))
                .append("Lorem ipsum dolor sit amet. ".repeat(10));
            page.append("</p>");
          }
          html(exchange, page.toString());
        }
        case "/socket" ->
            html(
                exchange,
                "<title>Socket</title><p id='state'>waiting</p><script>"
                    + "const state = (text) => { document.getElementById('state').textContent = text; };"
                    + "try {"
                    + " const ws = new WebSocket('"
                    + refused.replace("http:", "ws:")
                    + "/ws');"
                    + " ws.onopen = () => state('open');"
                    + " ws.onerror = () => state('failed');"
                    + "} catch (e) { state('refused'); }"
                    + "</script>");
        case "/popup-socket" ->
            // A pop-up's first document has its own WebSocket, reached from the opener before any
            // script of the pop-up's set-up has replaced it: the way around an in-page stub. A
            // fresh frame's window is tried too.
            html(
                exchange,
                "<title>Popup socket</title><p id='state'>waiting</p><p id='frame'>-</p>"
                    + "<button id='go'>Open socket</button><script>"
                    + "const state = document.getElementById('state');"
                    + "const target = '"
                    + refused.replace("http:", "ws:")
                    + "';"
                    + "const f = document.createElement('iframe'); document.body.appendChild(f);"
                    + "try { new f.contentWindow.WebSocket(target + '/frame-ws'); } catch (e) {"
                    + " document.getElementById('frame').textContent = 'frame thrown'; }"
                    + "document.getElementById('go').onclick = () => {"
                    + " const w = window.open('', '_blank');"
                    + " try { const ws = new w.WebSocket(target + '/popup-ws');"
                    + " ws.onopen = () => { state.textContent = 'socket open'; };"
                    + " ws.onerror = () => { state.textContent = 'socket failed'; };"
                    + " } catch (e) { state.textContent = 'socket thrown ' + e; } };"
                    + "</script>");
        case "/image" ->
            html(
                exchange,
                "<title>Image</title><p>An image</p><p id='state'>loading</p><img alt='pic'"
                    + " onload=\"document.getElementById('state').textContent = 'loaded'\""
                    + " onerror=\"document.getElementById('state').textContent = 'failed'\""
                    + " src='"
                    + escape(query.getOrDefault("src", "")).replace("'", "&#39;")
                    + "'>");
        case "/popup" ->
            html(exchange, "<title>Popup</title><a href='/js' target='_blank'>Open built page</a>");
        default -> {
          byte[] body = "no such page".getBytes(StandardCharsets.UTF_8);
          exchange.sendResponseHeaders(404, body.length);
          try (OutputStream out = exchange.getResponseBody()) {
            out.write(body);
          }
        }
      }
    }
  }

  private static void html(HttpExchange exchange, String body) throws IOException {
    byte[] bytes =
        ("<!doctype html><html><head><meta charset='utf-8'></head><body>" + body + "</body></html>")
            .getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().add("Content-Type", "text/html; charset=utf-8");
    exchange.sendResponseHeaders(200, bytes.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(bytes);
    }
  }

  private static Map<String, String> query(String raw) {
    Map<String, String> out = new TreeMap<>();
    if (raw == null) {
      return out;
    }
    for (String pair : raw.split("&")) {
      int eq = pair.indexOf('=');
      String key = eq < 0 ? pair : pair.substring(0, eq);
      String value = eq < 0 ? "" : pair.substring(eq + 1);
      out.put(
          URLDecoder.decode(key, StandardCharsets.UTF_8),
          URLDecoder.decode(value, StandardCharsets.UTF_8));
    }
    return out;
  }

  private static String escape(String text) {
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
  }

  @Override
  public void close() {
    stopping.countDown();
    server.stop(0);
    threads.close();
  }
}
