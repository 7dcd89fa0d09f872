package dev.toolhost.server;

import dev.toolhost.core.ApiError;
import dev.toolhost.core.spi.Authenticator;
import dev.toolhost.core.spi.Principal;
import dev.toolhost.host.HostConfig;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.URI;
import java.net.URISyntaxException;
import java.security.MessageDigest;
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
 *   <li>With a bearer token, or principals ({@link Authenticator}), every request but {@code GET
 *       /healthz} and the authenticator's open paths must carry a token that names a principal: the
 *       host's own token (compared in constant time) is the operator's, any other is the
 *       authenticator's to accept; else 401, whose {@code WWW-Authenticate} challenge says why and,
 *       with OAuth tokens, where the protected resource metadata is (RFC 9728). The principal found
 *       is kept on the request ({@link Principal#ATTRIBUTE}) for the routes; a host with no
 *       credential at all (loopback only) serves everyone as the operator.
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
  private final Optional<Authenticator> authenticator;

  /**
   * A guard for a host bound as the config says, in front of the given handler.
   *
   * @param token the host's own bearer token, the operator's, if any
   * @param authenticator what finds the principal of any other token, if principals are configured
   */
  RequestGuard(
      HostConfig.Http http,
      Optional<String> token,
      Optional<Authenticator> authenticator,
      Handler handler) {
    super(bodyLimit(handler));
    this.hosts = allowedHosts(http);
    this.origins = Set.copyOf(http.allowedOrigins());
    this.tokenDigest = token.map(Authenticator::digest);
    this.authenticator = authenticator;
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
    if (refusal.isEmpty()) {
      Principal principal;
      try {
        principal = principal(request);
      } catch (Unauthenticated e) {
        refusal = Optional.of(e.refusal);
        principal = Principal.anonymous();
      }
      request.setAttribute(Principal.ATTRIBUTE, principal);
    }
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

  /**
   * The principal of a request that passed the other checks.
   *
   * @throws Unauthenticated when the host takes credentials and the request has none that holds
   */
  private Principal principal(Request request) throws Unauthenticated {
    if (tokenDigest.isEmpty() && authenticator.isEmpty()) {
      // Loopback with no credential configured: whoever can reach it is this machine's user.
      return Principal.operator("local");
    }
    String path = request.getHttpURI().getDecodedPath();
    if (request.getMethod().equals("GET")
        && (path.equals(ApiHandler.HEALTH)
            || authenticator.map(found -> found.openPaths().contains(path)).orElse(false))) {
      return Principal.anonymous();
    }
    String header = request.getHeaders().get(HttpHeader.AUTHORIZATION);
    if (header == null || !header.regionMatches(true, 0, "Bearer ", 0, 7)) {
      throw new Unauthenticated(
          unauthorized(
              request,
              "This host requires a bearer token: send the header 'Authorization: Bearer"
                  + " <token>'.",
              Optional.empty()));
    }
    String token = header.substring(7).strip();
    // Compares digests, so that neither the token's content nor its length shows in the timing.
    if (tokenDigest.isPresent()
        && MessageDigest.isEqual(Authenticator.digest(token), tokenDigest.get())) {
      return Principal.operator("token");
    }
    if (authenticator.isEmpty()) {
      throw new Unauthenticated(
          unauthorized(
              request,
              "The bearer token is not valid: send the header 'Authorization: Bearer <token>'"
                  + " with this host's token.",
              Optional.empty()));
    }
    return switch (authenticator.get().authenticate(token)) {
      case Authenticator.Accepted accepted -> accepted.principal();
      case Authenticator.Refused refused ->
          throw new Unauthenticated(
              unauthorized(
                  request,
                  refused.reason()
                      + " Send the header 'Authorization: Bearer <token>' with a token of this"
                      + " host.",
                  Optional.of(refused.reason())));
    };
  }

  /**
   * A 401 with its challenge: the realm, why a sent token was refused ({@code invalid_token}, RFC
   * 6750), and with OAuth tokens where the protected resource metadata is.
   */
  private Refusal unauthorized(Request request, String message, Optional<String> reason) {
    StringBuilder challenge = new StringBuilder("Bearer realm=\"toolhost\"");
    reason.ifPresent(
        said ->
            challenge
                .append(", error=\"invalid_token\", error_description=\"")
                .append(said.replace('"', '\''))
                .append('"'));
    if (authenticator.flatMap(Authenticator::authorizationServer).isPresent()) {
      challenge
          .append(", resource_metadata=\"http://")
          .append(request.getHeaders().get(HttpHeader.HOST))
          .append("/.well-known/oauth-protected-resource\"");
    }
    return new Refusal(
        ApiError.UNAUTHORIZED,
        message,
        Map.of(HttpHeader.WWW_AUTHENTICATE.asString(), challenge.toString()));
  }

  /** A request without a credential that holds, and the answer that says so. */
  private static final class Unauthenticated extends Exception {
    private static final long serialVersionUID = 1L;
    private final transient Refusal refusal;

    Unauthenticated(Refusal refusal) {
      super(refusal.message(), null, false, false);
      this.refusal = refusal;
    }
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

  /** Why a request is refused: status, error code, message and extra headers. */
  private record Refusal(ApiError error, String message, Map<String, String> headers) {}
}
