package dev.toolhost.core;

import com.networknt.schema.Error;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaLocation;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SchemaRegistryConfig;
import com.networknt.schema.SpecificationVersion;
import com.networknt.schema.path.PathType;
import java.util.List;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * A parameters schema is a tool's JSON Schema, checked against the JSON Schema meta-schema and
 * compiled once, that validates arguments objects.
 *
 * <p>Thread-safe: one compiled schema validates any number of calls at once. Schemas without a
 * {@code $schema} keyword are read as draft 2020-12, the dialect MCP assumes; the meta-schemas come
 * bundled with the validator, so compiling never touches the network.
 */
public final class ParametersSchema {

  // Violations name their place as a JSON path ($.items[0].name), which models read best. A
  // schema from an MCP server or a remote worker must never make the host fetch a URL.
  private static final SchemaRegistry REGISTRY =
      SchemaRegistry.withDefaultDialect(
          SpecificationVersion.DRAFT_2020_12,
          builder ->
              builder
                  .schemaLoader(loader -> loader.fetchRemoteResources(false))
                  .schemaRegistryConfig(
                      SchemaRegistryConfig.builder().pathType(PathType.JSON_PATH).build()));
  private static final Schema META_SCHEMA =
      REGISTRY.getSchema(SchemaLocation.of("https://json-schema.org/draft/2020-12/schema"));

  private final Schema schema;

  private ParametersSchema(Schema schema) {
    this.schema = schema;
  }

  /**
   * The parameters schema of a tool that takes one string, required, and nothing else: {@code
   * {"type": "object", "properties": {name: {"type": "string", "description": ...}}, "required":
   * [name], "additionalProperties": false}}.
   */
  public static ObjectNode oneString(String name, String description) {
    ObjectNode schema = JsonNodeFactory.instance.objectNode().put("type", "object");
    schema
        .putObject("properties")
        .putObject(name)
        .put("type", "string")
        .put("description", description);
    schema.putArray("required").add(name);
    schema.put("additionalProperties", false);
    return schema;
  }

  /**
   * Checks and compiles the parameters schema of the given tool.
   *
   * @throws IllegalArgumentException naming the tool and every way its schema is not a valid JSON
   *     Schema object
   */
  public static ParametersSchema compile(String toolName, ObjectNode parameters) {
    JsonNode type = parameters.get("type");
    if (type == null || !type.isString() || !type.asString().equals("object")) {
      throw new IllegalArgumentException(
          "Tool '"
              + toolName
              + "' has an invalid parameters schema: its \"type\" must be \"object\".");
    }
    List<Error> errors = META_SCHEMA.validate(parameters);
    if (!errors.isEmpty()) {
      throw new IllegalArgumentException(
          "Tool '"
              + toolName
              + "' has an invalid parameters schema: "
              + String.join("; ", errors.stream().map(ParametersSchema::describe).toList()));
    }
    try {
      Schema schema = REGISTRY.getSchema(parameters);
      schema.initializeValidators();
      return new ParametersSchema(schema);
    } catch (RuntimeException e) {
      throw new IllegalArgumentException(
          "Tool '" + toolName + "' has an invalid parameters schema: " + e.getMessage(), e);
    }
  }

  /**
   * Returns every way the arguments break this schema, each as {@code "$.path: message"}; an empty
   * list when they are valid.
   */
  public List<String> violations(JsonNode arguments) {
    List<Error> errors = schema.validate(arguments);
    if (errors.isEmpty()) {
      return List.of();
    }
    return errors.stream().map(ParametersSchema::describe).toList();
  }

  private static String describe(Error error) {
    String path = error.getInstanceLocation().toString();
    String message = error.getMessage();
    // The validator's message already opens with the path when it has one.
    return message.startsWith(path) ? message : path + ": " + message;
  }
}
