package dev.toolhost.core;

import java.util.Objects;

/**
 * An executable tool is a spec with the executor that runs it and its compiled parameters schema.
 *
 * <p>Immutable and thread-safe. Made by {@link MethodTools} and by {@link #of}, which checks the
 * parameters schema.
 *
 * @param spec what the model is told
 * @param executor what runs it
 * @param schema the compiled parameters schema
 */
public record ExecutableTool(ToolSpec spec, ToolExecutor executor, ParametersSchema schema) {

  public ExecutableTool {
    Objects.requireNonNull(spec, "spec");
    Objects.requireNonNull(executor, "executor");
    Objects.requireNonNull(schema, "schema");
  }

  /**
   * A tool from a spec and an executor.
   *
   * @throws IllegalArgumentException when the parameters schema is not a valid JSON Schema object
   */
  public static ExecutableTool of(ToolSpec spec, ToolExecutor executor) {
    return new ExecutableTool(
        spec, executor, ParametersSchema.compile(spec.name(), spec.parameters()));
  }

  /** The tool's name. */
  public String name() {
    return spec.name();
  }
}
