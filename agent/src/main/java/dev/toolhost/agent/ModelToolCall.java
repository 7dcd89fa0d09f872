package dev.toolhost.agent;

import java.util.Objects;

/**
 * A model tool call is one function call a model asked for: its id, the function name as the model
 * spelled it, and the arguments as JSON text.
 *
 * @param id the call id the tool message must answer with
 * @param name the function name, possibly an alias (see {@link ToolAliases})
 * @param arguments the arguments as JSON text, as the model sent them
 */
public record ModelToolCall(String id, String name, String arguments) {
  public ModelToolCall {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(arguments, "arguments");
  }
}
