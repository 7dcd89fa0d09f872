package dev.toolhost.core.spi;

import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolSet;
import java.io.PrintWriter;
import java.util.Optional;

/**
 * A running host is a started host as a command uses it: its tools, its one dispatcher, its tool
 * sets per profile and the services its extensions share. Closing it closes the host and the bus it
 * was opened on.
 */
public interface RunningHost extends AutoCloseable {

  /** The registry of every tool the host can run. */
  ToolRegistry registry();

  /** The dispatcher every call on the host goes through. */
  ToolDispatcher dispatcher();

  /**
   * The host's tool set for the named profile.
   *
   * @throws IllegalArgumentException naming the unknown profile and the known ones
   */
  ToolSet toolSet(String profile);

  /**
   * The host's tool set for the named profile, as a command answers its {@code --profile}: empty
   * after printing to the writer why there is none (the unknown profile and the known ones).
   */
  default Optional<ToolSet> toolSet(String profile, PrintWriter err) {
    try {
      return Optional.of(toolSet(profile));
    } catch (IllegalArgumentException e) {
      err.println(e.getMessage());
      return Optional.empty();
    }
  }

  /** The service of that type the host or one of its extensions shares, if any. */
  <T> Optional<T> service(Class<T> type);

  @Override
  void close();
}
