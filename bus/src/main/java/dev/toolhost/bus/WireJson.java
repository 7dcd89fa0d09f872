package dev.toolhost.bus;

import java.util.Optional;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Wire JSON is how the bus's message types read a body: text that is not JSON, or not the object a
 * message must be, is an {@link IllegalArgumentException} whose message says why, which the worker
 * logs when it dead-letters the message.
 */
final class WireJson {

  private static final JsonMapper JSON = JsonMapper.shared();

  private WireJson() {}

  /**
   * Reads JSON text.
   *
   * @throws IllegalArgumentException when it is not JSON
   */
  static JsonNode read(String text) {
    try {
      return JSON.readTree(text);
    } catch (JacksonException e) {
      throw notJson(e);
    }
  }

  /** The failure to report for text the parser refused. */
  static IllegalArgumentException notJson(JacksonException e) {
    return new IllegalArgumentException("not valid JSON (" + e.getOriginalMessage() + ")");
  }

  /** The failure to report for JSON that is not the object a message must be. */
  static IllegalArgumentException notAnObject() {
    return new IllegalArgumentException("not a JSON object");
  }

  /**
   * Reads JSON text that must be one object.
   *
   * @throws IllegalArgumentException when it is not JSON, or not an object
   */
  static JsonNode readObject(String text) {
    JsonNode body = read(text);
    if (body == null || !body.isObject()) {
      throw notAnObject();
    }
    return body;
  }

  /** The string value of a field, when the field is there and a string. */
  static Optional<String> text(JsonNode body, String field) {
    JsonNode value = body.get(field);
    return value != null && value.isString() ? Optional.of(value.asString()) : Optional.empty();
  }
}
