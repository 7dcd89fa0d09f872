package dev.toolhost.openrouter;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import dev.toolhost.core.ToolSpec;
import dev.toolhost.testing.FakeSite;
import dev.toolhost.web.OutboundHttp;
import dev.toolhost.web.OutboundPolicy;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;
import tools.jackson.databind.json.JsonMapper;

/**
 * The seven OpenRouter tools against a local server that answers in OpenRouter's own formats (its
 * {@code {"data": ...}} answers and its error object), called through a real dispatcher as a host
 * calls them: what each answers, what each sends, each error, and the key kept out of all of it.
 */
@Timeout(60)
class OpenRouterToolsTest {

  /** An OpenRouter key's shape, made up: {@code sk-or-v1-} and 64 hex digits. */
  static final String KEY =
      "sk-or-v1-" + "3f9a1c7e5b2d4f6a8c0e1b3d5f7a9c2e" + "4b6d8f0a1c3e5b7d9f2a4c6e8b0d1f3a";

  /** The names of the seven tools. */
  static final Set<String> NAMES =
      Set.of(
          "get_credits",
          "get_api_key_info",
          "list_models",
          "list_api_keys",
          "get_api_key",
          "get_generation",
          "get_activity");

  static final String CREDITS = "{\"data\":{\"total_credits\":100.5,\"total_usage\":25.75}}";

  static final String KEY_INFO =
      """
      {"data":{"label":"sk-or-v1-au7...890","limit":100,"limit_remaining":74.5,\
      "limit_reset":"monthly","usage":25.5,"usage_daily":25.5,"is_free_tier":false,\
      "rate_limit":{"requests":1000,"interval":"1h"}}}""";

  static final String MODELS =
      """
      {"data":[{"id":"openai/gpt-4","name":"GPT-4","context_length":8192,\
      "architecture":{"modality":"text->text"},"pricing":{"prompt":"0.00003","completion":"0.00006"},\
      "top_provider":{"max_completion_tokens":4096,"is_moderated":true},\
      "supported_parameters":["tools"]}]}""";

  static final String HASH = "f01d52606dc8f0a8303a7b5cc3fa07109c2e346cec7c0a16b40de462992ce943";

  static final String ONE_KEY =
      """
      {"created_at":"2025-02-19T20:52:27.363244+00:00","updated_at":"2025-02-19T21:24:11.708154+00:00",\
      "hash":"%s","label":"sk-or-v1-7a3...1f9","name":"Customer Key","disabled":false,\
      "limit":10,"limit_remaining":10,"limit_reset":null,"usage":0,"usage_daily":0}"""
          .formatted(HASH);

  static final String KEYS = "{\"data\":[" + ONE_KEY + "]}";

  static final String GENERATION_ID = "gen-3bhGkxlo4XFrqiabUM7NDtwDzWwG";

  static final String GENERATION =
      """
      {"data":{"id":"gen-3bhGkxlo4XFrqiabUM7NDtwDzWwG","total_cost":0.0015,\
      "model":"sao10k/l3-stheno-8b","provider_name":"Infermatic","tokens_prompt":10,\
      "tokens_completion":25,"finish_reason":"stop","latency":1250}}""";

  static final String ACTIVITY_DAY =
      """
      {"data":[{"date":"2025-08-24","model":"openai/gpt-4.1",\
      "endpoint_id":"550e8400-e29b-41d4-a716-446655440000","provider_name":"OpenAI","usage":0.015,\
      "requests":5,"prompt_tokens":50,"completion_tokens":125,"reasoning_tokens":25}]}""";

  static final String ACTIVITY =
      """
      {"data":[{"date":"2025-08-23","model":"anthropic/claude-sonnet-4",\
      "endpoint_id":"7c9e6679-7425-40de-944b-e07fc1f90ae7","provider_name":"Anthropic",\
      "usage":0.42,"requests":12,"prompt_tokens":9100,"completion_tokens":2200,\
      "reasoning_tokens":0},%s]}"""
          .formatted(ACTIVITY_DAY.substring("{\"data\":[".length(), ACTIVITY_DAY.length() - 2));

  static final String UNAUTHORIZED =
      "{\"error\":{\"message\":\"No auth credentials found\",\"code\":401}}";

  static final String FORBIDDEN =
      "{\"error\":{\"message\":\"Only management keys can perform this operation\",\"code\":403}}";

  private static final String JSON_TYPE = "application/json";
  private static final JsonMapper JSON = JsonMapper.builder().build();

  private FakeSite site;
  private OutboundHttp http;
  private final ToolDispatcher dispatcher = ToolDispatcher.create();
  private ToolSet tools;

  /** The fake OpenRouter, every endpoint answering what OpenRouter answers. */
  static FakeSite openRouter() {
    return FakeSite.start()
        .page("/api/v1/credits", FakeSite.Page.ok(JSON_TYPE, CREDITS))
        .page("/api/v1/key", FakeSite.Page.ok(JSON_TYPE, KEY_INFO))
        .page("/api/v1/models", FakeSite.Page.ok(JSON_TYPE, MODELS))
        .page("/api/v1/keys", FakeSite.Page.ok(JSON_TYPE, KEYS))
        .page("/api/v1/keys/" + HASH, FakeSite.Page.ok(JSON_TYPE, "{\"data\":" + ONE_KEY + "}"))
        .page(
            "/api/v1/keys/0000000000000000000000000000000000000000000000000000000000000000",
            FakeSite.Page.of(
                404, JSON_TYPE, "{\"error\":{\"message\":\"Key not found\",\"code\":404}}"))
        .page("/api/v1/generation?id=" + GENERATION_ID, FakeSite.Page.ok(JSON_TYPE, GENERATION))
        .page("/api/v1/activity", FakeSite.Page.ok(JSON_TYPE, ACTIVITY))
        .page("/api/v1/activity?date=2025-08-24", FakeSite.Page.ok(JSON_TYPE, ACTIVITY_DAY));
  }

  @BeforeEach
  void start() {
    site = openRouter();
    http = OutboundHttp.start(OutboundPolicy.defaults().allowingHost("127.0.0.2"));
    tools = tools(config(site.url() + "/api/v1", Optional.empty()), Optional.of(KEY));
  }

  @AfterEach
  void stop() {
    http.close();
    site.close();
  }

  private static OpenRouterConfig config(String baseUrl, Optional<String> referer) {
    return new OpenRouterConfig(URI.create(baseUrl), OpenRouterConfig.API_KEY_ENV, referer);
  }

  private ToolSet tools(OpenRouterConfig config, Optional<String> key) {
    ToolRegistry registry = new ToolRegistry();
    registry.registerAll(new OpenRouterTools(config, http, key).tools());
    return ToolSet.of(registry, ToolProfiles.MAIN);
  }

  private ToolResult call(String tool, Map<String, Object> arguments) {
    return call(tools, tool, arguments);
  }

  private ToolResult call(ToolSet set, String tool, Map<String, Object> arguments) {
    return dispatcher.dispatch(set, ToolCall.of(tool, JSON.writeValueAsString(arguments)));
  }

  /** What the tool, called without arguments, answers when OpenRouter answers the path so. */
  private ToolResult callAnswered(String tool, String path, int status, String body) {
    site.page("/api/v1" + path, FakeSite.Page.of(status, JSON_TYPE, body));
    return call(tool, Map.of());
  }

  /** The failure's message, the failure checked to carry the code. */
  private static String failureText(ToolResult result, ErrorCode code) {
    assertThat(code(result)).isEqualTo(code);
    return result.text();
  }

  /** Checks the call was refused as invalid arguments with that message, before any request. */
  private void assertRefusedBeforeAnyRequest(ToolResult result, String message) {
    assertThat(failureText(result, ErrorCode.INVALID_ARGUMENTS)).isEqualTo(message);
    assertThat(site.takeRequests()).isEmpty();
  }

  private static ErrorCode code(ToolResult result) {
    assertThat(result).as(result.text()).isInstanceOf(ToolResult.Failure.class);
    return ((ToolResult.Failure) result).error().code();
  }

  /** Each tool, its arguments, the path and query it asks for, and OpenRouter's answer. */
  static Stream<Arguments> calls() {
    return Stream.of(
        Arguments.of("get_credits", Map.of(), "/api/v1/credits", CREDITS),
        Arguments.of("get_api_key_info", Map.of(), "/api/v1/key", KEY_INFO),
        Arguments.of("list_models", Map.of(), "/api/v1/models", MODELS),
        Arguments.of("list_api_keys", Map.of(), "/api/v1/keys", KEYS),
        Arguments.of(
            "get_api_key",
            Map.of("key_hash", HASH),
            "/api/v1/keys/" + HASH,
            "{\"data\":" + ONE_KEY + "}"),
        Arguments.of(
            "get_generation",
            Map.of("generation_id", GENERATION_ID),
            "/api/v1/generation?id=" + GENERATION_ID,
            GENERATION),
        Arguments.of("get_activity", Map.of(), "/api/v1/activity", ACTIVITY),
        Arguments.of(
            "get_activity",
            Map.of("date", "2025-08-24"),
            "/api/v1/activity?date=2025-08-24",
            ACTIVITY_DAY));
  }

  @ParameterizedTest(name = "{0} {1}")
  @MethodSource("calls")
  void eachToolAnswersOpenRoutersJsonAsItCame(
      String tool, Map<String, Object> arguments, String pathAndQuery, String answer) {
    ToolResult result = call(tool, arguments);

    assertThat(result).as(result.text()).isInstanceOf(ToolResult.Success.class);
    assertThat(result.text()).isEqualTo(answer);
    assertThat(result.text()).doesNotContain(KEY);
  }

  @ParameterizedTest(name = "{0} {1}")
  @MethodSource("calls")
  void eachToolSendsOneGetToItsEndpointWithTheKeyAsABearerToken(
      String tool, Map<String, Object> arguments, String pathAndQuery, String answer) {
    call(tool, arguments);

    assertThat(site.takeRequests())
        .singleElement()
        .satisfies(
            request -> {
              assertThat(request.method()).isEqualTo("GET");
              assertThat(request.uri().toString()).isEqualTo(pathAndQuery);
              assertThat(request.header("Authorization")).isEqualTo("Bearer " + KEY);
              assertThat(request.header("Accept")).isEqualTo("application/json");
              assertThat(request.header("HTTP-Referer")).isNull();
            });
  }

  @Test
  void theRefererIsSentWhenTheConfigNamesOne() {
    ToolSet withReferer =
        tools(
            config(site.url() + "/api/v1", Optional.of("https://agents.example.com/toolhost")),
            Optional.of(KEY));

    call(withReferer, "get_credits", Map.of());

    assertThat(site.takeRequests())
        .singleElement()
        .satisfies(
            request ->
                assertThat(request.header("HTTP-Referer"))
                    .isEqualTo("https://agents.example.com/toolhost"));
  }

  @Test
  void theToolsAreReadOnlyOfTheirSourceWithTheParameterNamesOfTheIssue() {
    assertThat(tools.specs()).extracting(ToolSpec::name).containsExactlyInAnyOrderElementsOf(NAMES);
    assertThat(tools.specs())
        .allSatisfy(
            spec -> {
              assertThat(spec.source()).isEqualTo("builtin:openrouter");
              assertThat(spec.annotations().readOnly()).isTrue();
              assertThat(spec.annotations().destructive()).isFalse();
            });
    assertThat(spec("get_api_key").parameters().get("required").toString())
        .isEqualTo("[\"key_hash\"]");
    assertThat(spec("get_generation").parameters().get("required").toString())
        .isEqualTo("[\"generation_id\"]");
    assertThat(spec("get_activity").parameters().get("properties").propertyNames())
        .containsExactly("date");
    assertThat(spec("get_activity").parameters().get("required")).isNull();
  }

  private ToolSpec spec(String name) {
    return tools.specs().stream().filter(s -> s.name().equals(name)).findFirst().orElseThrow();
  }

  @Test
  void a401SaysOpenRoutersMessageAndThatTheKeyIsWrong() {
    ToolResult result = callAnswered("get_credits", "/credits", 401, UNAUTHORIZED);

    assertThat(failureText(result, ErrorCode.UNAVAILABLE))
        .isEqualTo(
            "OpenRouter API error 401 for '/credits': "
                + UNAUTHORIZED
                + ". The key in OPENROUTER_API_KEY is missing, invalid or revoked.");
  }

  @Test
  void a403SaysOpenRoutersMessageAndThatAManagementKeyIsNeeded() {
    ToolResult result = callAnswered("list_api_keys", "/keys", 403, FORBIDDEN);

    assertThat(failureText(result, ErrorCode.UNAVAILABLE))
        .isEqualTo(
            "OpenRouter API error 403 for '/keys': "
                + FORBIDDEN
                + ". The key in OPENROUTER_API_KEY may not do this: the key and activity tools"
                + " need a management key.");
  }

  @Test
  void anUnknownKeyHashIsA404ThatBlamesTheArgument() {
    ToolResult result =
        call(
            "get_api_key",
            Map.of("key_hash", "0000000000000000000000000000000000000000000000000000000000000000"));

    assertThat(failureText(result, ErrorCode.INVALID_ARGUMENTS))
        .isEqualTo(
            "OpenRouter API error 404 for"
                + " '/keys/0000000000000000000000000000000000000000000000000000000000000000':"
                + " {\"error\":{\"message\":\"Key not found\",\"code\":404}}. Nothing exists at"
                + " that id.");
  }

  @Test
  void aRateLimitSaysToWait() {
    ToolResult result =
        callAnswered(
            "list_models",
            "/models",
            429,
            "{\"error\":{\"message\":\"Rate limit exceeded\",\"code\":429}}");

    assertThat(failureText(result, ErrorCode.UNAVAILABLE))
        .isEqualTo(
            "OpenRouter API error 429 for '/models':"
                + " {\"error\":{\"message\":\"Rate limit exceeded\",\"code\":429}}. Rate limited:"
                + " wait a moment before calling again.");
  }

  @ParameterizedTest
  @ValueSource(strings = {"../credits", "..", "a/b", "%2e%2e", "abc?x=1", "abc def", ""})
  void aKeyHashThatIsNotAPlainIdentifierIsRefusedBeforeAnyRequest(String hash) {
    ToolResult result = call("get_api_key", Map.of("key_hash", hash));

    assertRefusedBeforeAnyRequest(
        result,
        "key_hash must be letters, digits, '-' and '_' only (1 to 200 of them), as OpenRouter"
            + " writes them.");
  }

  @Test
  void aGenerationIdThatIsNotAPlainIdentifierIsRefusedBeforeAnyRequest() {
    ToolResult result = call("get_generation", Map.of("generation_id", "gen-1&id=gen-2"));

    assertRefusedBeforeAnyRequest(
        result,
        "generation_id must be letters, digits, '-' and '_' only (1 to 200 of them), as"
            + " OpenRouter writes them.");
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "24-08-2025",
        "2025/08/24",
        "2025-8-24",
        "2025-08-24&x=1",
        "2025-13-01",
        "2025-02-30",
        "+2025-08-24",
        "yesterday",
        ""
      })
  void aDateThatIsNotADayWrittenYyyyMmDdIsRefusedBeforeAnyRequest(String date) {
    ToolResult result = call("get_activity", Map.of("date", date));

    assertRefusedBeforeAnyRequest(
        result, "date is '" + date + "'; it must be a day written YYYY-MM-DD, such as 2025-08-24.");
  }

  @Test
  void withoutAKeyEveryToolSaysWhichVariableToSetAndSendsNothing() {
    ToolSet keyless =
        tools(
            new OpenRouterConfig(
                URI.create(site.url() + "/api/v1"), "OR_MANAGEMENT_KEY", Optional.empty()),
            Optional.empty());
    List<String> texts = new ArrayList<>();

    for (Arguments arguments : calls().toList()) {
      Object[] values = arguments.get();
      @SuppressWarnings("unchecked")
      Map<String, Object> given = (Map<String, Object>) values[1];
      ToolResult result = call(keyless, (String) values[0], given);
      assertThat(code(result)).isEqualTo(ErrorCode.UNAVAILABLE);
      texts.add(result.text());
    }

    assertThat(texts)
        .hasSize(8)
        .containsOnly(
            "The OpenRouter tools have no key: the environment variable OR_MANAGEMENT_KEY is not"
                + " set. Set it to an OpenRouter API key (a management key for the key and"
                + " activity tools) and restart the host.");
    assertThat(site.takeRequests()).isEmpty();
  }

  @Test
  void theBaseUrlIsTheConfigsWithOrWithoutATrailingSlash() {
    try (FakeSite other =
        FakeSite.start()
            .page("/openrouter/v1/credits", FakeSite.Page.ok(JSON_TYPE, CREDITS))
            .page("/credits", FakeSite.Page.ok(JSON_TYPE, "{\"data\":{}}"))) {
      ToolSet slash =
          tools(config(other.url() + "/openrouter/v1/", Optional.empty()), Optional.of(KEY));
      ToolSet bare =
          tools(config(other.url() + "/openrouter/v1", Optional.empty()), Optional.of(KEY));

      assertThat(call(slash, "get_credits", Map.of()).text()).isEqualTo(CREDITS);
      assertThat(call(bare, "get_credits", Map.of()).text()).isEqualTo(CREDITS);

      assertThat(other.takeRequests())
          .extracting(request -> request.uri().toString())
          .containsExactly("/openrouter/v1/credits", "/openrouter/v1/credits");
      assertThat(site.takeRequests()).isEmpty();
    }
  }

  @Test
  void anUnreachableApiIsUnavailableAndSaysSo() {
    String url = site.url();
    site.close();

    ToolResult result =
        call(
            tools(config(url + "/api/v1", Optional.empty()), Optional.of(KEY)),
            "get_credits",
            Map.of());

    assertThat(code(result)).isEqualTo(ErrorCode.UNAVAILABLE);
    assertThat(result.text()).startsWith("OpenRouter could not be reached: ").doesNotContain(KEY);
    site = openRouter();
  }

  @Test
  void aKeyTheServerEchoesInAnErrorIsNotInTheError() {
    String echo =
        "{\"error\":{\"message\":\"No auth credentials found\",\"code\":401,"
            + "\"metadata\":{\"headers\":{\"authorization\":\"Bearer "
            + KEY
            + "\"}}}}";
    site.page("/api/v1/credits", FakeSite.Page.of(401, JSON_TYPE, echo));

    ToolResult result = call("get_credits", Map.of());

    assertThat(result.text())
        .isEqualTo(
            "OpenRouter API error 401 for '/credits': "
                + echo.replace(KEY, "[REDACTED:OPENROUTER_API_KEY]")
                + ". The key in OPENROUTER_API_KEY is missing, invalid or revoked.");
    assertThat(((ToolResult.Failure) result).error().detail()).doesNotContain(KEY);
  }

  @Test
  void aKeyEchoedWhereTheErrorIsCutLeavesNoPieceOfItBehind() {
    // The key straddles the 500th character, where the error's body is cut.
    String echo = "x".repeat(480) + "Bearer " + KEY + " was refused";
    site.page("/api/v1/credits", FakeSite.Page.of(401, "text/plain", echo));

    ToolResult result = call("get_credits", Map.of());

    assertThat(result.text())
        .startsWith("OpenRouter API error 401 for '/credits': " + "x".repeat(480) + "Bearer [REDA")
        .doesNotContain(KEY.substring(0, 12));
  }

  @Test
  void aKeyTheServerEchoesInASuccessIsNotInTheResult() {
    site.page(
        "/api/v1/key",
        FakeSite.Page.ok(JSON_TYPE, "{\"data\":{\"label\":\"" + KEY + "\",\"usage\":1}}"));

    ToolResult result = call("get_api_key_info", Map.of());

    assertThat(result.text())
        .isEqualTo("{\"data\":{\"label\":\"[REDACTED:OPENROUTER_API_KEY]\",\"usage\":1}}");
  }

  @Test
  void theKeyIsInNoResultOfAnyToolNorInAnyError() {
    List<String> texts = new ArrayList<>();
    for (Arguments arguments : calls().toList()) {
      Object[] values = arguments.get();
      @SuppressWarnings("unchecked")
      Map<String, Object> given = (Map<String, Object>) values[1];
      texts.add(call((String) values[0], given).text());
    }
    site.page("/api/v1/credits", FakeSite.Page.of(401, JSON_TYPE, UNAUTHORIZED));
    site.page("/api/v1/keys", FakeSite.Page.of(403, JSON_TYPE, FORBIDDEN));
    texts.add(call("get_credits", Map.of()).text());
    texts.add(call("list_api_keys", Map.of()).text());
    texts.add(call("get_api_key", Map.of("key_hash", "../" + KEY)).text());

    assertThat(texts).hasSize(11).noneMatch(text -> text.contains(KEY));
    assertThat(site.takeRequests()).hasSize(10);
  }
}
