package dev.toolhost.agent;

import java.util.ArrayList;
import java.util.List;
import tools.jackson.databind.JsonNode;

/**
 * The offered tools of a chat completion request are the function names its {@code tools} lists, in
 * order: what the model was given to call. None when the request lists none.
 */
final class OfferedTools {

  private OfferedTools() {}

  /** The names of the functions the request's body offers. */
  static List<String> names(JsonNode request) {
    List<String> names = new ArrayList<>();
    request.path("tools").forEach(tool -> names.add(tool.path("function").path("name").asString()));
    return names;
  }
}
