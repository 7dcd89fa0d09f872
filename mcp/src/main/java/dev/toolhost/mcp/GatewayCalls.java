package dev.toolhost.mcp;

import dev.toolhost.core.spi.Principal;
import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletConfig;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.SequenceInputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * The gateway's calls are the tool calls an MCP gateway runs now, by session and JSON-RPC request
 * id, so that a client's {@code notifications/cancelled} stops the one it names: the thread that
 * dispatches it is interrupted, which the dispatcher passes on to the tool, and the call answers
 * {@code cancelled}.
 *
 * <p>MCP Java SDK 2.1.0 has no cancellation, and its server gives a tool's handler neither the
 * request's id nor a hook for a notification it does not know. Over Streamable HTTP, {@link #front}
 * is a servlet in front of the SDK's that reads each POSTed message before the SDK does: a tool
 * call's id goes to the SDK as a request attribute ({@link #REQUEST_ID}), which the gateway's
 * context extractor hands to its handler, and a {@code notifications/cancelled} that names a call
 * running in the sender's session interrupts it and is answered 202 there (any other goes on to the
 * SDK, which answers it as before). A client can only cancel calls of a session whose id it holds.
 * The same front makes the event streams of the SDK's answers resumable ({@link GatewayStreams}):
 * it hands the SDK a POSTed request's answer as one of the streams, answers a GET that carries
 * {@code Last-Event-ID} itself, and forgets a closed session's streams.
 *
 * <p>Over stdio, {@link #stdin} is a stream in front of the SDK's transport that reads each message
 * line before the SDK does: a tool call's id goes into the call's {@code _meta} under {@link
 * #REQUEST_ID} (set there whatever the client sent under that key), where the gateway reads it, and
 * a {@code notifications/cancelled} that names a running call interrupts it and goes no further.
 * The stdio client is the gateway's one session ({@link #STDIO_SESSION}). Thread-safe.
 */
final class GatewayCalls {

  /**
   * The request attribute that carries a tool call's JSON-RPC id to the SDK's context over HTTP,
   * and the {@code _meta} key that carries it over stdio.
   */
  static final String REQUEST_ID = "toolhost/mcp-request-id";

  /** The session the calls of a stdio gateway's one client are noted under. */
  static final String STDIO_SESSION = "stdio";

  private static final Logger LOG = LoggerFactory.getLogger(GatewayCalls.class);
  private static final JsonMapper JSON = JsonMapper.shared();
  // A tool call's line is written again with its id in _meta: decimals are read as BigDecimal so
  // that the arguments' numbers go on as the client wrote them, not rounded through a double.
  private static final JsonMapper EXACT =
      JsonMapper.builder().enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS).build();
  private static final String SESSION_HEADER = "Mcp-Session-Id";
  private static final String LAST_EVENT_ID = "Last-Event-ID";
  // The SDK's own bound on a request body (16 MiB): a longer one is the SDK's to refuse.
  private static final int MAX_READ = 16 * 1024 * 1024;

  private final Map<Key, Running> running = new ConcurrentHashMap<>();

  private record Key(String session, String requestId) {}

  /** A call noted as running until it is closed. */
  interface Call extends AutoCloseable {
    @Override
    void close();
  }

  /** One call running on a thread, which a cancel interrupts only while the call runs. */
  private static final class Running implements Call {
    private final Thread thread = Thread.currentThread();
    private final Runnable remove;
    private boolean over;

    Running(Runnable remove) {
      this.remove = remove;
    }

    synchronized void cancel() {
      if (!over) {
        thread.interrupt();
      }
    }

    @Override
    public void close() {
      synchronized (this) {
        over = true;
      }
      remove.run();
      // A cancel that came as the call ended must not reach what the thread does next.
      Thread.interrupted();
    }
  }

  /**
   * Notes that the calling thread runs the call with this request id in this session until the
   * returned scope closes; with no id (a message a front did not read) nothing is noted.
   */
  Call running(String session, Object requestId) {
    if (session == null || requestId == null) {
      return () -> {};
    }
    Key key = new Key(session, String.valueOf(requestId));
    Running call = new Running(() -> running.remove(key));
    running.put(key, call);
    return call;
  }

  /** Interrupts the call with this request id in this session; whether one was running. */
  boolean cancel(String session, String requestId) {
    Running call = running.get(new Key(session, requestId));
    if (call == null) {
      return false;
    }
    call.cancel();
    return true;
  }

  /**
   * A stream in front of the SDK's stdio transport, which reads the client's newline-delimited
   * messages from it: it passes each line on as it came, but a tool call's, which gets the call's
   * id in its {@code _meta}, and a {@code notifications/cancelled} that names a running call, which
   * interrupts that call and is not passed on (one that names none goes on to the SDK, which
   * ignores it).
   */
  InputStream stdin(InputStream in) {
    return new Stdin(Objects.requireNonNull(in, "in"));
  }

  /** The stdio client's messages, a line at a time, as {@link #stdin} passes them on. */
  private final class Stdin extends InputStream {
    private final BufferedReader lines;
    private byte[] line = new byte[0];
    private int at;

    Stdin(InputStream in) {
      this.lines = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
    }

    @Override
    public int read() throws IOException {
      return fill() ? line[at++] & 0xff : -1;
    }

    @Override
    public int read(byte[] buffer, int offset, int length) throws IOException {
      Objects.checkFromIndexSize(offset, length, buffer.length);
      if (length == 0) {
        return 0;
      }
      if (!fill()) {
        return -1;
      }
      int n = Math.min(length, line.length - at);
      System.arraycopy(line, at, buffer, offset, n);
      at += n;
      return n;
    }

    @Override
    public void close() throws IOException {
      lines.close();
    }

    // Whether a line is there to read, reading the next one the client sends when none is left.
    private boolean fill() throws IOException {
      while (at >= line.length) {
        String next = lines.readLine();
        if (next == null) {
          return false;
        }
        String passed = pass(next);
        if (passed != null) {
          line = (passed + "\n").getBytes(StandardCharsets.UTF_8);
          at = 0;
        }
      }
      return true;
    }
  }

  /**
   * The line as the SDK gets it; null for a cancel this front took. Every line is parsed (a
   * method's name may be written with escapes, {@code "tools\/call"}), and only a tool call's is
   * written again.
   */
  private String pass(String line) {
    JsonNode message;
    try {
      message = EXACT.readTree(line);
    } catch (JacksonException e) {
      // Not JSON: the SDK answers it.
      return line;
    }
    String called = message.path("method").asString("");
    if (called.equals("tools/call")
        && message.has("id")
        && message.get("params") instanceof ObjectNode params) {
      JsonNode meta = params.get("_meta");
      if (meta == null || meta.isNull()) {
        meta = params.putObject("_meta");
      }
      if (meta instanceof ObjectNode fields) {
        fields.put(REQUEST_ID, message.get("id").asString());
        return EXACT.writeValueAsString(message);
      }
    } else if (called.equals("notifications/cancelled")
        && !message.has("id")
        && cancel(STDIO_SESSION, message.at("/params/requestId").asString(""))) {
      LOG.debug(
          "MCP gateway: the stdio client cancelled request {}",
          message.at("/params/requestId").asString(""));
      return null;
    }
    return line;
  }

  /**
   * A servlet in front of the SDK's transport that reads tool call ids and cancellations, and makes
   * the event streams of its answers resumable through the given streams.
   */
  HttpServlet front(HttpServlet transport, GatewayStreams streams) {
    return new Front(
        Objects.requireNonNull(transport, "transport"), Objects.requireNonNull(streams, "streams"));
  }

  private final class Front extends HttpServlet {
    private static final long serialVersionUID = 1L;
    private final transient HttpServlet transport;
    private final transient GatewayStreams streams;

    Front(HttpServlet transport, GatewayStreams streams) {
      this.transport = transport;
      this.streams = streams;
    }

    @Override
    public void init(ServletConfig config) throws ServletException {
      super.init(config);
      transport.init(config);
    }

    @Override
    public void destroy() {
      transport.destroy();
    }

    @Override
    protected void service(HttpServletRequest request, HttpServletResponse response)
        throws ServletException, IOException {
      String session = request.getHeader(SESSION_HEADER);
      String method = request.getMethod();
      if ("GET".equalsIgnoreCase(method)) {
        String lastEventId = request.getHeader(LAST_EVENT_ID);
        String accept = request.getHeader("Accept");
        if (lastEventId == null
            || session == null
            || accept == null
            || !accept.contains("text/event-stream")) {
          // A listening stream, or a request the SDK refuses.
          transport.service(request, streams.listening(response));
        } else {
          streams.resume(request, response, session, principal(request), lastEventId);
        }
        return;
      }
      if ("DELETE".equalsIgnoreCase(method)) {
        transport.service(request, response);
        if (session != null) {
          streams.forget(session);
        }
        return;
      }
      if (!"POST".equalsIgnoreCase(method)) {
        transport.service(request, response);
        return;
      }
      InputStream in = request.getInputStream();
      byte[] head = in.readNBytes(MAX_READ + 1);
      HttpServletRequest replayed = new Replayed(request, head, in);
      if (head.length <= MAX_READ) {
        JsonNode message = read(head);
        String called = message.path("method").asString("");
        if (session != null && message.has("id") && !called.isEmpty()) {
          // A request: the SDK answers it with an event stream, which is to resume.
          GatewayStreams.Exchange exchange =
              streams.answer(replayed, response, session, principal(request));
          if (called.equals("tools/call")) {
            exchange.request().setAttribute(REQUEST_ID, message.get("id").asString());
          }
          transport.service(exchange.request(), exchange.response());
          return;
        }
        if (called.equals("tools/call") && message.has("id")) {
          replayed.setAttribute(REQUEST_ID, message.get("id").asString());
        } else if (called.equals("notifications/cancelled")
            && !message.has("id")
            && session != null
            && cancel(session, message.at("/params/requestId").asString(""))) {
          LOG.debug(
              "MCP gateway: session {} cancelled request {}",
              session,
              message.at("/params/requestId").asString(""));
          response.setStatus(HttpServletResponse.SC_ACCEPTED);
          return;
        }
      }
      transport.service(replayed, response);
    }

    /** The name of the request's principal, as the host's front found it; empty for none. */
    private static String principal(HttpServletRequest request) {
      return request.getAttribute(Principal.ATTRIBUTE) instanceof Principal principal
          ? principal.name()
          : "";
    }

    private static JsonNode read(byte[] body) {
      try {
        return JSON.readTree(body);
      } catch (JacksonException e) {
        // Not JSON: the SDK answers it.
        return JSON.missingNode();
      }
    }
  }

  /** The request, its body read again from the bytes already read and then the rest. */
  private static final class Replayed extends HttpServletRequestWrapper {
    private final ServletInputStream body;

    Replayed(HttpServletRequest request, byte[] head, InputStream rest) {
      super(request);
      InputStream all = new SequenceInputStream(new ByteArrayInputStream(head), rest);
      this.body =
          new ServletInputStream() {
            private boolean finished;

            @Override
            public int read() throws IOException {
              int b = all.read();
              finished = b < 0;
              return b;
            }

            @Override
            public int read(byte[] buffer, int offset, int length) throws IOException {
              int n = all.read(buffer, offset, length);
              finished = n < 0;
              return n;
            }

            @Override
            public boolean isFinished() {
              return finished;
            }

            @Override
            public boolean isReady() {
              return true;
            }

            @Override
            public void setReadListener(ReadListener listener) {
              throw new IllegalStateException("The MCP gateway reads request bodies blocking.");
            }
          };
    }

    @Override
    public ServletInputStream getInputStream() {
      return body;
    }
  }
}
