package dev.toolhost.core;

import io.opentelemetry.context.Scope;
import java.util.Objects;
import java.util.Optional;

/**
 * The tool caller is what a running tool knows of who called it: the tool set the call was
 * dispatched through. A tool that reaches other tools on its caller's behalf (the MCP management
 * tools, service search, an agent called as a tool) must reach at most what that set shows, or a
 * profile could be bypassed by calling through it.
 *
 * <p>The dispatcher makes the caller's set current around the executor, on the thread the executor
 * runs on; a tool reads it there, before it hands work to other threads. It is a thread-local, not
 * part of the OpenTelemetry context the dispatch path carries across threads: it is set on the
 * executor's own thread, and a plain thread-local costs the hot path no allocation. Outside a
 * dispatched call there is no caller.
 */
public final class ToolCaller {

  private static final ThreadLocal<ToolSet> CURRENT = new ThreadLocal<>();

  private ToolCaller() {}

  /** The tool set the call running on this thread was dispatched through, inside a tool. */
  public static Optional<ToolSet> toolSet() {
    return Optional.ofNullable(CURRENT.get());
  }

  /**
   * Makes the tool set current as the caller's on this thread until the scope closes. The
   * dispatcher does this around every executor; code that acts for a tool set outside a dispatched
   * call (the agent loop asking for a context hint for its conversation) does it too, so that what
   * it reaches is scoped as a tool's would be.
   *
   * @return the scope to close, on this thread, in a try-with-resources
   */
  public static Scope enter(ToolSet tools) {
    ToolSet before = swap(Objects.requireNonNull(tools, "tools"));
    return () -> restore(before);
  }

  /** Makes the tool set current and returns the one it replaces, for {@link #restore}. */
  static ToolSet swap(ToolSet tools) {
    ToolSet before = CURRENT.get();
    CURRENT.set(tools);
    return before;
  }

  /** Puts back what {@link #swap} replaced; nothing is left on a pooled thread. */
  static void restore(ToolSet before) {
    if (before == null) {
      CURRENT.remove();
    } else {
      CURRENT.set(before);
    }
  }
}
