package dev.toolhost.server;

import dev.toolhost.core.ApiError;
import dev.toolhost.core.ToolProfile;
import dev.toolhost.mcp.McpGateway;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.eclipse.jetty.ee11.servlet.ServletContextHandler;
import org.eclipse.jetty.ee11.servlet.ServletHolder;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * The MCP gateway handler serves a host's tools as MCP servers over Streamable HTTP: the {@code
 * main} profile at {@code /mcp} and every profile at {@code /mcp/{profile}}.
 *
 * <p>Requests to any other path pass on to the next handler. The {@link RequestGuard} in front of
 * it has already checked every request's host, origin, token, content type and size, as for every
 * other route. A path that names no profile is a 404 that lists the profiles; a {@code profile}
 * query parameter is refused, for the path alone names the profile a session is opened on, and
 * every request of a session is answered by that profile's gateway only.
 *
 * <p>Every error answer is the host's one JSON error object: the MCP SDK's own error bodies (a
 * serialised exception with its stack, and an echo of the request) are replaced on their way out.
 * {@link #close()} stops every gateway.
 */
final class McpGatewayHandler extends Handler.Wrapper implements AutoCloseable {

  /** The path of the main profile's gateway; every profile's is {@code /mcp/{profile}}. */
  static final String MAIN_PATH = "/mcp";

  private final List<McpGateway> gateways = new ArrayList<>();
  private final Set<String> paths = new HashSet<>();
  private final List<String> profiles;

  McpGatewayHandler(Host host) {
    this.profiles = host.profiles().names();
    ServletContextHandler context = new ServletContextHandler("/");
    context.setErrorHandler(new JsonErrorHandler());
    for (ToolProfile profile : host.profiles().all()) {
      List<String> profilePaths = new ArrayList<>(List.of(MAIN_PATH + "/" + profile.name()));
      if (profile.name().equals("main")) {
        profilePaths.add(MAIN_PATH);
      }
      for (String path : profilePaths) {
        // Host and Origin are the request guard's to check, for this route as for every other.
        McpGateway gateway =
            McpGateway.http(
                host.registry(),
                host.toolSet(profile.name()),
                host.dispatcher(),
                path,
                McpGateway.Sessions.defaults());
        gateways.add(gateway);
        paths.add(path);
        ServletHolder holder = new ServletHolder(gateway.servlet().orElseThrow());
        holder.setAsyncSupported(true);
        context.addServlet(holder, path);
      }
    }
    setHandler(context);
  }

  @Override
  public boolean handle(Request request, Response response, Callback callback) throws Exception {
    String path = request.getHttpURI().getDecodedPath();
    if (!path.equals(MAIN_PATH) && !path.startsWith(MAIN_PATH + "/")) {
      return false;
    }
    if (!paths.contains(path)) {
      JsonErrorHandler.write(
          response,
          callback,
          ApiError.PROFILE_NOT_FOUND,
          "No MCP endpoint at "
              + path
              + ": the gateway serves /mcp (profile main) and /mcp/{profile} for the profiles "
              + String.join(", ", profiles)
              + ".",
          Map.of());
      return true;
    }
    if (Request.extractQueryParameters(request).getValue("profile") != null) {
      JsonErrorHandler.write(
          response,
          callback,
          ApiError.INVALID_REQUEST,
          "The MCP gateway takes its profile from the path, not a query parameter: connect to"
              + " /mcp/{profile}, such as /mcp/subagent.",
          Map.of());
      return true;
    }
    return super.handle(request, new ErrorRewriting(request, response), callback);
  }

  @Override
  public void close() {
    gateways.forEach(McpGateway::close);
  }

  /**
   * A response whose error answers are replaced by the host's JSON error: the SDK writes an {@code
   * McpError} serialised whole (its stack frames, and the request body echoed in its message), and
   * its {@code sendError} calls would render Jetty's error page. Success answers, event streams
   * included, pass through untouched.
   */
  private static final class ErrorRewriting extends Response.Wrapper {
    private boolean replaced;

    ErrorRewriting(Request request, Response response) {
      super(request, response);
    }

    @Override
    public void write(boolean last, ByteBuffer content, Callback callback) {
      int status = getStatus();
      if (status < 400) {
        super.write(last, content, callback);
        return;
      }
      if (!last || replaced) {
        // The library's own body is dropped, piece by piece, until its last write.
        callback.succeeded();
        return;
      }
      replaced = true;
      byte[] body = JsonErrorHandler.code(status).bytes(message(status));
      HttpFields.Mutable headers = getHeaders();
      headers.put(HttpHeader.CONTENT_TYPE, ApiHandler.JSON);
      headers.put(HttpHeader.CONTENT_LENGTH, body.length);
      super.write(true, ByteBuffer.wrap(body), callback);
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
        default -> JsonErrorHandler.messageFor(status);
      };
    }
  }
}
