package dev.toolhost.server;

import com.networknt.schema.Error;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SchemaRegistryConfig;
import com.networknt.schema.SpecificationVersion;
import com.networknt.schema.path.PathType;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Extension sections are the config file's sections that host extensions own: each is kept as a
 * tree for its extension and checked against the JSON Schema the extension gives, every violation
 * placed at its line and column with the other problems of the file.
 *
 * <p>Checked with the networknt validator core already uses for tool parameters, reading schemas
 * without {@code $schema} as draft 2020-12 and never fetching a remote schema.
 */
final class ExtensionSections {

  private static final SchemaRegistry REGISTRY =
      SchemaRegistry.withDefaultDialect(
          SpecificationVersion.DRAFT_2020_12,
          builder ->
              builder
                  .schemaLoader(loader -> loader.fetchRemoteResources(false))
                  .schemaRegistryConfig(
                      SchemaRegistryConfig.builder().pathType(PathType.JSON_POINTER).build()));

  private ExtensionSections() {}

  /** Adds a problem for every way the section breaks its extension's schema. */
  static void check(String name, JsonNode schema, JsonNode section, ConfigProblems problems) {
    Schema compiled = REGISTRY.getSchema(schema);
    for (Error error : compiled.validate(section)) {
      String at = error.getInstanceLocation().toString();
      String pointer = "/" + name + (at.equals("/") ? "" : at);
      String where = name + at.replace('/', '.');
      if ("additionalProperties".equals(error.getKeyword()) && error.getProperty() != null) {
        problems.atKey(
            pointer + "/" + error.getProperty(),
            "unknown key '"
                + error.getProperty()
                + "' under '"
                + where
                + "'"
                + expected(schema, at, error.getProperty()));
        continue;
      }
      String message = error.getMessage();
      // The validator's message opens with the place; ours names it as a dotted key.
      if (message.startsWith(at + ": ")) {
        message = message.substring(at.length() + 2);
      }
      problems.atValue(pointer, "'" + where + "': " + message);
    }
  }

  /** What to say after an unknown key, from the schema's properties at the pointer, if any. */
  private static String expected(JsonNode schema, String at, String given) {
    JsonNode node = schema;
    for (String segment : at.split("/")) {
      if (!segment.isEmpty()) {
        node = node.path("properties").path(segment);
      }
    }
    List<String> keys = new ArrayList<>();
    for (String key : node.path("properties").propertyNames()) {
      keys.add(key);
    }
    return keys.isEmpty() ? "" : ConfigProblems.expectedKeys(given, keys);
  }

  /** The sections of the given tree that the named schemas own, each removed from the tree. */
  static Map<String, JsonNode> take(ObjectNode tree, Map<String, JsonNode> schemas) {
    Map<String, JsonNode> sections = new LinkedHashMap<>();
    for (String name : schemas.keySet()) {
      JsonNode section = tree.remove(name);
      if (section != null) {
        sections.put(name, section);
      }
    }
    return sections;
  }
}
