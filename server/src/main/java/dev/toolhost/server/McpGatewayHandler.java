package dev.toolhost.server;

import dev.toolhost.core.ToolProfile;
import dev.toolhost.mcp.McpGateway;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.eclipse.jetty.ee11.servlet.ServletContextHandler;
import org.eclipse.jetty.ee11.servlet.ServletHolder;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * The MCP gateway handler serves a host's tools as MCP servers over Streamable HTTP: the {@code
 * main} profile at {@code /mcp} and every profile at {@code /mcp/{profile}}.
 *
 * <p>Requests to any other path pass on to the next handler. With a token, every request must carry
 * it as a bearer token, compared in constant time, as on the HTTP API; the {@code Host} and {@code
 * Origin} headers must name a loopback address or the configured host (DNS-rebinding protection).
 * {@link #close()} stops every gateway.
 */
final class McpGatewayHandler extends Handler.Wrapper implements AutoCloseable {

  /** The path of the main profile's gateway; every profile's is {@code /mcp/{profile}}. */
  static final String MAIN_PATH = "/mcp";

  private final Optional<byte[]> tokenDigest;
  private final List<McpGateway> gateways = new ArrayList<>();

  McpGatewayHandler(Host host, Optional<String> token) {
    this.tokenDigest = token.map(McpGatewayHandler::digest);
    String bound = host.config().http().host();
    List<String> hosts = new ArrayList<>(List.of("127.0.0.1:*", "localhost:*", "[::1]:*"));
    List<String> origins =
        new ArrayList<>(List.of("http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"));
    if (!hosts.contains(bound + ":*")) {
      hosts.add(bound + ":*");
      origins.add("http://" + bound + ":*");
      origins.add("https://" + bound + ":*");
    }
    ServletContextHandler context = new ServletContextHandler("/");
    for (ToolProfile profile : host.profiles().all()) {
      List<String> paths = new ArrayList<>(List.of(MAIN_PATH + "/" + profile.name()));
      if (profile.name().equals("main")) {
        paths.add(MAIN_PATH);
      }
      for (String path : paths) {
        McpGateway gateway =
            McpGateway.http(
                host.registry(),
                host.toolSet(profile.name()),
                host.dispatcher(),
                path,
                hosts,
                origins);
        gateways.add(gateway);
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
    if (tokenDigest.isPresent() && !authorized(request)) {
      response.setStatus(401);
      response.getHeaders().put(HttpHeader.WWW_AUTHENTICATE, "Bearer");
      response.getHeaders().put(HttpHeader.CONTENT_TYPE, ApiHandler.JSON);
      response.write(
          true,
          ByteBuffer.wrap(
              ("{\"error\": {\"code\": \"unauthorized\", \"message\": \"This MCP endpoint needs"
                      + " a bearer token: send the header 'Authorization: Bearer TOKEN'.\"}}")
                  .getBytes(StandardCharsets.UTF_8)),
          callback);
      return true;
    }
    return super.handle(request, response, callback);
  }

  private boolean authorized(Request request) {
    String header = request.getHeaders().get(HttpHeader.AUTHORIZATION);
    if (header == null || !header.regionMatches(true, 0, "Bearer ", 0, 7)) {
      return false;
    }
    return MessageDigest.isEqual(digest(header.substring(7).strip()), tokenDigest.orElseThrow());
  }

  private static byte[] digest(String token) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this JVM", e);
    }
  }

  @Override
  public void close() {
    gateways.forEach(McpGateway::close);
  }
}
