package dev.toolhost.openrouter;

import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.MethodTools;
import dev.toolhost.core.Param;
import dev.toolhost.core.Tool;
import dev.toolhost.core.ToolException;
import dev.toolhost.core.ToolGuide;
import dev.toolhost.web.OutboundException;
import dev.toolhost.web.OutboundHttp;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.LocalDate;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * OpenRouter tools read an OpenRouter account, and change nothing: {@code get_credits}, {@code
 * get_api_key_info}, {@code list_models}, {@code list_api_keys}, {@code get_api_key(key_hash)},
 * {@code get_generation(generation_id)} and {@code get_activity(date?)}, source {@code
 * builtin:openrouter}. Each answers OpenRouter's JSON as it came (its {@code {"data": ...}}); a
 * large one, such as the model list, is chunked into working memory by the dispatch path as any
 * large result is.
 *
 * <p>An answer other than success is an error that names the status and OpenRouter's own message:
 * 401 and 403 say the key is missing, refused or not a management key. Arguments that go into the
 * URL are checked to be plain identifiers or real days first. The key is sent as a bearer token and
 * never written into any answer: where a server echoes it back, in an error or a success, it is
 * replaced with {@code [REDACTED:<variable>]} before the text is cut or returned.
 */
public final class OpenRouterTools {

  /** The source of the OpenRouter tools. */
  public static final String SOURCE = "builtin:openrouter";

  /** The guide to the OpenRouter tools. */
  public static final ToolGuide GUIDE =
      ToolGuide.fromResource(
          "openrouter",
          "How to read the OpenRouter account: credits, keys, models, generations, activity.",
          OpenRouterTools.class,
          "guides/openrouter.md");

  private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z0-9_-]{1,200}");
  private static final Pattern DATE = Pattern.compile("[0-9]{4}-[0-9]{2}-[0-9]{2}");

  private final OpenRouterConfig config;
  private final OutboundHttp http;
  private final Optional<String> key;

  /**
   * The tools over an account.
   *
   * @param config where the API is
   * @param http the client, with the API's host opened
   * @param key the key, when the environment holds it
   */
  public OpenRouterTools(OpenRouterConfig config, OutboundHttp http, Optional<String> key) {
    this.config = Objects.requireNonNull(config, "config");
    this.http = Objects.requireNonNull(http, "http");
    this.key = Objects.requireNonNull(key, "key");
  }

  /** The seven tools, to register in a registry. */
  public List<ExecutableTool> tools() {
    return MethodTools.of(this, SOURCE);
  }

  @Tool(
      name = "get_credits",
      description =
          "The OpenRouter account's credits: total_credits bought and total_usage spent, in USD.",
      readOnly = true,
      destructive = false,
      idempotent = true,
      openWorld = true)
  public String getCredits() throws InterruptedException {
    return get("/credits");
  }

  @Tool(
      name = "get_api_key_info",
      description =
          "The key in use: its label, limit, limit remaining and reset, usage (all time and today)"
              + " and rate limit.",
      readOnly = true,
      destructive = false,
      idempotent = true,
      openWorld = true)
  public String getApiKeyInfo() throws InterruptedException {
    return get("/key");
  }

  @Tool(
      name = "list_models",
      description =
          "Every model OpenRouter offers: id, name, context length, pricing (USD per token, as"
              + " strings), modalities and supported parameters. Large: it arrives in chunks.",
      readOnly = true,
      destructive = false,
      idempotent = true,
      openWorld = true)
  public String listModels() throws InterruptedException {
    return get("/models");
  }

  @Tool(
      name = "list_api_keys",
      description =
          "The account's API keys, with their hashes, labels, limits and usage. Needs a"
              + " management key.",
      readOnly = true,
      destructive = false,
      idempotent = true,
      openWorld = true)
  public String listApiKeys() throws InterruptedException {
    return get("/keys");
  }

  @Tool(
      name = "get_api_key",
      description =
          "One API key's details, by its hash (from list_api_keys). Needs a management key.",
      readOnly = true,
      destructive = false,
      idempotent = true,
      openWorld = true)
  public String getApiKey(
      @Param(name = "key_hash", description = "The key's hash, as list_api_keys gives it.")
          String keyHash)
      throws InterruptedException {
    return get("/keys/" + identifier(keyHash, "key_hash"));
  }

  @Tool(
      name = "get_generation",
      description =
          "One completion's details: model, provider, tokens in and out, cost, latency and finish"
              + " reason, by its generation id (gen-...).",
      readOnly = true,
      destructive = false,
      idempotent = true,
      openWorld = true)
  public String getGeneration(
      @Param(
              name = "generation_id",
              description = "The generation's id, such as gen-3bhGkxlo4XFrqiabUM7NDtwDzWwG.")
          String generationId)
      throws InterruptedException {
    return get(
        "/generation?id="
            + URLEncoder.encode(identifier(generationId, "generation_id"), StandardCharsets.UTF_8));
  }

  @Tool(
      name = "get_activity",
      description =
          "Usage by day, model and provider over the last 30 days (requests, tokens, cost), or for"
              + " one day. Needs a management key.",
      readOnly = true,
      destructive = false,
      idempotent = true,
      openWorld = true)
  public String getActivity(
      @Param(description = "One day, as YYYY-MM-DD, within the last 30 days.")
          Optional<String> date)
      throws InterruptedException {
    if (date.isPresent() && !isDay(date.get())) {
      throw ToolException.invalidArguments(
          "date is '" + date.get() + "'; it must be a day written YYYY-MM-DD, such as 2025-08-24.");
    }
    return get("/activity" + date.map(d -> "?date=" + d).orElse(""));
  }

  // A day as YYYY-MM-DD that exists: the pattern keeps out what ISO dates also allow (a sign, more
  // digits), the strict parse a month 13 or a February 30th.
  private static boolean isDay(String text) {
    if (!DATE.matcher(text).matches()) {
      return false;
    }
    try {
      LocalDate.parse(text, DateTimeFormatter.ISO_LOCAL_DATE);
      return true;
    } catch (DateTimeParseException e) {
      return false;
    }
  }

  private static String identifier(String value, String name) {
    if (!IDENTIFIER.matcher(value).matches()) {
      throw ToolException.invalidArguments(
          name
              + " must be letters, digits, '-' and '_' only (1 to 200 of them), as OpenRouter"
              + " writes them.");
    }
    return value;
  }

  private String withoutKey(String text, String secret) {
    return text.contains(secret)
        ? text.replace(secret, "[REDACTED:" + config.apiKeyEnv() + "]")
        : text;
  }

  private String get(String path) throws InterruptedException {
    if (key.isEmpty()) {
      throw new ToolException(
          ErrorCode.UNAVAILABLE,
          "The OpenRouter tools have no key: the environment variable "
              + config.apiKeyEnv()
              + " is not set. Set it to an OpenRouter API key (a management key for the key and"
              + " activity tools) and restart the host.");
    }
    String base = config.baseUrl().toString();
    URI uri = URI.create((base.endsWith("/") ? base.substring(0, base.length() - 1) : base) + path);
    Map<String, String> headers = new LinkedHashMap<>();
    headers.put("Accept", "application/json");
    headers.put("Authorization", "Bearer " + key.get());
    config.referer().ifPresent(referer -> headers.put("HTTP-Referer", referer));
    OutboundHttp.Response response;
    try {
      response = http.get(uri, headers);
    } catch (OutboundException e) {
      throw new ToolException(
          e.reason() == OutboundException.Reason.TIMEOUT
              ? ErrorCode.TIMEOUT
              : ErrorCode.UNAVAILABLE,
          "OpenRouter could not be reached: " + e.getMessage() + ".");
    }
    // A server (or a proxy before it) may echo the request's headers back: the key comes out of
    // the text here, before it is cut, so that no piece of it survives the cut either. The host's
    // secret scan would catch the whole key, not a piece, and a host may run without it.
    String text = withoutKey(response.text(), key.get());
    if (response.ok()) {
      return text;
    }
    String detail = text.strip();
    if (detail.length() > 500) {
      detail = detail.substring(0, 500) + "…";
    }
    String hint =
        switch (response.status()) {
          case 401 -> " The key in " + config.apiKeyEnv() + " is missing, invalid or revoked.";
          case 403 ->
              " The key in "
                  + config.apiKeyEnv()
                  + " may not do this: the key and activity tools need a management key.";
          case 404 -> " Nothing exists at that id.";
          case 429 -> " Rate limited: wait a moment before calling again.";
          default -> "";
        };
    throw new ToolException(
        response.status() == 404 || response.status() == 400
            ? ErrorCode.INVALID_ARGUMENTS
            : ErrorCode.UNAVAILABLE,
        "OpenRouter API error "
            + response.status()
            + " for '"
            + path
            + "': "
            + detail
            + "."
            + hint);
  }
}
