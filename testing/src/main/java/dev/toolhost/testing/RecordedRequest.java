package dev.toolhost.testing;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A recorded request is one HTTP request the {@link ScriptedModelServer} received, as it arrived.
 *
 * @param method the HTTP method, such as {@code POST}
 * @param path the request path, such as {@code /v1/chat/completions}
 * @param headers the headers, names in lower case
 * @param body the body as text
 */
public record RecordedRequest(
    String method, String path, Map<String, List<String>> headers, String body) {

  public RecordedRequest {
    Objects.requireNonNull(method, "method");
    Objects.requireNonNull(path, "path");
    headers = Map.copyOf(headers);
    Objects.requireNonNull(body, "body");
  }

  /** The first value of the named header (any case), if sent. */
  public Optional<String> header(String name) {
    List<String> values = headers.get(name.toLowerCase(java.util.Locale.ROOT));
    return values == null || values.isEmpty() ? Optional.empty() : Optional.of(values.getFirst());
  }

  /** The body parsed as JSON. */
  public JsonNode json() {
    return JsonMapper.shared().readTree(body);
  }

  /** Whether the body asks for a streamed answer ({@code "stream": true}). */
  public boolean streaming() {
    JsonNode stream = json().get("stream");
    return stream != null && stream.asBoolean();
  }

  /** The role of the last message in the body, such as {@code user} or {@code tool}. */
  public String lastRole() {
    JsonNode messages = json().path("messages");
    return messages.isEmpty() ? "" : messages.get(messages.size() - 1).path("role").asString();
  }
}
