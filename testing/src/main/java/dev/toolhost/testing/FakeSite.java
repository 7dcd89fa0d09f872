package dev.toolhost.testing;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * A fake site is a local HTTP server that stands in for a web site or an outside API (Brave,
 * SearXNG, GitHub, OpenRouter) in tests: each path answers a fixed {@link Page} (status, headers,
 * body), a path with none answers 404, and every request is recorded with its headers so a test can
 * check what was sent (a key header, say).
 *
 * <p>Binds the given loopback address (127.0.0.2 lets a test open the site in an allow-list while
 * 127.0.0.1 stays refused) on a free port; handles requests on virtual threads; {@link #close()}
 * stops it. Thread-safe.
 */
public final class FakeSite implements AutoCloseable {

  /**
   * A page is what one path answers.
   *
   * @param status the HTTP status
   * @param headers response headers, such as Content-Type or Location
   * @param body the body
   */
  public record Page(int status, Map<String, String> headers, byte[] body) {
    public Page {
      headers = Map.copyOf(headers);
      Objects.requireNonNull(body, "body");
    }

    /** A 200 page of the given type and text, in UTF-8. */
    public static Page ok(String contentType, String body) {
      return new Page(
          200, Map.of("Content-Type", contentType), body.getBytes(StandardCharsets.UTF_8));
    }

    /** A page of the given status, type and text, in UTF-8. */
    public static Page of(int status, String contentType, String body) {
      return new Page(
          status, Map.of("Content-Type", contentType), body.getBytes(StandardCharsets.UTF_8));
    }

    /** A 302 redirect to the location. */
    public static Page redirect(String location) {
      return new Page(302, Map.of("Location", location), new byte[0]);
    }
  }

  /**
   * A request the site answered.
   *
   * @param method the method
   * @param uri the path and query as sent
   * @param headers the request's headers, names in lower case
   */
  public record Request(String method, URI uri, Map<String, List<String>> headers) {
    /** The first value of a header, or null. */
    public String header(String name) {
      List<String> values = headers.get(name.toLowerCase(java.util.Locale.ROOT));
      return values == null || values.isEmpty() ? null : values.getFirst();
    }
  }

  private final HttpServer server;
  private final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
  private final Map<String, Page> pages = new ConcurrentHashMap<>();
  private final BlockingQueue<Request> requests = new LinkedBlockingQueue<>();

  private FakeSite(String address) {
    try {
      server = HttpServer.create(new InetSocketAddress(InetAddress.getByName(address), 0), 64);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    server.setExecutor(threads);
    server.createContext("/", this::handle);
    server.start();
  }

  /** A site on 127.0.0.2. */
  public static FakeSite start() {
    return new FakeSite("127.0.0.2");
  }

  /** A site on the given loopback address. */
  public static FakeSite on(String address) {
    return new FakeSite(address);
  }

  /** Makes the path (with its query, if the request will have one) answer the page. */
  public FakeSite page(String pathAndQuery, Page page) {
    pages.put(pathAndQuery, page);
    return this;
  }

  /** The site's base URL, such as {@code http://127.0.0.2:41234}. */
  public String url() {
    InetSocketAddress address = server.getAddress();
    return "http://" + address.getAddress().getHostAddress() + ":" + address.getPort();
  }

  /** The port the site listens on. */
  public int port() {
    return server.getAddress().getPort();
  }

  /** The requests answered so far, oldest first, removed as they are taken. */
  public List<Request> takeRequests() {
    List<Request> taken = new java.util.ArrayList<>();
    requests.drainTo(taken);
    return taken;
  }

  private void handle(HttpExchange exchange) throws IOException {
    try (exchange) {
      URI uri = exchange.getRequestURI();
      Map<String, List<String>> headers = new java.util.TreeMap<>();
      exchange
          .getRequestHeaders()
          .forEach((name, values) -> headers.put(name.toLowerCase(java.util.Locale.ROOT), values));
      requests.add(new Request(exchange.getRequestMethod(), uri, headers));
      String key =
          uri.getRawQuery() == null ? uri.getRawPath() : uri.getRawPath() + "?" + uri.getRawQuery();
      Page page = pages.get(key);
      if (page == null) {
        page = pages.get(uri.getRawPath());
      }
      if (page == null) {
        page = Page.of(404, "text/plain", "no page at " + key);
      }
      page.headers().forEach((name, value) -> exchange.getResponseHeaders().add(name, value));
      exchange.sendResponseHeaders(
          page.status(), page.body().length == 0 ? -1 : page.body().length);
      if (page.body().length > 0) {
        try (OutputStream out = exchange.getResponseBody()) {
          out.write(page.body());
        }
      }
    }
  }

  @Override
  public void close() {
    server.stop(0);
    threads.close();
  }
}
