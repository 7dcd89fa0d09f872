package dev.toolhost.secrets;

import dev.toolhost.core.Redactor;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArraySet;

/**
 * Log redaction is this process's redaction of its log lines: a base redactor (the command line's:
 * the shipped rules and the process's secret variables), then the scanner of every host running in
 * the process, with its config's rules, allow-list and secrets, added by the secrets extension when
 * the host starts and taken away when it closes. So a rule a user adds in {@code secrets:} holds
 * for the log as it does for tool results.
 *
 * <p>Process-wide, as standard error is; thread-safe.
 */
public final class LogRedaction {

  private static final Set<Redactor> HOSTS = new CopyOnWriteArraySet<>();

  private LogRedaction() {}

  /** Adds a running host's scanner to the log's redaction until the returned handle is closed. */
  public static AutoCloseable add(Redactor host) {
    Redactor added = Objects.requireNonNull(host, "host");
    HOSTS.add(added);
    return () -> HOSTS.remove(added);
  }

  /**
   * The log's redactor: the base, then every running host's scanner, each over what the one before
   * left. Line by line only: its {@link Redactor#stream} is the base's.
   */
  public static Redactor over(Redactor base) {
    Objects.requireNonNull(base, "base");
    return new Redactor() {
      @Override
      public String redact(String text) {
        String redacted = base.redact(text);
        for (Redactor host : HOSTS) {
          redacted = host.redact(redacted);
        }
        return redacted;
      }

      @Override
      public Stream stream() {
        return base.stream();
      }
    };
  }
}
