package dev.toolhost.server;

import dev.toolhost.core.ApiError;
import dev.toolhost.host.HostConfig;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpHeaderValue;
import org.eclipse.jetty.http.HttpVersion;
import org.eclipse.jetty.http.MimeTypes;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.handler.SizeLimitHandler;
import org.eclipse.jetty.util.Callback;

/**
 * The request guard is the one check every request to the host passes before any route sees it: the
 * HTTP API, {@code /metrics}, {@code /healthz} and the MCP gateway alike. It treats any web page
 * the user has open as an attacker of this local server, following the MCP specification's security
 * best practices for local servers and the lessons of the MCP Inspector's 2025 proxy CVE
 * (CVE-2025-49596, a cross-origin request that ran commands on the user's machine).
 *
 * <ul>
 *   <li>{@code Host} must name a loopback address, the bound host, or one of {@code
 *       http.allowed_hosts} (a foreign name is DNS rebinding): else 421.
 *   <li>An {@code Origin}, when sent, must be this server's own origin (a loopback name, the bound
 *       host or an allowed host, on this port) or one of {@code http.allowed_origins}: a
 *       cross-origin request is refused with 403, preflight or not.
 *   <li>With a bearer token, every request but {@code GET /healthz} must carry it, compared in
 *       constant time: else 401.
 *   <li>A request with a body must send {@code Content-Type: application/json}: else 415. A browser
 *       sends {@code text/plain} and form types cross-origin with no preflight; JSON needs one.
 *   <li>No body may be larger than {@link #MAX_BODY_BYTES}, declared or streamed: else 413.
 * </ul>
 *
 * <p>Every refusal is one JSON error object and names what was wrong, never echoing the token.
 * Thread-safe.
 */
final class RequestGuard extends Handler.Wrapper {

  /** The largest request body any route accepts. */
  static final int MAX_BODY_BYTES = 8 * 1024 * 1024;

  private static final Set<String> LOOPBACK_NAMES = Set.of("localhost", "127.0.0.1", "::1");
  private static final Set<String> WILDCARDS = Set.of("0.0.0.0", "::", "0:0:0:0:0:0:0:0");

  private final Set<String> hosts;
  private final Set<String> origins;
  private final Optional<byte[]> tokenDigest;

  /**
   * A guard for a host bound as the config says, in front of the given handler.
   *
   * @param token the bearer token callers must send, if any
   */
  RequestGuard(HostConfig.Http http, Optional<String> token, Handler handler) {
    super(bodyLimit(handler));
    this.hosts = allowedHosts(http);
    this.origins = Set.copyOf(http.allowedOrigins());
    this.tokenDigest = token.map(RequestGuard::digest);
  }

  /** Counts a streamed (chunked) body as it arrives; a declared length is checked up front. */
  private static Handler bodyLimit(Handler handler) {
    SizeLimitHandler limit = new SizeLimitHandler(MAX_BODY_BYTES, -1);
    limit.setHandler(handler);
    return limit;
  }

  @Override
  public boolean handle(Request request, Response response, Callback callback) throws Exception {
    Optional<Refusal> refusal = check(request);
    if (refusal.isPresent()) {
      Refusal refused = refusal.get();
      Map<String, String> headers = new HashMap<>(refused.headers());
      if (hasBody(request.getHeaders())
          && request.getConnectionMetaData().getHttpVersion() != HttpVersion.HTTP_2) {
        // The body is never read: Jetty closes the connection after the answer, so the answer
        // says so, or a client would send its next request on a connection that is closing.
        headers.put(HttpHeader.CONNECTION.asString(), HttpHeaderValue.CLOSE.asString());
      }
      JsonErrorHandler.write(response, callback, refused.error(), refused.message(), headers);
      return true;
    }
    return super.handle(request, response, callback);
  }

  private Optional<Refusal> check(Request request) {
    HttpFields headers = request.getHeaders();
    String host = hostName(headers.get(HttpHeader.HOST));
    if (!hosts.contains(host)) {
      return refuse(
          ApiError.HOST_NOT_ALLOWED,
          "This server does not answer for the host named in the Host header. Use 127.0.0.1 or"
              + " localhost, or add the name to http.allowed_hosts.");
    }
    String origin = headers.get(HttpHeader.ORIGIN);
    if (origin != null && !originAllowed(origin, Request.getLocalPort(request))) {
      return refuse(
          ApiError.ORIGIN_NOT_ALLOWED,
          "Cross-origin requests are refused: the Origin header names another site. A browser"
              + " page may not call this server unless its origin is in http.allowed_origins.");
    }
    if (tokenDigest.isPresent() && !isHealthCheck(request) && !authorized(headers)) {
      return Optional.of(
          new Refusal(
              ApiError.UNAUTHORIZED,
              headers.get(HttpHeader.AUTHORIZATION) == null
                  ? "This host requires a bearer token: send the header 'Authorization: Bearer"
                      + " <token>'."
                  : "The bearer token is not valid: send the header 'Authorization: Bearer"
                      + " <token>' with this host's token.",
              Map.of(HttpHeader.WWW_AUTHENTICATE.asString(), "Bearer realm=\"toolhost\"")));
    }
    long length = headers.getLongField(HttpHeader.CONTENT_LENGTH);
    if (length > MAX_BODY_BYTES) {
      return refuse(
          ApiError.PAYLOAD_TOO_LARGE,
          "The request body is " + length + " bytes; the limit is " + MAX_BODY_BYTES + " bytes.");
    }
    if (hasBody(headers) && !isJson(headers.getField(HttpHeader.CONTENT_TYPE))) {
      return refuse(
          ApiError.UNSUPPORTED_MEDIA_TYPE,
          "A request body must be JSON: send the header 'Content-Type: application/json'.");
    }
    return Optional.empty();
  }

  private static boolean hasBody(HttpFields headers) {
    return headers.getLongField(HttpHeader.CONTENT_LENGTH) > 0
        || headers.contains(HttpHeader.TRANSFER_ENCODING);
  }

  private static boolean isHealthCheck(Request request) {
    return request.getMethod().equals("GET")
        && request.getHttpURI().getDecodedPath().equals(ApiHandler.HEALTH);
  }

  private boolean authorized(HttpFields headers) {
    String header = headers.get(HttpHeader.AUTHORIZATION);
    if (header == null || !header.regionMatches(true, 0, "Bearer ", 0, 7)) {
      return false;
    }
    // Compares digests, so that neither the token's content nor its length shows in the timing.
    return MessageDigest.isEqual(digest(header.substring(7).strip()), tokenDigest.orElseThrow());
  }

  private boolean originAllowed(String origin, int port) {
    if (origins.contains(origin)) {
      return true;
    }
    URI uri;
    try {
      uri = new URI(origin);
    } catch (URISyntaxException e) {
      // "null" (a sandboxed frame, a file: page) and anything malformed are foreign.
      return false;
    }
    String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
    if (!scheme.equals("http") && !scheme.equals("https") || uri.getHost() == null) {
      return false;
    }
    int originPort = uri.getPort() != -1 ? uri.getPort() : scheme.equals("https") ? 443 : 80;
    return originPort == port && hosts.contains(hostName(uri.getHost()));
  }

  private static boolean isJson(HttpField contentType) {
    if (contentType == null) {
      return false;
    }
    String type = MimeTypes.getContentTypeWithoutCharset(contentType.getValue());
    return type != null && type.strip().equalsIgnoreCase("application/json");
  }

  /** The host name of a Host header or URI host, lower case, without port or IPv6 brackets. */
  static String hostName(String value) {
    if (value == null) {
      return "";
    }
    String host = value.strip().toLowerCase(Locale.ROOT);
    if (host.startsWith("[")) {
      int end = host.indexOf(']');
      return end < 0 ? host : host.substring(1, end);
    }
    int colon = host.indexOf(':');
    // More than one colon without brackets is a bare IPv6 address, not a host and port.
    if (colon >= 0 && host.indexOf(':', colon + 1) < 0) {
      return host.substring(0, colon);
    }
    return host;
  }

  private static Set<String> allowedHosts(HostConfig.Http http) {
    Set<String> allowed = new HashSet<>(LOOPBACK_NAMES);
    String bound = hostName(http.host());
    if (WILDCARDS.contains(bound)) {
      // Bound to every interface: callers name this machine by any of its addresses.
      allowed.addAll(interfaceAddresses());
    } else {
      allowed.add(bound);
    }
    http.allowedHosts().forEach(name -> allowed.add(hostName(name)));
    return Set.copyOf(allowed);
  }

  private static List<String> interfaceAddresses() {
    try {
      return Collections.list(NetworkInterface.getNetworkInterfaces()).stream()
          .flatMap(NetworkInterface::inetAddresses)
          .map(InetAddress::getHostAddress)
          // Drops an IPv6 address's zone, "%eth0".
          .map(address -> address.replaceFirst("%.*$", "").toLowerCase(Locale.ROOT))
          .toList();
    } catch (SocketException e) {
      return List.of();
    }
  }

  private static Optional<Refusal> refuse(ApiError error, String message) {
    return Optional.of(new Refusal(error, message, Map.of()));
  }

  private static byte[] digest(String token) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("Every Java platform has SHA-256", e);
    }
  }

  /** Why a request is refused: status, error code, message and extra headers. */
  private record Refusal(ApiError error, String message, Map<String, String> headers) {}
}
