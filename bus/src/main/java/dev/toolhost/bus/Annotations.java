package dev.toolhost.bus;

import dev.toolhost.core.ToolAnnotations;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Annotations on the wire are a tool's behaviour hints in an announcement: {@code "annotations":
 * {"read_only", "destructive", "idempotent", "open_world"}}, each a boolean. A missing key takes
 * the MCP default of {@link ToolAnnotations#UNSPECIFIED}.
 */
final class Annotations {

  private Annotations() {}

  /** Writes the hints of a tool under {@code annotations} in its announced JSON. */
  static void write(ToolAnnotations annotations, ObjectNode tool) {
    tool.putObject("annotations")
        .put("read_only", annotations.readOnly())
        .put("destructive", annotations.destructive())
        .put("idempotent", annotations.idempotent())
        .put("open_world", annotations.openWorld());
  }

  /** Reads the hints under {@code annotations} of an announced tool; defaults where absent. */
  static ToolAnnotations read(JsonNode tool) {
    JsonNode hints = tool.path("annotations");
    ToolAnnotations defaults = ToolAnnotations.UNSPECIFIED;
    return new ToolAnnotations(
        hints.path("read_only").asBoolean(defaults.readOnly()),
        hints.path("destructive").asBoolean(defaults.destructive()),
        hints.path("idempotent").asBoolean(defaults.idempotent()),
        hints.path("open_world").asBoolean(defaults.openWorld()));
  }
}
