package dev.toolhost.bus;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import tools.jackson.databind.JsonNode;

/**
 * A tool service descriptor says how to call a tool service: its id, the queue requests go to, and
 * the config params that tools using it must (or may) give. In JSON it is {@code {"id", "topic",
 * "config-params": [{"name", "required"}]}}, or with {@code request-queue} (and {@code
 * response-queue}) in place of {@code topic}.
 *
 * @param id the service's id, which tool descriptors name
 * @param requestQueue the queue requests are sent to
 * @param responseQueue the queue the service answers on when a request has no reply-to; callers
 *     here always set reply-to, so it is informational
 * @param configParams what tools must or may configure
 */
public record ToolServiceDescriptor(
    String id,
    String requestQueue,
    Optional<String> responseQueue,
    List<ConfigParam> configParams) {

  public ToolServiceDescriptor {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(requestQueue, "requestQueue");
    Objects.requireNonNull(responseQueue, "responseQueue");
    configParams = List.copyOf(configParams);
  }

  /**
   * A config param of a service.
   *
   * @param name the key tool descriptors set it under
   * @param required whether every tool must set it
   */
  public record ConfigParam(String name, boolean required) {}

  /**
   * Reads a descriptor from its JSON form.
   *
   * @throws IllegalArgumentException naming what is missing or wrong
   */
  public static ToolServiceDescriptor fromJson(JsonNode json) {
    if (json == null || !json.isObject()) {
      throw new IllegalArgumentException("a tool service descriptor must be a JSON object");
    }
    String id = json.path("id").asString("");
    if (id.isBlank()) {
      throw new IllegalArgumentException("a tool service descriptor has no 'id'");
    }
    String queue = json.path("topic").asString(json.path("request-queue").asString(""));
    if (queue.isBlank()) {
      throw new IllegalArgumentException(
          "tool service '" + id + "' has no 'topic' (or 'request-queue')");
    }
    String response = json.path("response-queue").asString("");
    List<ConfigParam> params = new ArrayList<>();
    JsonNode list = json.path("config-params");
    if (!list.isMissingNode() && !list.isNull() && !list.isArray()) {
      throw new IllegalArgumentException(
          "tool service '" + id + "': 'config-params' must be a list of {name, required}");
    }
    for (JsonNode param : list) {
      String name = param.isString() ? param.asString() : param.path("name").asString("");
      if (name.isBlank()) {
        throw new IllegalArgumentException(
            "tool service '" + id + "': a config param has no 'name'");
      }
      params.add(new ConfigParam(name, param.path("required").asBoolean(false)));
    }
    return new ToolServiceDescriptor(
        id, queue, response.isBlank() ? Optional.empty() : Optional.of(response), params);
  }
}
