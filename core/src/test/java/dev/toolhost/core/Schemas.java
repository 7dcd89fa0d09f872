package dev.toolhost.core;

import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/** Parameters schemas for tests. */
final class Schemas {

  private Schemas() {}

  static ObjectNode parse(String json) {
    return (ObjectNode) JsonMapper.shared().readTree(json);
  }

  /** An object schema with no parameters. */
  static ObjectNode empty() {
    return parse("{\"type\": \"object\", \"properties\": {}}");
  }

  /** {a: integer, b: integer}, both required, nothing else. */
  static ObjectNode twoIntegers() {
    return parse(
        """
        {"type": "object",
         "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
         "required": ["a", "b"],
         "additionalProperties": false}
        """);
  }

  static ToolSpec spec(String name, String source) {
    return new ToolSpec(name, "The " + name + " tool.", empty(), source);
  }
}
