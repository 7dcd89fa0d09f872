package dev.toolhost.browser;

import dev.toolhost.web.OutboundException;
import dev.toolhost.web.OutboundHttp;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A vetting proxy is the forward proxy every browser connection goes through: it listens on
 * 127.0.0.1 on a port of its own, and Chromium is started with it as its only way out (no bypass,
 * not even for loopback). For each connection it resolves and checks the target host with the web
 * section's outbound policy ({@link OutboundHttp#checkedAddresses}) and connects only to an address
 * it checked, so there is no second lookup a name could answer differently (DNS rebinding), and
 * WebSocket and any other traffic that passes no request interception is checked too.
 *
 * <p>It takes {@code CONNECT host:port} (https and wss tunnels) and absolute-form plain HTTP
 * ({@code GET http://host/path}, which carries http and ws), sent on to the server in origin form
 * with {@code Connection: close}, one request per connection (Chromium sends ws through a proxy as
 * a CONNECT tunnel, so no upgrade passes the plain-HTTP path). A refused target is answered 403
 * with the reason, a request that is not a proxy request 400, a head larger than the limit 431. At
 * most {@code maxConnections} connections are served at once (more are answered 503); reading the
 * head and connecting are bounded by the timeouts, and a connection idle for the idle timeout is
 * closed.
 *
 * <p>Hand-written on virtual threads rather than built from jetty-proxy's handlers: the browser
 * module runs no Jetty server, and a tunnel plus one absolute-form request per connection is small
 * enough that its bounds (head size, connections, timeouts) are easier to see and test here than in
 * a server, a ConnectHandler and a ProxyHandler with its own HttpClient configured together.
 *
 * <p>Thread-safe. {@link #close()} stops listening and closes every open connection.
 */
final class VettingProxy implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(VettingProxy.class);

  /** Headers that concern the hop to the proxy, not the server; never sent on. */
  private static final Set<String> HOP =
      Set.of(
          "connection", "proxy-connection", "proxy-authorization", "keep-alive", "te", "trailer");

  private final OutboundHttp vetting;
  private final int maxHead;
  private final Duration connectTimeout;
  private final Duration idleTimeout;
  private final ServerSocket server;
  private final Semaphore slots;
  private final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
  private final Set<Socket> open = ConcurrentHashMap.newKeySet();
  private final Thread acceptor;
  private volatile boolean closed;

  /**
   * Starts a proxy on 127.0.0.1 on a free port.
   *
   * @param vetting the client whose policy every target passes
   * @param maxConnections how many connections are served at once
   * @param maxHead the largest request head, in bytes
   * @param connectTimeout how long reading a head and connecting may take
   * @param idleTimeout how long a connection may carry nothing before it is closed
   */
  VettingProxy(
      OutboundHttp vetting,
      int maxConnections,
      int maxHead,
      Duration connectTimeout,
      Duration idleTimeout)
      throws IOException {
    this.vetting = Objects.requireNonNull(vetting, "vetting");
    this.maxHead = maxHead;
    this.connectTimeout = connectTimeout;
    this.idleTimeout = idleTimeout;
    this.slots = new Semaphore(maxConnections);
    this.server = new ServerSocket();
    server.bind(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), 0), 128);
    this.acceptor = Thread.ofVirtual().name("toolhost-browser-proxy").start(this::accept);
  }

  /** A proxy with the defaults: 256 connections, 16 KiB heads, 10 s to connect, 5 min idle. */
  static VettingProxy start(OutboundHttp vetting) throws IOException {
    return new VettingProxy(vetting, 256, 16 * 1024, Duration.ofSeconds(10), Duration.ofMinutes(5));
  }

  /** The port it listens on, on 127.0.0.1. */
  int port() {
    return server.getLocalPort();
  }

  /** The {@code --proxy-server} value for Chromium. */
  String address() {
    return "http://127.0.0.1:" + port();
  }

  private void accept() {
    while (!closed) {
      Socket client;
      try {
        client = server.accept();
      } catch (IOException e) {
        if (!closed) {
          LOG.warn("The browser proxy stopped accepting: {}", e.toString());
        }
        return;
      }
      if (!slots.tryAcquire()) {
        // Answered here, without a thread: the answer fits the socket's send buffer.
        try (client) {
          answer(client.getOutputStream(), 503, "the proxy is serving too many connections");
        } catch (IOException e) {
          // The browser went.
        }
        continue;
      }
      open.add(client);
      try {
        threads.execute(
            () -> {
              try {
                serve(client);
              } finally {
                open.remove(client);
                quietly(client);
                slots.release();
              }
            });
      } catch (RuntimeException e) {
        // Closing: the executor takes no more.
        open.remove(client);
        quietly(client);
        slots.release();
      }
    }
  }

  /** A request head: its request line and header lines. */
  private record Head(String method, String target, String version, List<String> headers) {}

  private void serve(Socket client) {
    try {
      client.setSoTimeout((int) connectTimeout.toMillis());
      InputStream in = client.getInputStream();
      OutputStream out = client.getOutputStream();
      Head head;
      try {
        head = readHead(in);
      } catch (HeadTooLarge e) {
        answer(out, 431, "the request head is larger than " + maxHead + " bytes");
        // Read a little of what is left, so that closing with unread bytes does not reset the
        // connection before the browser reads the answer.
        client.shutdownOutput();
        byte[] rest = new byte[8192];
        for (int i = 0; i < 8 && in.read(rest) >= 0; i++) {
          // Discarded.
        }
        return;
      } catch (SocketTimeoutException e) {
        return;
      }
      if (head == null) {
        answer(out, 400, "not an HTTP request");
        return;
      }
      if (head.method().equals("CONNECT")) {
        connect(client, in, out, head);
      } else {
        forward(client, in, out, head);
      }
    } catch (IOException e) {
      LOG.debug("A browser proxy connection broke: {}", e.toString());
    }
  }

  private void connect(Socket client, InputStream in, OutputStream out, Head head)
      throws IOException {
    String target = head.target();
    int colon = target.lastIndexOf(':');
    int port;
    String host;
    try {
      host = target.substring(0, colon);
      port = Integer.parseInt(target.substring(colon + 1));
    } catch (RuntimeException e) {
      answer(out, 400, "CONNECT needs host:port, not '" + target + "'");
      return;
    }
    if (host.isEmpty() || port < 1 || port > 65535) {
      answer(out, 400, "CONNECT needs host:port, not '" + target + "'");
      return;
    }
    Socket upstream = open(out, host, port);
    if (upstream == null) {
      return;
    }
    try (upstream) {
      out.write("HTTP/1.1 200 Connection Established\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
      out.flush();
      pump(client, in, out, upstream);
    } finally {
      open.remove(upstream);
    }
  }

  private void forward(Socket client, InputStream in, OutputStream out, Head head)
      throws IOException {
    URI uri;
    try {
      uri = new URI(head.target());
    } catch (URISyntaxException e) {
      answer(out, 400, "not a proxy request: the target is not a valid URL");
      return;
    }
    String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
    if (!scheme.equals("http") || uri.getHost() == null) {
      answer(
          out,
          400,
          "not a proxy request: this proxy takes CONNECT host:port or an absolute http URL");
      return;
    }
    if (uri.getRawUserInfo() != null) {
      answer(out, 403, "a URL with a user name or password is refused");
      return;
    }
    int port = uri.getPort() < 0 ? 80 : uri.getPort();
    Socket upstream = open(out, uri.getHost(), port);
    if (upstream == null) {
      return;
    }
    try (upstream) {
      StringBuilder request = new StringBuilder();
      String path = uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/" : uri.getRawPath();
      if (uri.getRawQuery() != null) {
        path += "?" + uri.getRawQuery();
      }
      request.append(head.method()).append(' ').append(path).append(" HTTP/1.1\r\n");
      boolean hasHost = false;
      for (String line : head.headers()) {
        int c = line.indexOf(':');
        String name = (c < 0 ? line : line.substring(0, c)).strip().toLowerCase(Locale.ROOT);
        if (HOP.contains(name)) {
          continue;
        }
        hasHost |= name.equals("host");
        request.append(line).append("\r\n");
      }
      if (!hasHost) {
        request.append("Host: ").append(uri.getRawAuthority()).append("\r\n");
      }
      // One request per connection: the server closes after its answer, and so does the proxy.
      request.append("Connection: close\r\n\r\n");
      OutputStream up = upstream.getOutputStream();
      up.write(request.toString().getBytes(StandardCharsets.ISO_8859_1));
      up.flush();
      pump(client, in, out, upstream);
    } finally {
      open.remove(upstream);
    }
  }

  /** Checks the target and connects to a checked address; null when it answered the refusal. */
  private Socket open(OutputStream out, String host, int port) throws IOException {
    List<InetAddress> addresses;
    try {
      addresses = vetting.checkedAddresses(host, port);
    } catch (OutboundException e) {
      int status = e.refused() ? 403 : 502;
      answer(out, status, e.getMessage());
      return null;
    }
    IOException last = null;
    for (InetAddress address : addresses) {
      Socket socket = new Socket();
      try {
        socket.connect(new InetSocketAddress(address, port), (int) connectTimeout.toMillis());
        socket.setSoTimeout((int) idleTimeout.toMillis());
        open.add(socket);
        return socket;
      } catch (IOException e) {
        quietly(socket);
        last = e;
      }
    }
    answer(
        out,
        502,
        "could not connect to "
            + host
            + ":"
            + port
            + (last == null ? "" : " (" + last.getMessage() + ")"));
    return null;
  }

  /** Copies both ways until either side ends or is idle for the idle timeout. */
  private void pump(Socket client, InputStream in, OutputStream out, Socket upstream)
      throws IOException {
    client.setSoTimeout((int) idleTimeout.toMillis());
    InputStream upIn = upstream.getInputStream();
    OutputStream upOut = upstream.getOutputStream();
    Thread toServer =
        Thread.ofVirtual()
            .name("toolhost-browser-proxy-up")
            .start(
                () -> {
                  copy(in, upOut);
                  try {
                    upstream.shutdownOutput();
                  } catch (IOException e) {
                    // Gone already.
                  }
                });
    try {
      copy(upIn, out);
    } finally {
      open.remove(upstream);
      quietly(upstream);
      quietly(client);
      try {
        toServer.join();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private static void copy(InputStream from, OutputStream to) {
    byte[] buffer = new byte[16 * 1024];
    try {
      int n;
      while ((n = from.read(buffer)) >= 0) {
        to.write(buffer, 0, n);
        to.flush();
      }
    } catch (IOException e) {
      // Either side closed, or it was idle too long: the pair ends.
    }
  }

  private static final class HeadTooLarge extends IOException {
    private static final long serialVersionUID = 1L;
  }

  /** Reads a request head up to the limit; null when it is not an HTTP request line. */
  private Head readHead(InputStream in) throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    int matched = 0;
    while (true) {
      int b = in.read();
      if (b < 0) {
        return null;
      }
      bytes.write(b);
      if (bytes.size() > maxHead) {
        throw new HeadTooLarge();
      }
      // Ends at CRLF CRLF (or a bare LF LF).
      if (b == '\n') {
        matched++;
        if (matched == 2) {
          break;
        }
      } else if (b != '\r') {
        matched = 0;
      }
    }
    String text = bytes.toString(StandardCharsets.ISO_8859_1);
    List<String> lines = new ArrayList<>(text.lines().toList());
    lines.removeIf(String::isEmpty);
    if (lines.isEmpty()) {
      return null;
    }
    String[] parts = lines.get(0).split(" ");
    if (parts.length != 3 || !parts[2].startsWith("HTTP/1.")) {
      return null;
    }
    return new Head(
        parts[0].toUpperCase(Locale.ROOT), parts[1], parts[2], lines.subList(1, lines.size()));
  }

  private static void answer(OutputStream out, int status, String reason) throws IOException {
    String phrase =
        switch (status) {
          case 400 -> "Bad Request";
          case 403 -> "Forbidden";
          case 431 -> "Request Header Fields Too Large";
          case 503 -> "Service Unavailable";
          default -> "Bad Gateway";
        };
    byte[] body = (reason + "\n").getBytes(StandardCharsets.UTF_8);
    String head =
        "HTTP/1.1 "
            + status
            + " "
            + phrase
            + "\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: "
            + body.length
            + "\r\nConnection: close\r\n\r\n";
    out.write(head.getBytes(StandardCharsets.US_ASCII));
    out.write(body);
    out.flush();
  }

  private static void quietly(Socket socket) {
    try {
      socket.close();
    } catch (IOException e) {
      // Closing what broke.
    }
  }

  @Override
  public void close() {
    closed = true;
    quietly(server);
    for (Socket s : open) {
      quietly(s);
    }
    acceptor.interrupt();
    try {
      acceptor.join(Duration.ofSeconds(5));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    threads.close();
  }

  private static void quietly(ServerSocket socket) {
    try {
      socket.close();
    } catch (IOException e) {
      // Closing.
    }
  }
}
