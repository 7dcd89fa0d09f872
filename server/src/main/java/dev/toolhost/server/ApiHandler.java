package dev.toolhost.server;

import dev.toolhost.core.ApiError;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolProfile;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import dev.toolhost.core.spi.Principal;
import dev.toolhost.core.spi.Route;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.eclipse.jetty.http.HttpException;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.io.SocketChannelEndPoint;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.Fields;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The API handler answers the host's HTTP API on Jetty's core handler API: tool lists per profile,
 * tool invocation through the host's dispatcher, profiles, health and metrics.
 *
 * <p>It blocks while a tool runs, so it is a blocking handler, and Jetty runs it on a virtual
 * thread. Every answer it writes is JSON except {@code /metrics}; every error is {@code {"error":
 * {"code", "message"}}}. The {@link RequestGuard} in front of it has already checked the host,
 * origin, token, content type and size of every request it sees.
 */
final class ApiHandler extends Handler.Abstract {

  private static final Logger LOG = LoggerFactory.getLogger(ApiHandler.class);

  static final String JSON = "application/json";
  static final String PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8";

  static final String HEALTH = "/healthz";
  static final String METRICS = "/metrics";
  static final String TOOLS = "/v1/tools";
  static final String PROFILES = "/v1/profiles";

  /** The routes whose path is fixed, each its own template. */
  static final Set<String> FIXED_ROUTES = Set.of(HEALTH, METRICS, TOOLS, PROFILES);

  /** The path of a tool's invoke route; its group is the tool's name. */
  static final Pattern INVOKE = Pattern.compile("/v1/tools/([^/]+)/invoke");

  private static final String ROUTES =
      "GET /v1/tools, POST /v1/tools/{name}/invoke, GET /v1/profiles, GET /healthz, GET /metrics";

  private final Host host;
  private final ApiJson json;
  // Made when the handler starts: tells when a running call's HTTP/1 client goes away.
  private volatile ClientWatch clients;

  ApiHandler(Host host, ApiJson json) {
    this.host = host;
    this.json = json;
  }

  @Override
  public boolean handle(Request request, Response response, Callback callback) {
    Reply reply;
    try {
      reply = answer(request);
    } catch (Refused e) {
      reply = e.reply;
    } catch (UnreadableBody e) {
      // The client's fault (an aborted or malformed chunked body): not worth more than debug.
      LOG.debug("Reading the body of {} {} failed", request.getMethod(), e.path, e.getCause());
      reply = error(e.error, e.getMessage());
    } catch (RuntimeException e) {
      LOG.error("Answering {} {} failed", request.getMethod(), request.getHttpURI().getPath(), e);
      reply = error(ApiError.INTERNAL_ERROR, ApiError.INTERNAL_ERROR.defaultMessage());
    }
    response.setStatus(reply.status());
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, reply.contentType());
    reply.headers().forEach((name, value) -> response.getHeaders().put(name, value));
    if (reply.stream().isPresent()) {
      stream(request, response, callback, reply.stream().get());
      return true;
    }
    response.write(true, ByteBuffer.wrap(reply.body()), callback);
    return true;
  }

  // A streamed answer (an extension's server-sent events) is written here, on this virtual thread,
  // through a blocking stream that flushes as the writer flushes.
  private static void stream(
      Request request, Response response, Callback callback, Route.BodyWriter writer) {
    response.getHeaders().put(HttpHeader.CACHE_CONTROL, "no-cache");
    try (java.io.OutputStream out = Content.Sink.asOutputStream(response)) {
      writer.write(out);
    } catch (Exception e) {
      LOG.warn(
          "The streamed answer to {} {} ended early",
          request.getMethod(),
          request.getHttpURI().getPath(),
          e);
      callback.failed(e);
      return;
    }
    callback.succeeded();
  }

  private static final java.util.Set<HttpHeader> CREDENTIAL_HEADERS =
      java.util.EnumSet.of(
          HttpHeader.AUTHORIZATION, HttpHeader.PROXY_AUTHORIZATION, HttpHeader.COOKIE);

  private Reply answer(Request request) throws UnreadableBody, Refused {
    String method = request.getMethod();
    String path = request.getHttpURI().getDecodedPath();
    if (path.equals(HEALTH)) {
      return only("GET", method).orElseGet(() -> ok(json.object().put("status", "ok")));
    }
    if (path.equals(METRICS)) {
      return only("GET", method)
          .orElseGet(
              () ->
                  new Reply(
                      200,
                      PROMETHEUS_TEXT,
                      host.metricsText().getBytes(StandardCharsets.UTF_8),
                      Map.of()));
    }
    if (path.equals(TOOLS)) {
      Optional<Reply> wrongMethod = only("GET", method);
      return wrongMethod.isPresent() ? wrongMethod.get() : listTools(request);
    }
    if (path.equals(PROFILES)) {
      return only("GET", method).orElseGet(() -> listProfiles(principal(request)));
    }
    Matcher invoke = INVOKE.matcher(path);
    if (invoke.matches()) {
      Optional<Reply> wrongMethod = only("POST", method);
      if (wrongMethod.isPresent()) {
        return wrongMethod.get();
      }
      return invoke(request, invoke.group(1));
    }
    Optional<Route> route = host.route(method, path);
    if (route.isPresent()) {
      return extensionRoute(request, route.get());
    }
    List<String> methods = host.routeMethods(path);
    if (!methods.isEmpty()) {
      return only(String.join(", ", methods), method).orElseThrow();
    }
    List<String> added = host.routeNames();
    return error(
        ApiError.NOT_FOUND,
        "No route for "
            + method
            + " "
            + path
            + ". Routes: "
            + ROUTES
            + (added.isEmpty() ? "" : ", " + String.join(", ", added)));
  }

  /** Whether the host itself serves the path: no extension may add a route there. */
  static boolean reserved(String path) {
    return FIXED_ROUTES.contains(path) || INVOKE.matcher(path).matches();
  }

  private Reply extensionRoute(Request request, Route route) throws UnreadableBody {
    Map<String, List<String>> query = new LinkedHashMap<>();
    Request.extractQueryParameters(request)
        .forEach(field -> query.put(field.getName(), field.getValues()));
    Map<String, List<String>> headers = new LinkedHashMap<>();
    // The host's own credentials (its bearer token, cookies) are the guard's, checked above; an
    // extension's route never needs them, and one that logged or echoed its request would leak
    // them.
    request.getHeaders().stream()
        .filter(field -> !CREDENTIAL_HEADERS.contains(field.getHeader()))
        .forEach(
            field ->
                headers
                    .computeIfAbsent(field.getName(), name -> new java.util.ArrayList<>())
                    .add(field.getValue()));
    Route.Request routed =
        new Route.Request(
            request.getMethod(),
            request.getHttpURI().getDecodedPath(),
            query,
            body(request),
            headers,
            principal(request));
    Route.Answer answer;
    try {
      answer = route.handler().answer(routed);
    } catch (Exception e) {
      LOG.error("The route {} {} failed", route.method(), route.path(), e);
      return error(ApiError.INTERNAL_ERROR, ApiError.INTERNAL_ERROR.defaultMessage());
    }
    if (answer == null) {
      LOG.error("The route {} {} answered null", route.method(), route.path());
      return error(ApiError.INTERNAL_ERROR, ApiError.INTERNAL_ERROR.defaultMessage());
    }
    return new Reply(
        answer.status(), answer.contentType(), answer.body(), Map.of(), answer.stream());
  }

  private Reply listTools(Request request) throws Refused {
    ToolSet set = toolSet(request, principal(request));
    return ok(json.tools(set.profile().name(), set.specs()));
  }

  /**
   * The tool set of the profile the request names (the principal's default when it names none).
   *
   * @throws Refused when the name is blank or no profile's, or the principal may not use it
   */
  private ToolSet toolSet(Request request, Principal principal) throws Refused {
    Optional<String> named = profileOf(request, principal);
    if (named.isEmpty()) {
      throw new Refused(emptyProfile());
    }
    String profile = named.get();
    Optional<ToolSet> set = toolSet(profile);
    if (set.isEmpty()) {
      throw new Refused(unknownProfile(profile));
    }
    if (!principal.mayUse(profile)) {
      throw new Refused(error(ApiError.FORBIDDEN, principal.profileRefusal(profile)));
    }
    return set.get();
  }

  /** The profiles the principal may use. */
  private Reply listProfiles(Principal principal) {
    ObjectNode document = json.object();
    ArrayNode profiles = document.putArray("profiles");
    for (ToolProfile profile : host.profiles().all()) {
      if (principal.mayUse(profile.name())) {
        profiles.add(json.profile(profile, host.toolSet(profile.name()).names()));
      }
    }
    return ok(document);
  }

  private Reply invoke(Request request, String toolName) throws UnreadableBody, Refused {
    Principal principal = principal(request);
    ToolSet set = toolSet(request, principal);
    byte[] body = body(request);
    InvokeRequest invocation;
    try {
      invocation = InvokeRequest.parse(json.mapper(), body);
    } catch (IllegalArgumentException e) {
      return error(ApiError.INVALID_REQUEST, e.getMessage());
    }
    Optional<String> refusal = principal.userRefusal(invocation.user());
    if (refusal.isPresent()) {
      return error(ApiError.FORBIDDEN, refusal.get());
    }
    ToolCall call =
        invocation
            .asUser(principal.callUser(invocation.user()))
            .toCall(toolName, set.defaultTimeout(toolName))
            .withPrincipal(principal.name());
    // The request's server span (HttpTelemetry), current here, is the parent of the tool's span.
    ToolResult result = dispatchUntilGone(request, set, call);
    return ok(json.result(call, result));
  }

  /**
   * Dispatches the call on this thread, cancelling it when the client goes away first: the end of
   * the client's connection (seen by the {@link ClientWatch} on HTTP/1, by Jetty on HTTP/2)
   * interrupts this thread, which the dispatcher carries to wherever the call runs (the tool's
   * thread, a sandboxed process, a remote worker, a bridged MCP server). An idle timeout does not
   * end a call: a client may wait as long as the call's deadline.
   */
  private ToolResult dispatchUntilGone(Request request, ToolSet set, ToolCall call) {
    Thread caller = Thread.currentThread();
    Object lock = new Object();
    boolean[] running = {true};
    Runnable cancel =
        () -> {
          synchronized (lock) {
            if (running[0]) {
              LOG.debug("The client of call {} went away; cancelling it", call.callId());
              caller.interrupt();
            }
          }
        };
    request.addIdleTimeoutListener(timeout -> false);
    request.addFailureListener(failure -> cancel.run());
    ClientWatch.Watch watch = null;
    // HTTP/1 only: an HTTP/2 connection's socket carries other streams' frames, and its streams
    // are reset, which Jetty sees.
    if (clients != null
        && request.getConnectionMetaData().getHttpVersion().getVersion() < 20
        && request.getConnectionMetaData().getConnection().getEndPoint()
            instanceof SocketChannelEndPoint endPoint) {
      watch = clients.watch(endPoint.getChannel(), cancel);
    }
    try {
      return host.dispatcher().dispatch(set, call);
    } finally {
      synchronized (lock) {
        running[0] = false;
      }
      // An interruption the client's leaving made ends here: the answer goes nowhere anyway.
      Thread.interrupted();
      if (watch != null) {
        watch.close();
        if (watch.pipelined()) {
          request.getConnectionMetaData().getConnection().getEndPoint().shutdownOutput();
        }
      }
    }
  }

  @Override
  protected void doStart() throws Exception {
    clients = new ClientWatch();
    super.doStart();
  }

  @Override
  protected void doStop() throws Exception {
    super.doStop();
    if (clients != null) {
      clients.close();
    }
  }

  private Optional<ToolSet> toolSet(String profile) {
    return host.profiles().find(profile).map(found -> host.toolSet(found.name()));
  }

  private Reply unknownProfile(String profile) {
    return error(
        ApiError.PROFILE_NOT_FOUND,
        "Unknown tool profile '"
            + profile
            + "'. Known profiles: "
            + String.join(", ", host.profiles().names())
            + ".");
  }

  private Reply emptyProfile() {
    return error(
        ApiError.INVALID_REQUEST,
        "The query parameter 'profile' is empty: name a profile ("
            + String.join(", ", host.profiles().names())
            + "), or leave the parameter out for 'main'.");
  }

  /**
   * The profile the query names, the principal's default when it names none; empty when it is given
   * but blank.
   */
  private static Optional<String> profileOf(Request request, Principal principal) {
    Fields query = Request.extractQueryParameters(request);
    String profile = query.getValue("profile");
    if (profile == null) {
      return Optional.of(principal.defaultProfile());
    }
    return profile.isBlank() ? Optional.empty() : Optional.of(profile);
  }

  /** Who sent the request, as the guard found ({@link RequestGuard}); no one if it found none. */
  private static Principal principal(Request request) {
    return request.getAttribute(Principal.ATTRIBUTE) instanceof Principal found
        ? found
        : Principal.anonymous();
  }

  /**
   * The request body, which the guard ({@link RequestGuard}) keeps within {@link
   * RequestGuard#MAX_BODY_BYTES}.
   */
  private static byte[] body(Request request) throws UnreadableBody {
    String path = request.getHttpURI().getDecodedPath();
    try (InputStream in = Request.asInputStream(request)) {
      byte[] body = in.readNBytes(RequestGuard.MAX_BODY_BYTES + 1);
      if (body.length > RequestGuard.MAX_BODY_BYTES) {
        throw new UnreadableBody(path, ApiError.PAYLOAD_TOO_LARGE, tooLarge(), null);
      }
      return body;
    } catch (HttpException.RuntimeException e) {
      // The size limit, counting a chunked body as it arrives.
      if (e.getCode() == 413) {
        throw new UnreadableBody(path, ApiError.PAYLOAD_TOO_LARGE, tooLarge(), e);
      }
      throw new UnreadableBody(path, ApiError.INVALID_REQUEST, unreadable(), e);
    } catch (IOException | RuntimeException e) {
      throw new UnreadableBody(path, ApiError.INVALID_REQUEST, unreadable(), e);
    }
  }

  private static String tooLarge() {
    return "The request body is larger than " + RequestGuard.MAX_BODY_BYTES + " bytes.";
  }

  private static String unreadable() {
    return "The request body could not be read: it was cut off or its chunked encoding is"
        + " malformed. Send the whole body again.";
  }

  /** A request refused before it runs (a profile it may not use, say), and the answer. */
  private static final class Refused extends Exception {
    private static final long serialVersionUID = 1L;
    private final transient Reply reply;

    Refused(Reply reply) {
      super(null, null, false, false);
      this.reply = reply;
    }
  }

  /** A request body that could not be read, and the answer that says so. */
  private static final class UnreadableBody extends Exception {
    private static final long serialVersionUID = 1L;
    final String path;
    final ApiError error;

    UnreadableBody(String path, ApiError error, String message, Throwable cause) {
      super(message, cause, false, false);
      this.path = path;
      this.error = error;
    }
  }

  private Optional<Reply> only(String allowed, String method) {
    if (allowed.equals(method)) {
      return Optional.empty();
    }
    Reply reply =
        error(
            ApiError.METHOD_NOT_ALLOWED,
            "Method " + method + " is not allowed here; use " + allowed + ".");
    return Optional.of(
        new Reply(
            reply.status(),
            reply.contentType(),
            reply.body(),
            Map.of(HttpHeader.ALLOW.asString(), allowed)));
  }

  private Reply ok(ObjectNode document) {
    return new Reply(200, JSON, json.bytes(document), Map.of());
  }

  private static Reply error(ApiError error, String message) {
    return new Reply(error.status(), JSON, error.bytes(message), Map.of());
  }

  /** One answer: status, content type, body and extra headers. */
  private record Reply(
      int status,
      String contentType,
      byte[] body,
      Map<String, String> headers,
      Optional<Route.BodyWriter> stream) {
    Reply(int status, String contentType, byte[] body, Map<String, String> headers) {
      this(status, contentType, body, headers, Optional.empty());
    }
  }
}
