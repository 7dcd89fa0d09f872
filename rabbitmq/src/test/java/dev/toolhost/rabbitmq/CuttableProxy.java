package dev.toolhost.rabbitmq;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A cuttable proxy forwards TCP connections from a local port to the broker, and can cut them: the
 * connections through it close, and new ones are closed as they arrive, until it is restored. So a
 * test drops one client's connection to the real broker, and keeps it from recovering, while the
 * others stay connected (rabbitmqctl drops every connection, and takes seconds to start).
 *
 * <p>Written here because the one tool made for this (Toxiproxy) is a server of its own that this
 * machine does not have; forwarding bytes both ways is all that is needed.
 */
final class CuttableProxy implements AutoCloseable {

  private final ServerSocket server;
  private final InetSocketAddress broker;
  private final Set<Socket> open = ConcurrentHashMap.newKeySet();
  private volatile boolean cut;

  /** A proxy on a free local port to the broker at the host and port of the URI. */
  CuttableProxy(URI broker) throws IOException {
    this.broker = new InetSocketAddress(broker.getHost(), broker.getPort());
    this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread.ofVirtual().name("cuttable-proxy").start(this::accept);
  }

  /** The broker's URI with its port replaced by the proxy's. */
  URI uri(URI broker) throws URISyntaxException {
    return new URI(
        broker.getScheme(),
        broker.getRawUserInfo(),
        broker.getHost(),
        server.getLocalPort(),
        broker.getPath(),
        null,
        null);
  }

  /** Closes every connection through the proxy, and every new one until {@link #restore}. */
  void cut() {
    cut = true;
    open.forEach(CuttableProxy::closeQuietly);
  }

  /** Lets new connections through again. */
  void restore() {
    cut = false;
  }

  private void accept() {
    while (!server.isClosed()) {
      Socket client;
      try {
        client = server.accept();
      } catch (IOException e) {
        return;
      }
      if (cut) {
        closeQuietly(client);
        continue;
      }
      try {
        Socket upstream = new Socket(broker.getAddress(), broker.getPort());
        open.add(client);
        open.add(upstream);
        pump(client, upstream);
        pump(upstream, client);
      } catch (IOException e) {
        closeQuietly(client);
      }
    }
  }

  // Copies one direction until either side closes, then closes both.
  private void pump(Socket from, Socket to) {
    Thread.ofVirtual()
        .start(
            () -> {
              try (InputStream in = from.getInputStream();
                  OutputStream out = to.getOutputStream()) {
                in.transferTo(out);
              } catch (IOException e) {
                // Cut, or closed by either side: both go.
              } finally {
                open.remove(from);
                open.remove(to);
                closeQuietly(from);
                closeQuietly(to);
              }
            });
  }

  private static void closeQuietly(Socket socket) {
    try {
      socket.close();
    } catch (IOException e) {
      // Closing anyway.
    }
  }

  @Override
  public void close() throws IOException {
    server.close();
    cut();
  }
}
