package dev.toolhost.agent;

import java.net.URI;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * A model endpoint is where an agent's model answers: an OpenAI-compatible base URL, the model's
 * name, and the environment variable that holds the API key.
 *
 * <p>The key itself is never part of the endpoint (nor of any config or log line): it is read from
 * the environment when a {@link ModelClient} is made.
 *
 * @param baseUrl the base URL, such as {@code https://api.openai.com/v1}; requests go to {@code
 *     {baseUrl}/chat/completions}
 * @param model the model's name, such as {@code gpt-4o-mini}
 * @param apiKeyEnv the environment variable holding the key, such as {@code OPENAI_API_KEY}
 */
public record ModelEndpoint(URI baseUrl, String model, String apiKeyEnv) {

  /** The base URL used when none is given. */
  public static final URI DEFAULT_BASE_URL = URI.create("https://api.openai.com/v1");

  /** The key variable used when none is given. */
  public static final String DEFAULT_API_KEY_ENV = "OPENAI_API_KEY";

  public ModelEndpoint {
    Objects.requireNonNull(baseUrl, "baseUrl");
    Objects.requireNonNull(model, "model");
    Objects.requireNonNull(apiKeyEnv, "apiKeyEnv");
    if (model.isBlank()) {
      throw new IllegalArgumentException("A model endpoint needs a model name.");
    }
  }

  /** The key from the given environment, when the variable is set and not blank. */
  public Optional<String> apiKey(Map<String, String> environment) {
    return Optional.ofNullable(environment.get(apiKeyEnv)).filter(key -> !key.isBlank());
  }

  /** The URL of the chat completions endpoint. */
  public URI chatCompletions() {
    String base = baseUrl.toString();
    return URI.create((base.endsWith("/") ? base : base + "/") + "chat/completions");
  }
}
