package dev.toolhost.core;

import java.util.Objects;
import java.util.regex.Pattern;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * A tool spec is what a model is told about a tool: its name, description, parameters schema, where
 * it comes from, and its behaviour hints.
 *
 * <p>Names follow the MCP rule, 1 to 128 characters of {@code [A-Za-z0-9_.-]}; the constructor
 * refuses any other name with a message that names it. The parameters are a JSON Schema object in
 * OpenAI function-calling form ({@code {"type": "object", "properties": ...}}); whether it is a
 * valid JSON Schema is checked when the tool is registered. The source says what runs the tool,
 * such as {@code builtin:guides}, {@code mcp:weather} or {@code remote:billing}; profiles allow and
 * deny by it.
 *
 * @param name the unique name the model calls the tool by
 * @param description what the tool does, for the model
 * @param parameters the JSON Schema of the arguments object
 * @param source what runs the tool
 * @param annotations behaviour hints
 */
public record ToolSpec(
    String name,
    String description,
    ObjectNode parameters,
    String source,
    ToolAnnotations annotations) {

  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_.-]{1,128}");

  public ToolSpec {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(description, "description");
    Objects.requireNonNull(parameters, "parameters");
    Objects.requireNonNull(source, "source");
    Objects.requireNonNull(annotations, "annotations");
    if (!NAME.matcher(name).matches()) {
      throw new IllegalArgumentException(
          "Tool name '"
              + name
              + "' is invalid: a tool name is 1 to 128 characters of letters, digits, '_', '-'"
              + " and '.'.");
    }
    if (source.isBlank()) {
      throw new IllegalArgumentException("Tool '" + name + "' has a blank source.");
    }
    parameters = parameters.deepCopy();
  }

  /** A spec with the MCP default annotations. */
  public ToolSpec(String name, String description, ObjectNode parameters, String source) {
    this(name, description, parameters, source, ToolAnnotations.UNSPECIFIED);
  }

  /** Returns the parameters schema; a copy, so the spec stays immutable. */
  @Override
  public ObjectNode parameters() {
    return parameters.deepCopy();
  }

  /**
   * Returns this spec in OpenAI function-calling form: {@code {"type": "function", "function":
   * {"name", "description", "parameters"}}}.
   */
  public ObjectNode toOpenAiFunction() {
    ObjectNode tool = JsonNodeFactory.instance.objectNode();
    tool.put("type", "function");
    ObjectNode function = tool.putObject("function");
    function.put("name", name);
    function.put("description", description);
    function.set("parameters", parameters.deepCopy());
    return tool;
  }

  /** Whether the given text is a valid tool name. */
  public static boolean isValidName(String name) {
    return NAME.matcher(name).matches();
  }
}
