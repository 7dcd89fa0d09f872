package dev.toolhost.core;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * An executable tool is a spec with the executor that runs it, its compiled parameters schema, and
 * where the dispatch path runs it.
 *
 * <p>By default a tool is isolated: the dispatch path runs it on a virtual thread of its own, so
 * that a caller never waits past the call's deadline, whatever the tool does. A tool may instead
 * run inline, on the caller's thread, skipping that thread hop (tens of microseconds from a
 * platform thread, a second wake-up per call from a virtual one), when its executor returns by the
 * deadline on its own: because it never blocks and finishes in microseconds (a lookup in memory, a
 * small computation), or because it bounds every wait by {@link ToolCall#deadline()} and stops when
 * interrupted (the MCP bridge and the remote executors do). The deadline is checked before an
 * inline tool starts. An inline tool that blocks past its deadline holds its caller; only mark a
 * tool inline when it cannot.
 *
 * <p>A tool may name its own timeout: how long a call to it may take when the caller names no
 * deadline (an HTTP invoke without {@code timeout_ms}, a model's call in the agent loop, an MCP
 * client's call). Without one such a call gets {@link ToolCall#DEFAULT_TIMEOUT}. A deadline the
 * caller names always wins.
 *
 * <p>Immutable and thread-safe. Made by {@link MethodTools} and by {@link #of}, which checks the
 * parameters schema.
 *
 * @param spec what the model is told
 * @param executor what runs it
 * @param schema the compiled parameters schema
 * @param inline whether the tool runs on the caller's thread (it returns by the deadline itself)
 * @param timeout how long a call may take when its caller names no deadline; empty for {@link
 *     ToolCall#DEFAULT_TIMEOUT}
 */
public record ExecutableTool(
    ToolSpec spec,
    ToolExecutor executor,
    ParametersSchema schema,
    boolean inline,
    Optional<Duration> timeout) {

  public ExecutableTool {
    Objects.requireNonNull(spec, "spec");
    Objects.requireNonNull(executor, "executor");
    Objects.requireNonNull(schema, "schema");
    Objects.requireNonNull(timeout, "timeout");
    if (timeout.filter(duration -> duration.isNegative() || duration.isZero()).isPresent()) {
      throw new IllegalArgumentException(
          "Tool '"
              + spec.name()
              + "' has a timeout of "
              + timeout.get()
              + "; it must be positive.");
    }
  }

  /** An isolated tool with the default timeout. */
  public ExecutableTool(ToolSpec spec, ToolExecutor executor, ParametersSchema schema) {
    this(spec, executor, schema, false, Optional.empty());
  }

  /**
   * An isolated tool from a spec and an executor, with the default timeout.
   *
   * @throws IllegalArgumentException when the parameters schema is not a valid JSON Schema object
   */
  public static ExecutableTool of(ToolSpec spec, ToolExecutor executor) {
    return new ExecutableTool(
        spec, executor, ParametersSchema.compile(spec.name(), spec.parameters()));
  }

  /**
   * This tool, run inline on the caller's thread; only for tools whose executor returns by the
   * call's deadline on its own.
   */
  public ExecutableTool runInline() {
    return new ExecutableTool(spec, executor, schema, true, timeout);
  }

  /**
   * This tool with its own timeout: how long a call may take when its caller names no deadline.
   *
   * @throws IllegalArgumentException when the timeout is not positive
   */
  public ExecutableTool withTimeout(Duration timeout) {
    return new ExecutableTool(spec, executor, schema, inline, Optional.of(timeout));
  }

  /** This tool run by another executor, everything else kept. */
  public ExecutableTool withExecutor(ToolExecutor executor) {
    return new ExecutableTool(spec, executor, schema, inline, timeout);
  }

  /** How long a call may take when its caller names no deadline. */
  public Duration defaultTimeout() {
    return timeout.orElse(ToolCall.DEFAULT_TIMEOUT);
  }

  /** The tool's name. */
  public String name() {
    return spec.name();
  }
}
