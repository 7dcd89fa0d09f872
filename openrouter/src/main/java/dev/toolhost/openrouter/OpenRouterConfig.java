package dev.toolhost.openrouter;

import dev.toolhost.core.spi.ConfigProblems;
import dev.toolhost.core.spi.ConfigSections;
import dev.toolhost.core.spi.EnvironmentNames;
import dev.toolhost.core.spi.SectionReading;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.Objects;
import java.util.Optional;
import tools.jackson.databind.JsonNode;

/**
 * An OpenRouter config is the {@code openrouter:} section of a host config: where OpenRouter's API
 * is, which environment variable holds the key, and the {@code HTTP-Referer} OpenRouter shows the
 * calls under.
 *
 * <pre>{@code
 * openrouter:
 *   api_key_env: OPENROUTER_API_KEY       # the default; a management key also lists keys
 *   base_url: https://openrouter.ai/api/v1
 *   referer: https://example.com/my-agent # optional
 * }</pre>
 *
 * @param baseUrl the API's base URL
 * @param apiKeyEnv the environment variable that holds the key
 * @param referer the HTTP-Referer header sent, if any
 */
public record OpenRouterConfig(URI baseUrl, String apiKeyEnv, Optional<String> referer) {

  /** OpenRouter's own API. */
  public static final URI BASE_URL = URI.create("https://openrouter.ai/api/v1");

  /** The variable that holds the key by default. */
  public static final String API_KEY_ENV = "OPENROUTER_API_KEY";

  public OpenRouterConfig {
    Objects.requireNonNull(baseUrl, "baseUrl");
    Objects.requireNonNull(apiKeyEnv, "apiKeyEnv");
    Objects.requireNonNull(referer, "referer");
  }

  /** OpenRouter's API, the key in OPENROUTER_API_KEY, no referer. */
  public static OpenRouterConfig defaults() {
    return new OpenRouterConfig(BASE_URL, API_KEY_ENV, Optional.empty());
  }

  /**
   * Reads a section its schema accepts, adding its problems to the reading's; the result is only
   * meaningful when none was added.
   */
  public static OpenRouterConfig read(JsonNode section, SectionReading reading) {
    ConfigProblems problems = reading.problems();
    Raw raw = ConfigSections.bind(OpenRouterExtension.NAME, section, Raw.class);
    URI base = BASE_URL;
    if (raw.baseUrl() != null) {
      base = null;
      try {
        URI given = new URI(raw.baseUrl().strip());
        if (given.getHost() != null
            && ("https".equalsIgnoreCase(given.getScheme())
                || "http".equalsIgnoreCase(given.getScheme()))) {
          base = given;
        }
      } catch (URISyntaxException e) {
        // Reported below.
      }
      if (base == null) {
        problems.atValue(
            "/openrouter/base_url",
            "'openrouter.base_url' is '"
                + raw.baseUrl()
                + "' (expected an http or https URL, such as "
                + BASE_URL
                + ")");
        base = BASE_URL;
      }
    }
    String keyEnv = raw.apiKeyEnv() == null ? API_KEY_ENV : raw.apiKeyEnv();
    EnvironmentNames.read(
        keyEnv, "/openrouter/api_key_env", Optional.of(API_KEY_ENV), "key", problems);
    return new OpenRouterConfig(
        base, keyEnv, Optional.ofNullable(raw.referer()).filter(r -> !r.isBlank()));
  }

  // ---- the section's raw shape: every key optional, so every field may be null ----

  record Raw(String apiKeyEnv, String baseUrl, String referer) {}
}
