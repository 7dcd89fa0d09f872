package dev.toolhost.a2a;

import dev.toolhost.core.spi.Route;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * A route server serves extension routes on a local Jetty as the host does (headers in, streamed
 * answers out), for tests that need the A2A server over HTTP without a whole host.
 */
final class RouteServer implements AutoCloseable {

  private final Server server;
  private final URI base;

  RouteServer(List<Route> routes) throws Exception {
    QueuedThreadPool threads = new QueuedThreadPool();
    threads.setVirtualThreadsExecutor(
        java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor());
    threads.setDaemon(true);
    server = new Server(threads);
    base =
        start(
            server,
            (request, response, callback) -> {
              String path = request.getHttpURI().getDecodedPath();
              for (Route route : routes) {
                if (route.method().equals(request.getMethod()) && route.matches(path)) {
                  Map<String, List<String>> headers = new LinkedHashMap<>();
                  request
                      .getHeaders()
                      .forEach(
                          f ->
                              headers
                                  .computeIfAbsent(f.getName(), n -> new ArrayList<>())
                                  .add(f.getValue()));
                  byte[] body;
                  try (InputStream in = Request.asInputStream(request)) {
                    body = in.readAllBytes();
                  }
                  Route.Answer answer =
                      route
                          .handler()
                          .answer(
                              new Route.Request(
                                  request.getMethod(), path, Map.of(), body, headers));
                  response.setStatus(answer.status());
                  response.getHeaders().put(HttpHeader.CONTENT_TYPE, answer.contentType());
                  if (answer.stream().isPresent()) {
                    try (OutputStream out = Content.Sink.asOutputStream(response)) {
                      answer.stream().get().write(out);
                    }
                    callback.succeeded();
                  } else {
                    response.write(true, ByteBuffer.wrap(answer.body()), callback);
                  }
                  return true;
                }
              }
              response.setStatus(404);
              response.write(true, ByteBuffer.allocate(0), callback);
              return true;
            });
  }

  /** What a test server does with a request: Jetty's {@link Handler#handle}, as a lambda. */
  @FunctionalInterface
  interface Handling {
    boolean handle(Request request, Response response, Callback callback) throws Exception;
  }

  /** Starts the server on a free port of 127.0.0.1 handling each request so; the base URI. */
  static URI start(Server server, Handling handling) throws Exception {
    ServerConnector connector = new ServerConnector(server);
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    server.addConnector(connector);
    server.setHandler(
        new Handler.Abstract() {
          @Override
          public boolean handle(Request request, Response response, Callback callback)
              throws Exception {
            return handling.handle(request, response, callback);
          }
        });
    server.start();
    return URI.create("http://127.0.0.1:" + connector.getLocalPort());
  }

  URI base() {
    return base;
  }

  @Override
  public void close() throws Exception {
    server.stop();
  }
}
