package dev.toolhost.core;

import io.opentelemetry.context.Context;
import io.opentelemetry.context.ContextKey;
import io.opentelemetry.context.Scope;
import java.util.Objects;
import java.util.Optional;

/**
 * The tool caller is what a running tool knows of who called it: the tool set the call was
 * dispatched through. A tool that reaches other tools on its caller's behalf (the MCP management
 * tools, service search, an agent called as a tool) must reach at most what that set shows, or a
 * profile could be bypassed by calling through it.
 *
 * <p>The dispatcher makes the caller's set current around the executor, on the tool's own thread;
 * it rides on the OpenTelemetry {@link Context}, which the dispatch path already carries across
 * threads. Outside a dispatched call there is no caller.
 */
public final class ToolCaller {

  private static final ContextKey<ToolSet> KEY = ContextKey.named("toolhost.tool.caller");

  private ToolCaller() {}

  /** The tool set the call running on this thread was dispatched through, inside a tool. */
  public static Optional<ToolSet> toolSet() {
    return Optional.ofNullable(Context.current().get(KEY));
  }

  /**
   * Makes the tool set current as the caller's until the scope closes. The dispatcher does this
   * around every executor; code that acts for a tool set outside a dispatched call (the agent loop
   * asking for a context hint for its conversation) does it too, so that what it reaches is scoped
   * as a tool's would be.
   *
   * @return the scope to close, in a try-with-resources
   */
  public static Scope enter(ToolSet tools) {
    return Context.current().with(KEY, Objects.requireNonNull(tools, "tools")).makeCurrent();
  }
}
