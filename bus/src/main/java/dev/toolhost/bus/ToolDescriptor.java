package dev.toolhost.bus;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * A tool descriptor makes a tool of a tool service: its name and description for the model, the
 * service it calls, the config values sent with every request, and the arguments the model gives.
 * In JSON: {@code {"type": "tool-service", "name", "description", "service", <config values>,
 * "arguments": [{"name", "type", "description"}]}}.
 *
 * @param name the tool's name
 * @param description what the tool does, for the model
 * @param service the id of the tool service it calls
 * @param config the config values, by param name
 * @param arguments the arguments the model gives
 */
public record ToolDescriptor(
    String name,
    String description,
    String service,
    Map<String, JsonNode> config,
    List<Argument> arguments) {

  private static final Set<String> FIELDS =
      Set.of("type", "name", "description", "service", "arguments");
  private static final Set<String> SCHEMA_TYPES =
      Set.of("string", "number", "integer", "boolean", "object", "array");

  public ToolDescriptor {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(description, "description");
    Objects.requireNonNull(service, "service");
    config = Map.copyOf(config);
    arguments = List.copyOf(arguments);
  }

  /**
   * An argument the model gives.
   *
   * @param name its name
   * @param type its JSON Schema type, such as {@code string}
   * @param description what it means, for the model
   */
  public record Argument(String name, String type, String description) {}

  /**
   * Reads a descriptor from its JSON form.
   *
   * @throws IllegalArgumentException naming the tool and what is wrong
   */
  public static ToolDescriptor fromJson(JsonNode json) {
    if (json == null || !json.isObject()) {
      throw new IllegalArgumentException("a tool descriptor must be a JSON object");
    }
    String name = json.path("name").asString("");
    if (name.isBlank()) {
      throw new IllegalArgumentException("a tool descriptor has no 'name'");
    }
    String type = json.path("type").asString("tool-service");
    if (!type.equals("tool-service")) {
      throw new IllegalArgumentException(
          "tool '" + name + "' has type '" + type + "' (expected tool-service)");
    }
    String service = json.path("service").asString("");
    if (service.isBlank()) {
      throw new IllegalArgumentException("tool '" + name + "' has no 'service'");
    }
    Map<String, JsonNode> config = new LinkedHashMap<>();
    for (Map.Entry<String, JsonNode> field : json.properties()) {
      if (!FIELDS.contains(field.getKey())) {
        config.put(field.getKey(), field.getValue());
      }
    }
    List<Argument> arguments = new ArrayList<>();
    for (JsonNode argument : json.path("arguments")) {
      String argumentName = argument.path("name").asString("");
      if (argumentName.isBlank()) {
        throw new IllegalArgumentException("tool '" + name + "': an argument has no 'name'");
      }
      arguments.add(
          new Argument(
              argumentName,
              argument.path("type").asString("string"),
              argument.path("description").asString("")));
    }
    return new ToolDescriptor(
        name, json.path("description").asString(""), service, config, arguments);
  }

  /** The descriptor in its JSON form. */
  public ObjectNode toJson() {
    ObjectNode json = JsonMapper.shared().createObjectNode();
    json.put("type", "tool-service");
    json.put("name", name);
    json.put("description", description);
    json.put("service", service);
    config.forEach(json::set);
    var list = json.putArray("arguments");
    for (Argument argument : arguments) {
      list.addObject()
          .put("name", argument.name())
          .put("type", argument.type())
          .put("description", argument.description());
    }
    return json;
  }

  /** The parameters schema the model sees: an object with one property per argument. */
  public ObjectNode parameters() {
    ObjectNode schema = JsonMapper.shared().createObjectNode();
    schema.put("type", "object");
    ObjectNode properties = schema.putObject("properties");
    for (Argument argument : arguments) {
      ObjectNode property = properties.putObject(argument.name());
      if (SCHEMA_TYPES.contains(argument.type())) {
        property.put("type", argument.type());
      }
      if (!argument.description().isEmpty()) {
        property.put("description", argument.description());
      }
    }
    return schema;
  }
}
