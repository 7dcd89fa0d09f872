package dev.toolhost.server;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A client watch tells when the client of a request being handled closes its connection: one
 * selector, on a thread of its own, watches the sockets of the HTTP/1 requests whose calls are
 * running, and runs a request's action when its socket reaches the end of its stream.
 *
 * <p>Jetty fails a request whose connection it sees close, but it does not read an HTTP/1
 * connection while the connection's request is handled, so it would see a client gone only at the
 * idle timeout. A socket may be registered with several selectors, so this one reads nothing Jetty
 * waits for: it reads one byte only when the socket is readable while the request runs. The end of
 * the stream is the client gone; a byte is a pipelined next request, which no longer parses once
 * taken, so the watch says so and the answer closes the connection (the client sends that request
 * again, as HTTP/1.1 lets a server make it). Written by hand: Jetty has no hook for it, and it is a
 * selector loop.
 */
final class ClientWatch implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(ClientWatch.class);

  private final Selector selector;
  private final Thread thread;
  private final Queue<Watch> added = new ConcurrentLinkedQueue<>();
  private volatile boolean closed;

  ClientWatch() throws IOException {
    this.selector = Selector.open();
    this.thread = Thread.ofPlatform().name("toolhost-client-watch").daemon().start(this::run);
  }

  /** One request's watch: closed when its handling ends, after which its action never runs. */
  final class Watch implements AutoCloseable {
    private final SocketChannel channel;
    private final Runnable gone;
    private SelectionKey key;
    private boolean ended;
    private boolean pipelined;

    private Watch(SocketChannel channel, Runnable gone) {
      this.channel = channel;
      this.gone = gone;
    }

    /** Whether a byte of a next request was taken: then the answer must close the connection. */
    synchronized boolean pipelined() {
      return pipelined;
    }

    private synchronized void readable() {
      if (ended) {
        return;
      }
      ended = true;
      key.cancel();
      try {
        int read = channel.read(ByteBuffer.allocate(1));
        if (read < 0) {
          gone.run();
        } else if (read > 0) {
          pipelined = true;
        } else {
          ended = false; // Readable for nothing: watch on.
          register();
        }
      } catch (IOException e) {
        gone.run();
      }
    }

    private synchronized void register() {
      if (ended) {
        return;
      }
      try {
        key = channel.register(selector, SelectionKey.OP_READ, this);
      } catch (ClosedChannelException e) {
        ended = true;
        gone.run();
      } catch (RuntimeException e) {
        // Another blocking mode, a key of this selector cancelled but not yet flushed: unwatched.
        LOG.debug("Could not watch a client's connection", e);
        ended = true;
      }
    }

    @Override
    public synchronized void close() {
      ended = true;
      if (key != null) {
        key.cancel();
      }
    }
  }

  /** Watches the socket until the watch closes, running {@code gone} if the client goes first. */
  Watch watch(SocketChannel channel, Runnable gone) {
    Watch watch = new Watch(channel, gone);
    added.add(watch);
    selector.wakeup();
    return watch;
  }

  private void run() {
    while (!closed) {
      try {
        selector.select();
      } catch (IOException | RuntimeException e) {
        if (!closed) {
          LOG.warn("The client watch's selector failed; clients that leave are seen late", e);
        }
        return;
      }
      for (Watch watch; (watch = added.poll()) != null; ) {
        watch.register();
      }
      for (SelectionKey key : selector.selectedKeys()) {
        if (key.isValid() && key.attachment() instanceof Watch watch) {
          watch.readable();
        }
      }
      // A key a watch cancelled leaves the selector at the end of a select, so a connection's
      // next request registers again after this one's watch ended.
      selector.selectedKeys().clear();
    }
  }

  @Override
  public void close() throws IOException {
    closed = true;
    selector.wakeup();
    try {
      thread.join(1_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    selector.close();
  }
}
