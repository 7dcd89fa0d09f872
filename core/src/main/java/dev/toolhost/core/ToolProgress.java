package dev.toolhost.core;

import io.opentelemetry.context.Context;
import io.opentelemetry.context.ContextKey;
import io.opentelemetry.context.Scope;
import java.util.Objects;
import java.util.Optional;

/**
 * Tool progress is how a running tool tells its caller how far it has come, for callers that
 * listen: an MCP client that sent a progress token through the gateway, say.
 *
 * <p>A caller that listens makes its listener current around the dispatch ({@link #listen}); the
 * dispatch path carries it, with the rest of the call's context, to the tool's thread; a tool
 * reports with {@link #report}, and the MCP bridge forwards a bridged server's progress
 * notifications. Without a listener a report goes nowhere. The listener rides on the OpenTelemetry
 * {@link Context}, the context the dispatch path already carries across threads.
 */
public final class ToolProgress {

  /** A listener hears the progress of the calls it was current for. */
  @FunctionalInterface
  public interface Listener {
    /**
     * Called for each report, on the reporting thread; must not block.
     *
     * @param progress how far the call has come, increasing with each report
     * @param total the progress at which it will be done, when known
     * @param message what it is doing, when it says
     */
    void progress(double progress, Optional<Double> total, Optional<String> message);
  }

  private static final ContextKey<Listener> KEY = ContextKey.named("toolhost.tool.progress");

  private ToolProgress() {}

  /**
   * Makes the listener current for the calls this thread dispatches until the scope closes.
   *
   * @return the scope to close, in a try-with-resources
   */
  public static Scope listen(Listener listener) {
    return Context.current().with(KEY, Objects.requireNonNull(listener, "listener")).makeCurrent();
  }

  /** The listener of the call running on this thread, if its caller listens. */
  public static Optional<Listener> current() {
    return Optional.ofNullable(Context.current().get(KEY));
  }

  /** Reports the progress of the call running on this thread to its caller, if it listens. */
  public static void report(double progress, Optional<Double> total, Optional<String> message) {
    current().ifPresent(listener -> listener.progress(progress, total, message));
  }
}
