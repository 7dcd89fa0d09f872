package dev.toolhost.mcp;

import jakarta.servlet.ServletConfig;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.Writer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Gateway sessions are the bound on the MCP sessions the gateway's Streamable HTTP transport holds:
 * a servlet in front of the SDK's, which on its own (MCP Java SDK 2.1.0) keeps every session a
 * client opens until that client deletes it, so clients that never do held sessions without end.
 *
 * <p>It keeps each session's last request time. When a request arrives, sessions idle for the idle
 * timeout or longer are closed first; when a new session is about to open and the bound is reached,
 * the least recently used one is closed to make room. Closing is the SDK's own {@code DELETE} of
 * that session, so the SDK releases everything it holds for it; its client's next request answers
 * 404, on which the MCP spec has a client start a new session. Evicting rather than refusing keeps
 * the gateway open to new clients while a runaway or abandoned client holds the bound; an evicted
 * client only pays one new {@code initialize}.
 *
 * <p>Idle sessions are closed when a request arrives, not by a background thread (the SDK's own
 * sweeper leaves a non-daemon thread behind when closed): a gateway that gets no requests holds at
 * most the bound. A session's open listening stream is not a request: a client that only listens
 * for longer than the idle timeout is closed and starts again. Thread-safe.
 */
final class GatewaySessions extends HttpServlet {

  private static final long serialVersionUID = 1L;
  private static final Logger LOG = LoggerFactory.getLogger(GatewaySessions.class);
  private static final String SESSION_HEADER = "Mcp-Session-Id";

  private final transient HttpServlet transport;
  private final transient McpGateway.Sessions limits;
  // Guarded by itself; in access order, so that the first entry is the least recently used.
  private final transient LinkedHashMap<String, Long> lastUsed =
      new LinkedHashMap<>(16, 0.75f, true);

  GatewaySessions(HttpServlet transport, McpGateway.Sessions limits) {
    this.transport = Objects.requireNonNull(transport, "transport");
    this.limits = Objects.requireNonNull(limits, "limits");
  }

  /** How many sessions are held now, as far as requests have shown. */
  int held() {
    synchronized (lastUsed) {
      return lastUsed.size();
    }
  }

  @Override
  public void init(ServletConfig config) throws ServletException {
    super.init(config);
    transport.init(config);
  }

  @Override
  protected void service(HttpServletRequest request, HttpServletResponse response)
      throws ServletException, IOException {
    String id = request.getHeader(SESSION_HEADER);
    boolean opening = id == null && "POST".equalsIgnoreCase(request.getMethod());
    long now = System.nanoTime();
    long idle = limits.idleTimeout().toNanos();
    List<String> closing = new ArrayList<>();
    synchronized (lastUsed) {
      if (id != null && lastUsed.containsKey(id)) {
        lastUsed.put(id, now);
      }
      Iterator<Map.Entry<String, Long>> oldest = lastUsed.entrySet().iterator();
      while (oldest.hasNext()) {
        Map.Entry<String, Long> entry = oldest.next();
        if (now - entry.getValue() < idle) {
          break;
        }
        closing.add(entry.getKey());
        oldest.remove();
      }
      if (opening) {
        oldest = lastUsed.entrySet().iterator();
        while (lastUsed.size() >= limits.maxSessions() && oldest.hasNext()) {
          closing.add(oldest.next().getKey());
          oldest.remove();
        }
      }
    }
    for (String session : closing) {
      close(session, request, response);
    }
    if (id != null && "DELETE".equalsIgnoreCase(request.getMethod())) {
      synchronized (lastUsed) {
        lastUsed.remove(id);
      }
    }
    if (!opening) {
      transport.service(request, response);
      return;
    }
    SessionHeader watched = new SessionHeader(response);
    transport.service(request, watched);
    if (watched.sessionId != null) {
      synchronized (lastUsed) {
        lastUsed.put(watched.sessionId, System.nanoTime());
      }
    }
  }

  /** Closes a session through the SDK's own DELETE, on the back of a request in hand. */
  private void close(String session, HttpServletRequest request, HttpServletResponse response) {
    try {
      transport.service(new Delete(request, session), new Discarded(response));
      LOG.debug("MCP gateway: closed session {} (idle or over the bound)", session);
    } catch (IOException | ServletException | RuntimeException e) {
      LOG.warn("MCP gateway: closing session {} failed: {}", session, e.getMessage());
    }
  }

  @Override
  public void destroy() {
    transport.destroy();
  }

  /** The request in hand, as a DELETE of another session. */
  private static final class Delete extends HttpServletRequestWrapper {
    private final String session;

    Delete(HttpServletRequest request, String session) {
      super(request);
      this.session = session;
    }

    @Override
    public String getMethod() {
      return "DELETE";
    }

    @Override
    public String getHeader(String name) {
      return SESSION_HEADER.equalsIgnoreCase(name) ? session : super.getHeader(name);
    }

    @Override
    public Enumeration<String> getHeaders(String name) {
      return SESSION_HEADER.equalsIgnoreCase(name)
          ? Collections.enumeration(List.of(session))
          : super.getHeaders(name);
    }

    @Override
    public Enumeration<String> getHeaderNames() {
      List<String> names = new ArrayList<>();
      for (Enumeration<String> all = super.getHeaderNames(); all.hasMoreElements(); ) {
        String name = all.nextElement();
        if (!SESSION_HEADER.equalsIgnoreCase(name)) {
          names.add(name);
        }
      }
      names.add(SESSION_HEADER);
      return Collections.enumeration(names);
    }
  }

  /** A response whose status, headers and body go nowhere: the real one is the caller's. */
  private static final class Discarded extends HttpServletResponseWrapper {
    private final PrintWriter writer = new PrintWriter(Writer.nullWriter());

    Discarded(HttpServletResponse response) {
      super(response);
    }

    @Override
    public void setStatus(int status) {}

    @Override
    public void sendError(int status) {}

    @Override
    public void sendError(int status, String message) {}

    @Override
    public void setHeader(String name, String value) {}

    @Override
    public void addHeader(String name, String value) {}

    @Override
    public void setContentType(String type) {}

    @Override
    public void setCharacterEncoding(String encoding) {}

    @Override
    public void setContentLength(int length) {}

    @Override
    public void setContentLengthLong(long length) {}

    @Override
    public void flushBuffer() {}

    @Override
    public boolean isCommitted() {
      return false;
    }

    @Override
    public PrintWriter getWriter() {
      return writer;
    }

    @Override
    public ServletOutputStream getOutputStream() {
      return new ServletOutputStream() {
        @Override
        public boolean isReady() {
          return true;
        }

        @Override
        public void setWriteListener(WriteListener listener) {}

        @Override
        public void write(int b) {}
      };
    }
  }

  /** The real response, noting the session id the transport gives a new session. */
  private static final class SessionHeader extends HttpServletResponseWrapper {
    private volatile String sessionId;

    SessionHeader(HttpServletResponse response) {
      super(response);
    }

    @Override
    public void setHeader(String name, String value) {
      note(name, value);
      super.setHeader(name, value);
    }

    @Override
    public void addHeader(String name, String value) {
      note(name, value);
      super.addHeader(name, value);
    }

    private void note(String name, String value) {
      if (SESSION_HEADER.equalsIgnoreCase(name)) {
        sessionId = value;
      }
    }
  }
}
