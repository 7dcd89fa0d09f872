package dev.toolhost.server;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.http.HttpParser;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.server.internal.HttpConnection;
import org.eclipse.jetty.util.thread.Scheduler;

/**
 * The header timeout closes a connection whose client takes longer than the limit to send the head
 * (request line and headers) of one request. Jetty's idle timeout alone does not: a client that
 * trickles a header byte now and then (slowloris) resets it with every byte and holds the
 * connection, and a request thread's worth of state, for as long as it likes.
 *
 * <p>Jetty 12 has no such timeout of its own, so this listener looks at each HTTP/1.1 connection's
 * parser on a tick of a quarter of the limit: a connection seen in the middle of the same request
 * head for longer than the limit is closed. An idle keep-alive connection (its parser at the start)
 * is left to the idle timeout, and a request's body is the handler's to bound. It reads the parser
 * through {@link HttpConnection}, which lives in Jetty's {@code internal} package: the only place
 * the parser's state is exposed.
 */
final class HeaderTimeout implements Connection.Listener {

  private final long limitNanos;
  private final long tickMillis;
  private final Scheduler scheduler;

  /** A timeout of the given limit, ticking on the given scheduler (the connector's). */
  HeaderTimeout(Duration limit, Scheduler scheduler) {
    this.limitNanos = limit.toNanos();
    this.tickMillis = Math.max(10, limit.toMillis() / 4);
    this.scheduler = scheduler;
  }

  @Override
  public void onOpened(Connection connection) {
    if (connection instanceof HttpConnection http) {
      new Watch(http).schedule();
    }
  }

  /** The watch over one connection: which request head it is in, and since when. */
  private final class Watch implements Runnable {
    private final HttpConnection connection;
    private long headOf = -1;
    private long since;

    Watch(HttpConnection connection) {
      this.connection = connection;
    }

    void schedule() {
      scheduler.schedule(this, tickMillis, TimeUnit.MILLISECONDS);
    }

    @Override
    public void run() {
      if (!connection.getEndPoint().isOpen()) {
        return;
      }
      HttpParser parser = connection.getParser();
      long now = System.nanoTime();
      if (parser.inHeaderState() && !parser.isStart()) {
        long request = connection.getMessagesIn();
        if (request != headOf) {
          headOf = request;
          since = now;
        } else if (now - since >= limitNanos) {
          connection.getEndPoint().close();
          return;
        }
      } else {
        headOf = -1;
      }
      schedule();
    }
  }
}
