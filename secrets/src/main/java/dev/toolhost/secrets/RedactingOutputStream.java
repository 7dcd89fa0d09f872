package dev.toolhost.secrets;

import dev.toolhost.core.Redactor;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * A redacting output stream passes text on line by line with every secret in each line redacted:
 * what a host's logger writes to standard error goes through it, so that no log line carries a
 * secret. A line longer than {@link #MAX_LINE} bytes is passed on in pieces of that size.
 *
 * <p>The redactor is made on the first line, so that a command that logs nothing never loads the
 * rules. Thread-safe: lines from several threads are passed on whole.
 */
public final class RedactingOutputStream extends OutputStream {

  /** The longest line held before it is passed on in pieces. */
  static final int MAX_LINE = 64 * 1024;

  private final OutputStream target;
  private final Supplier<Redactor> redactors;
  private final ByteArrayOutputStream line = new ByteArrayOutputStream();
  private Redactor redactor;

  /** A stream that redacts with the redactor the supplier makes, when it is first needed. */
  public RedactingOutputStream(OutputStream target, Supplier<Redactor> redactor) {
    this.target = Objects.requireNonNull(target, "target");
    this.redactors = Objects.requireNonNull(redactor, "redactor");
  }

  @Override
  public synchronized void write(int b) throws IOException {
    line.write(b);
    if (b == '\n' || line.size() >= MAX_LINE) {
      pass();
    }
  }

  @Override
  public synchronized void write(byte[] bytes, int offset, int length) throws IOException {
    for (int i = offset; i < offset + length; i++) {
      write(bytes[i]);
    }
  }

  /**
   * Passes on what is written so far, up to the last whole line: a print stream flushes after each
   * write, and a line passed on in pieces would be scanned in pieces.
   */
  @Override
  public synchronized void flush() throws IOException {
    target.flush();
  }

  @Override
  public synchronized void close() throws IOException {
    pass();
    target.flush();
    target.close();
  }

  private void pass() throws IOException {
    if (line.size() == 0) {
      return;
    }
    if (redactor == null) {
      redactor = redactors.get();
    }
    String text = line.toString(StandardCharsets.UTF_8);
    line.reset();
    target.write(redactor.redact(text).getBytes(StandardCharsets.UTF_8));
  }
}
