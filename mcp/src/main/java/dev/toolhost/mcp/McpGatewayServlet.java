package dev.toolhost.mcp;

import dev.toolhost.core.ApiError;
import dev.toolhost.core.spi.Mount;
import dev.toolhost.core.spi.Principal;
import dev.toolhost.core.spi.ReadyHost;
import jakarta.servlet.ServletConfig;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.Writer;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The MCP gateway servlet serves a host's tools as MCP servers over Streamable HTTP: the {@code
 * main} profile at {@code /mcp} and every profile at {@code /mcp/{profile}}, each an {@link
 * McpGateway} of that profile's tool set. The MCP extension mounts it on every host; an HTTP front
 * serves it behind its request guard, which has already checked each request's host, origin, token,
 * content type and size, as for every other route.
 *
 * <p>A path that names no profile is a 404 that lists the profiles; a {@code profile} query
 * parameter is refused, for the path alone names the profile a session is opened on, and every
 * request of a session is answered by that profile's gateway only. Every error answer is the host's
 * one JSON error object ({@link ApiError}): the MCP SDK's own error bodies (a serialised exception
 * with its stack, and an echo of the request) are replaced on their way out, and its {@code
 * sendError} calls never reach the container's error page.
 *
 * <p>An MCP session is the principal's that opened it: a request that names a session another
 * principal opened, or one this servlet never gave, is answered as an unknown session (404), so
 * that no principal reaches another's session, its calls or its stream, by its id. The owners of at
 * most {@link McpGateway.Sessions#DEFAULT_MAX_SESSIONS} sessions per endpoint are kept, the least
 * recently used forgotten first, as the gateways forget their sessions.
 *
 * <p>Its gateways open when a front starts serving it ({@link #init}), after the host is ready
 * ({@link #ready}); {@link #close()} stops every gateway and may be repeated. Thread-safe.
 */
final class McpGatewayServlet extends HttpServlet implements AutoCloseable {

  private static final long serialVersionUID = 1L;

  /** The path of the main profile's gateway; every profile's is {@code /mcp/{profile}}. */
  static final String PATH = "/mcp";

  /** The header that names a request's MCP session. */
  private static final String SESSION_HEADER = "Mcp-Session-Id";

  /** How the gateway is mounted: {@code /mcp} and one profile's segment below it. */
  Mount mount() {
    return new Mount(PATH, "profile", this);
  }

  // Guarded by this; the gateways' servlets by their path.
  private final transient Map<String, HttpServlet> servlets = new LinkedHashMap<>();
  private final transient List<McpGateway> gateways = new ArrayList<>();
  private transient List<String> profiles = List.of();
  // How many endpoints serve sessions, each holding at most the default number.
  private volatile int endpoints = 1;
  // Each session's principal, by session id; guarded by itself.
  private final transient Map<String, String> owners =
      new LinkedHashMap<>(16, 0.75f, true) {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(Map.Entry<String, String> eldest) {
          return size() > McpGateway.Sessions.DEFAULT_MAX_SESSIONS * endpoints;
        }
      };
  private transient ReadyHost host;
  private boolean closed;

  /** Gives the servlet the host, once ready: the gateways open when a front serves the servlet. */
  synchronized void ready(ReadyHost ready) {
    this.host = ready;
  }

  /**
   * Opens a gateway for every profile of the ready host, through its one dispatcher: when an HTTP
   * front starts serving the servlet, so that a host with no front opens none.
   *
   * @throws ServletException when the host is not ready, or a gateway's transport fails to start
   */
  @Override
  public synchronized void init(ServletConfig config) throws ServletException {
    super.init(config);
    if (closed) {
      return;
    }
    if (host == null || !servlets.isEmpty()) {
      throw new ServletException(
          host == null
              ? "The MCP gateway is served before its host is ready."
              : "The MCP gateway is served twice.");
    }
    for (String profile : host.profiles()) {
      List<String> paths = new ArrayList<>(List.of(PATH + "/" + profile));
      if (profile.equals("main")) {
        paths.add(PATH);
      }
      for (String path : paths) {
        // Host and Origin are the request guard's to check, for this path as for every other.
        McpGateway gateway =
            McpGateway.http(
                host.registry(),
                host.toolSet(profile),
                host.dispatcher(),
                path,
                McpGateway.Sessions.defaults());
        gateways.add(gateway);
        HttpServlet servlet = gateway.servlet().orElseThrow();
        servlet.init(config);
        servlets.put(path, servlet);
      }
    }
    profiles = host.profiles();
    endpoints = Math.max(1, servlets.size());
  }

  @Override
  protected void service(HttpServletRequest request, HttpServletResponse response)
      throws ServletException, IOException {
    String path =
        request.getServletPath() + (request.getPathInfo() == null ? "" : request.getPathInfo());
    HttpServlet servlet;
    List<String> known;
    synchronized (this) {
      servlet = servlets.get(path);
      known = profiles;
    }
    if (known.isEmpty()) {
      // Closed: the host is stopping.
      refuse(request, response, ApiError.UNAVAILABLE, ApiError.UNAVAILABLE.defaultMessage());
      return;
    }
    if (servlet == null) {
      refuse(
          request,
          response,
          ApiError.PROFILE_NOT_FOUND,
          "No MCP endpoint at "
              + path
              + ": the gateway serves /mcp (profile main) and /mcp/{profile} for the profiles "
              + String.join(", ", known)
              + ".");
      return;
    }
    Principal principal =
        request.getAttribute(Principal.ATTRIBUTE) instanceof Principal found
            ? found
            : Principal.anonymous();
    String profile = path.equals(PATH) ? "main" : path.substring(PATH.length() + 1);
    if (!principal.mayUse(profile)) {
      refuse(request, response, ApiError.FORBIDDEN, principal.profileRefusal(profile));
      return;
    }
    if (namesProfile(request.getQueryString())) {
      refuse(
          request,
          response,
          ApiError.INVALID_REQUEST,
          "The MCP gateway takes its profile from the path, not a query parameter: connect to"
              + " /mcp/{profile}, such as /mcp/subagent.");
      return;
    }
    String session = request.getHeader(SESSION_HEADER);
    if (session != null && !owns(principal, session)) {
      refuse(request, response, ApiError.NOT_FOUND, message(404));
      return;
    }
    ErrorRewriting rewriting =
        new ErrorRewriting(
            response,
            opened -> {
              synchronized (owners) {
                owners.put(opened, principal.name());
              }
            });
    servlet.service(request, rewriting);
    if (session != null && request.getMethod().equals("DELETE") && rewriting.status < 400) {
      synchronized (owners) {
        owners.remove(session);
      }
    }
    if (rewriting.status >= 400 && !request.isAsyncStarted()) {
      // A refused resume names its own reason; the SDK's errors get ours.
      write(
          response,
          rewriting.status,
          ApiError.forStatus(rewriting.status),
          request.getAttribute(GatewayStreams.REFUSAL) instanceof String refusal
              ? refusal
              : message(rewriting.status));
    }
  }

  @Override
  public void close() {
    List<McpGateway> open;
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      open = List.copyOf(gateways);
      servlets.clear();
      profiles = List.of();
    }
    open.forEach(McpGateway::close);
  }

  /** Whether the principal opened the session: one never opened here is no one's. */
  private boolean owns(Principal principal, String session) {
    synchronized (owners) {
      return principal.name().equals(owners.get(session));
    }
  }

  /** Whether a query string has a {@code profile} parameter (the body, a form or not, unread). */
  private static boolean namesProfile(String query) {
    if (query == null) {
      return false;
    }
    for (String field : query.split("&")) {
      String name = field.contains("=") ? field.substring(0, field.indexOf('=')) : field;
      if (URLDecoder.decode(name, StandardCharsets.UTF_8).equals("profile")) {
        return true;
      }
    }
    return false;
  }

  /**
   * Answers a request the gateway refuses before the SDK reads it. Its body is never read: Jetty
   * closes the connection after the answer, so the answer says so, or a client would send its next
   * request on a connection that is closing (as the request guard's refusals do).
   */
  private static void refuse(
      HttpServletRequest request, HttpServletResponse response, ApiError error, String message)
      throws IOException {
    boolean body =
        request.getContentLengthLong() > 0 || request.getHeader("Transfer-Encoding") != null;
    if (body && !request.getProtocol().startsWith("HTTP/2")) {
      response.setHeader("Connection", "close");
    }
    write(response, error.status(), error, message);
  }

  /** Writes one JSON error as the whole answer, with the status the library chose. */
  private static void write(
      HttpServletResponse response, int status, ApiError error, String message) throws IOException {
    byte[] body = error.bytes(message);
    response.resetBuffer();
    response.setStatus(status);
    response.setContentType("application/json");
    response.setContentLength(body.length);
    response.getOutputStream().write(body);
  }

  private static String message(int status) {
    return switch (status) {
      case 400 ->
          "The MCP request is not valid: send one JSON-RPC message as JSON, with the header"
              + " 'Accept: application/json, text/event-stream', and the Mcp-Session-Id header"
              + " the server gave at initialisation on every later request.";
      case 404 ->
          "Unknown MCP session: it was closed or has expired, or was opened on another"
              + " profile's endpoint. Initialise a new session.";
      case 405 -> "This method is not allowed on an MCP endpoint: use POST, GET or DELETE.";
      case 406 ->
          "Send the header 'Accept: application/json, text/event-stream' (a GET needs"
              + " 'Accept: text/event-stream').";
      case 415 -> "An MCP request must be JSON: send 'Content-Type: application/json'.";
      default -> ApiError.forStatus(status).defaultMessage();
    };
  }

  /**
   * A response whose error answers are held back for the gateway to replace: once the SDK sets an
   * error status (or calls {@code sendError}), what it writes is dropped, and nothing of it is
   * sent. Success answers, event streams included, pass through untouched.
   */
  private static final class ErrorRewriting extends HttpServletResponseWrapper {
    private int status = 200;
    private final Consumer<String> opened;

    ErrorRewriting(HttpServletResponse response, Consumer<String> opened) {
      super(response);
      this.opened = opened;
    }

    @Override
    public void setHeader(String name, String value) {
      // The SDK names a new session in this header of its answer to initialize.
      if (name.equalsIgnoreCase(SESSION_HEADER) && value != null) {
        opened.accept(value);
      }
      super.setHeader(name, value);
    }

    @Override
    public void addHeader(String name, String value) {
      if (name.equalsIgnoreCase(SESSION_HEADER) && value != null) {
        opened.accept(value);
      }
      super.addHeader(name, value);
    }

    private boolean failed() {
      return status >= 400;
    }

    @Override
    public void setStatus(int code) {
      status = code;
      if (code < 400) {
        super.setStatus(code);
      }
    }

    @Override
    public void sendError(int code, String message) {
      status = code;
    }

    @Override
    public void sendError(int code) {
      status = code;
    }

    @Override
    public ServletOutputStream getOutputStream() throws IOException {
      return failed() ? new Dropped() : super.getOutputStream();
    }

    @Override
    public PrintWriter getWriter() throws IOException {
      return failed() ? new PrintWriter(Writer.nullWriter()) : super.getWriter();
    }

    @Override
    public void flushBuffer() throws IOException {
      if (!failed()) {
        super.flushBuffer();
      }
    }

    @Override
    public void setContentLength(int length) {
      if (!failed()) {
        super.setContentLength(length);
      }
    }

    @Override
    public void setContentLengthLong(long length) {
      if (!failed()) {
        super.setContentLengthLong(length);
      }
    }
  }

  /** An output stream that drops what the SDK writes of an error body. */
  private static final class Dropped extends ServletOutputStream {
    @Override
    public void write(int b) {}

    @Override
    public void write(byte[] bytes, int offset, int length) {}

    @Override
    public boolean isReady() {
      return true;
    }

    @Override
    public void setWriteListener(WriteListener listener) {}
  }
}
