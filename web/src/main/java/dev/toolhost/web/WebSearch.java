package dev.toolhost.web;

import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ToolException;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.jsoup.Jsoup;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Web search asks a search provider for pages matching a query: the Brave Search API ({@code GET
 * /res/v1/web/search?q=&count=} with the key in {@code X-Subscription-Token}) or a SearXNG
 * instance's JSON API ({@code GET /search?q=&format=json}, which takes no count, so results are cut
 * here).
 *
 * <p>Each way a search can fail is its own error, never an empty answer: no key, a key the provider
 * refuses (Brave answers 401 or 422), a rate limit or spent quota (429), an answer without a
 * results section, a search that found nothing, and any other status with the provider's own words.
 * Snippets come back as text: Brave marks matches with {@code <strong>} and both escape entities.
 */
public final class WebSearch {

  /** One result of a search: a page's title, its URL and a snippet of it, all plain text. */
  public record Hit(String title, String url, String snippet) {}

  private static final JsonMapper JSON = JsonMapper.builder().build();

  private final WebConfig.Search config;
  private final OutboundHttp http;
  private final Optional<String> key;

  /**
   * A search through the given provider.
   *
   * @param config the provider
   * @param http the outbound client (the provider's host opened in its policy)
   * @param key Brave's key, when the environment holds it
   */
  public WebSearch(WebConfig.Search config, OutboundHttp http, Optional<String> key) {
    this.config = Objects.requireNonNull(config, "config");
    this.http = Objects.requireNonNull(http, "http");
    this.key = Objects.requireNonNull(key, "key").filter(k -> !k.isBlank());
  }

  /**
   * Searches.
   *
   * @param query what to search for
   * @param count how many results, 1 to 20
   * @throws ToolException when the search fails, saying how
   */
  public List<Hit> search(String query, int count) throws InterruptedException {
    return switch (config.provider()) {
      case BRAVE -> brave(query, count);
      case SEARXNG -> searxng(query, count);
    };
  }

  private List<Hit> brave(String query, int count) throws InterruptedException {
    if (key.isEmpty()) {
      throw new ToolException(
          ErrorCode.UNAVAILABLE,
          "web_search has no Brave Search API key: the environment variable "
              + config.apiKeyEnv()
              + " is not set. Set it to a key from https://api-dashboard.search.brave.com and"
              + " restart the host.");
    }
    URI uri = endpoint("/res/v1/web/search?q=" + encode(query) + "&count=" + Math.min(count, 20));
    Map<String, String> headers = new LinkedHashMap<>();
    headers.put("Accept", "application/json");
    headers.put("X-Subscription-Token", key.get());
    OutboundHttp.Response response = fetch(uri, headers);
    JsonNode body = json(response, "Brave Search");
    if (response.status() == 401 || response.status() == 403 || response.status() == 422) {
      throw new ToolException(
          ErrorCode.UNAVAILABLE,
          "Brave Search refused the API key in "
              + config.apiKeyEnv()
              + " (HTTP "
              + response.status()
              + braveError(body)
              + "). Check the key at https://api-dashboard.search.brave.com.");
    }
    if (response.status() == 429) {
      throw new ToolException(
          ErrorCode.UNAVAILABLE,
          "Brave Search's rate limit or monthly quota is spent (HTTP 429"
              + braveError(body)
              + "). Wait a moment before searching again, or raise the plan's limits.");
    }
    if (!response.ok()) {
      throw new ToolException(
          ErrorCode.UNAVAILABLE,
          "Brave Search failed (HTTP " + response.status() + braveError(body) + ").");
    }
    JsonNode results = body.path("web").path("results");
    if (!results.isArray()) {
      throw new ToolException(
          ErrorCode.EXECUTION_FAILED,
          "Brave Search answered without a web results section for '"
              + query
              + "' (the answer holds: "
              + String.join(", ", body.propertyNames())
              + ").");
    }
    List<Hit> hits = new ArrayList<>();
    for (JsonNode result : results) {
      hits.add(hit(result.path("title"), result.path("url"), result.path("description")));
    }
    return found(hits, query, count, "Brave Search");
  }

  private static String braveError(JsonNode body) {
    JsonNode error = body.path("error");
    if (!error.isObject()) {
      return "";
    }
    String code = error.path("code").asString("");
    String detail = error.path("detail").asString("");
    return (code.isEmpty() ? "" : " " + code) + (detail.isEmpty() ? "" : ": " + detail);
  }

  private List<Hit> searxng(String query, int count) throws InterruptedException {
    URI uri = endpoint("/search?q=" + encode(query) + "&format=json");
    OutboundHttp.Response response = fetch(uri, Map.of("Accept", "application/json"));
    if (response.status() == 403) {
      throw new ToolException(
          ErrorCode.UNAVAILABLE,
          "SearXNG at "
              + config.url()
              + " refused a JSON search (HTTP 403): add 'json' to search.formats in the"
              + " instance's settings.yml.");
    }
    if (response.status() == 429) {
      throw new ToolException(
          ErrorCode.UNAVAILABLE,
          "SearXNG at "
              + config.url()
              + " limited the rate of searches (HTTP 429). Wait a moment before searching again.");
    }
    if (!response.ok()) {
      throw new ToolException(
          ErrorCode.UNAVAILABLE,
          "SearXNG at " + config.url() + " failed (HTTP " + response.status() + ").");
    }
    JsonNode body = json(response, "SearXNG");
    JsonNode results = body.path("results");
    if (!results.isArray()) {
      throw new ToolException(
          ErrorCode.EXECUTION_FAILED,
          "SearXNG answered without a results list for '" + query + "'.");
    }
    List<Hit> hits = new ArrayList<>();
    for (JsonNode result : results) {
      hits.add(hit(result.path("title"), result.path("url"), result.path("content")));
    }
    if (hits.isEmpty() && body.path("unresponsive_engines").size() > 0) {
      throw new ToolException(
          ErrorCode.UNAVAILABLE,
          "SearXNG found nothing for '"
              + query
              + "' because its engines did not answer: "
              + body.path("unresponsive_engines")
              + ".");
    }
    return found(hits, query, count, "SearXNG");
  }

  private static List<Hit> found(List<Hit> hits, String query, int count, String provider) {
    List<Hit> usable = hits.stream().filter(h -> !h.url().isEmpty()).limit(count).toList();
    if (usable.isEmpty()) {
      throw new ToolException(
          ErrorCode.EXECUTION_FAILED,
          provider
              + " found no web pages for '"
              + query
              + "'. Try fewer or other words, or check the spelling.");
    }
    return usable;
  }

  private static Hit hit(JsonNode title, JsonNode url, JsonNode snippet) {
    return new Hit(text(title.asString("")), url.asString("").strip(), text(snippet.asString("")));
  }

  /** HTML in a provider's field as plain text: tags removed, entities decoded, spaces collapsed. */
  static String text(String html) {
    return Jsoup.parse(html).text().strip();
  }

  private URI endpoint(String pathAndQuery) {
    String base = config.url().toString();
    return URI.create(
        (base.endsWith("/") ? base.substring(0, base.length() - 1) : base) + pathAndQuery);
  }

  private static String encode(String text) {
    return URLEncoder.encode(text, StandardCharsets.UTF_8);
  }

  private OutboundHttp.Response fetch(URI uri, Map<String, String> headers)
      throws InterruptedException {
    try {
      return http.get(uri, headers);
    } catch (OutboundException e) {
      throw new ToolException(
          e.reason() == OutboundException.Reason.TIMEOUT
              ? ErrorCode.TIMEOUT
              : ErrorCode.UNAVAILABLE,
          "The search provider could not be reached: " + e.getMessage() + ".");
    }
  }

  private static JsonNode json(OutboundHttp.Response response, String provider) {
    if (response.body().length == 0) {
      return JSON.createObjectNode();
    }
    try {
      return JSON.readTree(response.body());
    } catch (JacksonException e) {
      if (!response.ok()) {
        return JSON.createObjectNode();
      }
      throw new ToolException(
          ErrorCode.EXECUTION_FAILED,
          provider
              + " answered HTTP "
              + response.status()
              + " with a body that is not JSON ("
              + response.mediaType().orElse("no content type")
              + ").");
    }
  }

  /**
   * The seed's list: {@code 1. [Title](url)} and the snippet indented under it, one result after
   * another.
   */
  public static String format(List<Hit> hits) {
    StringBuilder out = new StringBuilder();
    for (int i = 0; i < hits.size(); i++) {
      Hit hit = hits.get(i);
      String title = hit.title().isEmpty() ? hit.url() : hit.title();
      out.append(i + 1)
          .append(". [")
          .append(title.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]"))
          .append("](")
          .append(hit.url().replace(" ", "%20").replace("(", "%28").replace(")", "%29"))
          .append(")\n");
      if (!hit.snippet().isEmpty()) {
        out.append("   ").append(hit.snippet()).append('\n');
      }
    }
    return out.toString().stripTrailing();
  }
}
