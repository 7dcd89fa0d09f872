package dev.toolhost.bus;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * A log capture holds what is written to standard error (where slf4j-simple logs) from when it is
 * made until it is closed, for tests of what a part logs. One at a time: it replaces {@link
 * System#err} for the whole JVM.
 */
public final class LogCapture implements AutoCloseable {

  private final PrintStream before = System.err;
  private final ByteArrayOutputStream captured = new ByteArrayOutputStream();

  private LogCapture() {
    System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
  }

  /** Starts capturing standard error. */
  public static LogCapture start() {
    return new LogCapture();
  }

  /** The messages logged so far by the named class, without the thread, level and logger. */
  public List<String> messages(Class<?> logger, String level) {
    String marker = " " + level + " " + logger.getName() + " - ";
    String text;
    synchronized (captured) {
      text = captured.toString(StandardCharsets.UTF_8);
    }
    return text.lines()
        .filter(line -> line.contains(marker))
        .map(line -> line.substring(line.indexOf(marker) + marker.length()))
        .toList();
  }

  @Override
  public void close() {
    System.setErr(before);
  }
}
