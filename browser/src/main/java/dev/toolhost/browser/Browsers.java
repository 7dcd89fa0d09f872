package dev.toolhost.browser;

import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ToolException;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The browsers are a host's open browsers, one per session: at most the configured number at once,
 * the oldest idle one closed to make room for a new one, and any idle for longer than the idle
 * timeout closed by a reaper. A session's calls run one at a time on its browser.
 *
 * <p>Thread-safe. {@link #close()} closes every browser, stops the reaper, then closes what the
 * browsers shared (the vetting proxy they all connect through).
 */
final class Browsers implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(Browsers.class);

  /** A session's browser, its current tab and its last snapshot. */
  static final class Session {
    final String id;
    final Chromium browser;
    final ReentrantLock lock = new ReentrantLock();
    volatile Instant used = Instant.now();
    Chromium.Tab current;
    Optional<Snapshot> snapshot = Optional.empty();
    Chromium.Tab snapshotTab;
    long snapshotNavigations;
    int snapshots;
    int screenshots;

    /** The secrets typed in this session, by name, so that no output shows them. */
    final Map<String, String> typed = new LinkedHashMap<>();

    Session(String id, Chromium browser) {
      this.id = id;
      this.browser = browser;
    }

    /** The text with every secret typed in this session replaced by its name. */
    String redacted(String text) {
      String out = text;
      for (Map.Entry<String, String> secret : typed.entrySet()) {
        if (!secret.getValue().isEmpty()) {
          out = out.replace(secret.getValue(), "[secret " + secret.getKey() + "]");
          String encoded =
              java.net.URLEncoder.encode(
                  secret.getValue(), java.nio.charset.StandardCharsets.UTF_8);
          out = out.replace(encoded, "[secret " + secret.getKey() + "]");
        }
      }
      return out;
    }
  }

  /** Starts a browser; tests count the starts. */
  @FunctionalInterface
  interface Launcher {
    Chromium launch() throws IOException, InterruptedException;
  }

  private final int max;
  private final Duration idle;
  private final Launcher launcher;
  private final Map<String, Session> sessions = new LinkedHashMap<>();
  private final Thread reaper;
  private final AutoCloseable shared;
  private boolean closed;

  Browsers(int max, Duration idle, Launcher launcher) {
    this(max, idle, launcher, () -> {});
  }

  /**
   * Browsers that share something closed after them: the vetting proxy every browser connects
   * through.
   */
  Browsers(int max, Duration idle, Launcher launcher, AutoCloseable shared) {
    this.shared = shared;
    this.max = max;
    this.idle = idle;
    this.launcher = launcher;
    Duration period = idle.dividedBy(4);
    long sleep = Math.max(50, Math.min(period.toMillis(), 30_000));
    this.reaper =
        Thread.ofVirtual()
            .name("toolhost-browser-reaper")
            .start(
                () -> {
                  try {
                    while (!Thread.currentThread().isInterrupted()) {
                      Thread.sleep(sleep);
                      reap();
                    }
                  } catch (InterruptedException e) {
                    // Closed.
                  }
                });
  }

  /**
   * The session's browser, locked for the caller, started when it has none; unlock it when done.
   *
   * @throws ToolException UNAVAILABLE when every browser is busy, or the browser does not start
   */
  Session acquire(String id) throws InterruptedException {
    Session session;
    synchronized (this) {
      if (closed) {
        throw new ToolException(ErrorCode.UNAVAILABLE, "The host is shutting down.");
      }
      session = sessions.get(id);
      if (session != null && session.browser.gone()) {
        sessions.remove(id);
        closeLocked(session);
        session = null;
      }
      if (session == null) {
        while (sessions.size() >= max) {
          Optional<Session> oldest =
              sessions.values().stream()
                  .filter(s -> !s.lock.isLocked())
                  .min(Comparator.comparing(s -> s.used));
          if (oldest.isEmpty()) {
            throw new ToolException(
                ErrorCode.UNAVAILABLE,
                "All " + max + " browsers of this host are busy; try again shortly.");
          }
          // Closed before the new one starts, so that no more than the cap ever run.
          sessions.remove(oldest.get().id);
          LOG.info("Closing the browser of session {} to make room", oldest.get().id);
          closeLocked(oldest.get());
        }
        Chromium browser;
        try {
          browser = launcher.launch();
        } catch (IOException e) {
          LOG.warn("The browser did not start: {}", e.getMessage());
          throw new ToolException(
              ErrorCode.UNAVAILABLE, "The browser did not start: " + e.getMessage());
        }
        session = new Session(id, browser);
        sessions.put(id, session);
      }
    }
    session.lock.lockInterruptibly();
    session.used = Instant.now();
    return session;
  }

  /** Closes the session's browser; false when it had none. */
  boolean close(String id) {
    Session session;
    synchronized (this) {
      session = sessions.remove(id);
    }
    if (session == null) {
      return false;
    }
    session.browser.close();
    return true;
  }

  /** How many browsers are open. */
  synchronized int open() {
    return sessions.size();
  }

  private void reap() {
    Instant cut = Instant.now().minus(idle);
    List<Session> idleOnes = new ArrayList<>();
    synchronized (this) {
      sessions
          .values()
          .removeIf(
              s -> {
                boolean stale = !s.lock.isLocked() && s.used.isBefore(cut);
                if (stale) {
                  idleOnes.add(s);
                }
                return stale;
              });
    }
    for (Session s : idleOnes) {
      LOG.info("Closing the browser of session {}: idle for {}", s.id, idle);
      closeLocked(s);
    }
  }

  /** Closes a browser once the call using it, if any, is done. */
  private static void closeLocked(Session session) {
    session.lock.lock();
    try {
      session.browser.close();
    } finally {
      session.lock.unlock();
    }
  }

  @Override
  public void close() {
    List<Session> all;
    synchronized (this) {
      closed = true;
      all = new ArrayList<>(sessions.values());
      sessions.clear();
    }
    reaper.interrupt();
    // A call may hold a browser: close under it, for the host is going.
    for (Session s : all) {
      s.browser.close();
    }
    try {
      reaper.join(Duration.ofSeconds(5));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    try {
      shared.close();
    } catch (Exception e) {
      LOG.warn("What the browsers shared did not close: {}", e.toString());
    }
  }
}
