package dev.toolhost.mcp;

import java.net.URI;
import org.eclipse.jetty.ee11.servlet.ServletContextHandler;
import org.eclipse.jetty.ee11.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/**
 * A served gateway is an MCP gateway's servlet at {@code /mcp} on a Jetty of its own, on a free
 * port of 127.0.0.1, for tests of the streamable HTTP transport. Closing stops the Jetty, not the
 * gateway.
 */
record ServedGateway(Server jetty, URI endpoint) implements AutoCloseable {

  /** Serves the gateway's servlet; the endpoint is its URL. */
  static ServedGateway serve(McpGateway gateway) throws Exception {
    Server jetty = new Server();
    ServerConnector connector = new ServerConnector(jetty);
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    jetty.addConnector(connector);
    ServletContextHandler context = new ServletContextHandler("/");
    ServletHolder holder = new ServletHolder(gateway.servlet().orElseThrow());
    holder.setAsyncSupported(true);
    context.addServlet(holder, "/mcp");
    jetty.setHandler(context);
    jetty.start();
    return new ServedGateway(
        jetty, URI.create("http://127.0.0.1:" + connector.getLocalPort() + "/mcp"));
  }

  @Override
  public void close() throws Exception {
    jetty.stop();
  }
}
