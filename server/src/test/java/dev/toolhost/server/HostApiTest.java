package dev.toolhost.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.core.MethodTools;
import dev.toolhost.core.Param;
import dev.toolhost.core.Tool;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolResult;
import dev.toolhost.host.HostConfig;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** Drives a real host's HTTP API on a free port, with a real HTTP client. */
class HostApiTest {

  /** Tools of source {@code builtin:test}. */
  public static final class TestTools {
    @Tool(description = "Returns the text it is given.")
    public String echo(@Param(description = "The text to return.") String text) {
      return text;
    }

    /** A sum, returned as structured content. */
    public record Sum(int total) {}

    @Tool(description = "Adds two whole numbers.")
    public Sum add(int a, int b) {
      return new Sum(a + b);
    }

    @Tool(description = "Always fails while running.")
    public String explode() {
      throw new IllegalStateException("the test tool exploded");
    }
  }

  /** Tells how long its call has left; its own timeout is two minutes. */
  public static final class DeadlineProbe {
    @Tool(description = "Tells the time left to this call.", timeoutSeconds = 120)
    public String timeLeft(ToolCall call) {
      return Long.toString(Duration.between(Instant.now(), call.deadline()).toMillis());
    }
  }

  static final String CONFIG =
      """
      http:
        port: 0
      profiles:
        no_test_tools:
          extends: main
          deny_sources: [builtin:test]
        guides_only:
          allow_sources: [builtin:guides]
      """;

  private static final HttpClient CLIENT =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private static final JsonMapper JSON = JsonMapper.builder().build();

  private final InMemorySpanExporter spans = InMemorySpanExporter.create();
  private Host host;
  private URI base;

  @BeforeEach
  void startHost() {
    host =
        Host.builder(HostConfig.parse(CONFIG, "test-config.yaml"))
            .environment(Map.of())
            .spanProcessor(SimpleSpanProcessor.create(spans))
            .build();
    host.registry().registerAll(MethodTools.of(new TestTools(), "builtin:test"));
    base = host.start();
  }

  @AfterEach
  void closeHost() {
    host.close();
  }

  @AfterAll
  static void closeClient() {
    CLIENT.close();
  }

  @Test
  void listsEveryToolInOpenAiFunctionFormForTheMainProfile() throws Exception {
    HttpResponse<String> response = get("/v1/tools");

    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.headers().firstValue("content-type")).hasValue("application/json");
    JsonNode body = JSON.readTree(response.body());
    assertThat(body.get("profile").asString()).isEqualTo("main");
    assertThat(names(body)).containsExactlyElementsOf(HostTools.after("add", "echo", "explode"));
    JsonNode echo = body.get("tools").get(1);
    assertThat(echo.get("type").asString()).isEqualTo("function");
    assertThat(echo.get("source").asString()).isEqualTo("builtin:test");
    assertThat(echo.get("function").get("name").asString()).isEqualTo("echo");
    assertThat(echo.get("function").get("description").asString())
        .isEqualTo("Returns the text it is given.");
    assertThat(echo.at("/function/parameters/properties/text/type").asString()).isEqualTo("string");
    assertThat(echo.at("/function/parameters/required/0").asString()).isEqualTo("text");
  }

  @Test
  void aUserProfileFromYamlHidesASource() throws Exception {
    JsonNode hidden = JSON.readTree(get("/v1/tools?profile=no_test_tools").body());
    JsonNode guidesOnly = JSON.readTree(get("/v1/tools?profile=guides_only").body());

    assertThat(hidden.get("profile").asString()).isEqualTo("no_test_tools");
    assertThat(names(hidden)).doesNotContain("add", "echo", "explode").contains("get_tool_guide");
    assertThat(names(guidesOnly)).containsExactly("get_tool_guide", "list_tool_guides");
  }

  @Test
  void unknownProfileIsNotFoundNamingTheKnownOnes() throws Exception {
    HttpResponse<String> response = get("/v1/tools?profile=nobody");

    assertThat(response.statusCode()).isEqualTo(404);
    assertThat(JSON.readTree(response.body()).get("error").get("code").asString())
        .isEqualTo("profile_not_found");
    assertThat(JSON.readTree(response.body()).get("error").get("message").asString())
        .isEqualTo(
            "Unknown tool profile 'nobody'. Known profiles: main, subagent, scheduled,"
                + " a2a_synthesis, guides_only, no_test_tools.");
  }

  @Test
  void invokingAToolAnswersItsContent() throws Exception {
    HttpResponse<String> response =
        post(
            "/v1/tools/echo/invoke",
            """
            {"arguments": {"text": "hello"}, "session_id": "s-1", "tool_call_id": "call-1",
             "timeout_ms": 5000}
            """);

    assertThat(response.statusCode()).isEqualTo(200);
    JsonNode body = JSON.readTree(response.body());
    assertThat(body.get("tool_call_id").asString()).isEqualTo("call-1");
    assertThat(body.get("tool_name").asString()).isEqualTo("echo");
    assertThat(body.get("content").asString()).isEqualTo("hello");
    assertThat(body.get("is_error").asBoolean()).isFalse();
    assertThat(body.get("error").isNull()).isTrue();
    assertThat(body.has("structured_content")).isFalse();
  }

  @Test
  void argumentsMayBeJsonText() throws Exception {
    JsonNode body =
        JSON.readTree(
            post("/v1/tools/echo/invoke", "{\"arguments\": \"{\\\"text\\\": \\\"as text\\\"}\"}")
                .body());

    assertThat(body.get("content").asString()).isEqualTo("as text");
    assertThat(body.get("tool_call_id").asString()).isNotBlank();
  }

  @Test
  void aStructuredResultCarriesItsJson() throws Exception {
    JsonNode body =
        JSON.readTree(post("/v1/tools/add/invoke", "{\"arguments\": {\"a\": 2, \"b\": 3}}").body());

    assertThat(body.get("is_error").asBoolean()).isFalse();
    assertThat(body.get("structured_content").get("total").asInt()).isEqualTo(5);
    assertThat(JSON.readTree(body.get("content").asString()).get("total").asInt()).isEqualTo(5);
  }

  @Test
  void invalidArgumentsAreAToolErrorListingEveryViolation() throws Exception {
    HttpResponse<String> response =
        post("/v1/tools/add/invoke", "{\"arguments\": {\"a\": \"two\", \"c\": 1}}");

    assertThat(response.statusCode()).isEqualTo(200);
    JsonNode body = JSON.readTree(response.body());
    assertThat(body.get("is_error").asBoolean()).isTrue();
    assertThat(body.get("error").get("code").asString()).isEqualTo("invalid_arguments");
    assertThat(body.get("error").get("retryable").asBoolean()).isFalse();
    String message = body.get("error").get("message").asString();
    assertThat(message).startsWith("The arguments for tool 'add' do not match");
    assertThat(message.lines().filter(line -> line.startsWith("- ")))
        .containsExactly(
            "- $.a: string found, integer expected",
            "- $: required property 'b' not found",
            "- $: property 'c' is not defined in the schema and the schema does not allow"
                + " additional properties");
    assertThat(body.get("content").asString()).isEqualTo(message);
  }

  @Test
  void aToolFailureIsAToolErrorNotAnHttpError() throws Exception {
    HttpResponse<String> response = post("/v1/tools/explode/invoke", "{}");

    assertThat(response.statusCode()).isEqualTo(200);
    JsonNode body = JSON.readTree(response.body());
    assertThat(body.get("is_error").asBoolean()).isTrue();
    assertThat(body.get("error").get("code").asString()).isEqualTo("execution_failed");
    assertThat(body.get("error").get("message").asString())
        .doesNotContain("IllegalStateException")
        .doesNotContain("exploded");
  }

  @Test
  void aToolHiddenByTheProfileAnswersExactlyLikeAMissingTool() throws Exception {
    JsonNode hidden =
        JSON.readTree(
            post(
                    "/v1/tools/echo/invoke?profile=no_test_tools",
                    "{\"arguments\": {\"text\": \"x\"}}")
                .body());
    // The same call on a host where echo was never registered.
    JsonNode missing;
    try (Host bare =
        Host.builder(HostConfig.parse(CONFIG, "test-config.yaml")).environment(Map.of()).build()) {
      ToolResult result =
          bare.dispatcher()
              .dispatch(bare.toolSet("no_test_tools"), ToolCall.of("echo", "{\"text\": \"x\"}"));
      missing =
          JSON.readTree(
              JSON.writeValueAsString(new ApiJson().result(ToolCall.of("echo", "{}"), result)));
    }

    assertThat(hidden.get("is_error").asBoolean()).isTrue();
    assertThat(hidden.get("error").get("code").asString()).isEqualTo("tool_not_found");
    assertThat(hidden.get("error")).isEqualTo(missing.get("error"));
    assertThat(hidden.get("content")).isEqualTo(missing.get("content"));
    assertThat(hidden.get("error").get("message").asString())
        .startsWith("Tool 'echo' does not exist.")
        .doesNotContain("profile");
  }

  @Test
  void aMalformedBodyIsABadRequestSayingWhatIsWrong() throws Exception {
    assertBadRequest("not json", "The request body is not valid JSON");
    assertBadRequest("[1, 2]", "The request body must be a JSON object");
    assertBadRequest("{\"arguments\": 5}", "'arguments' must be a JSON object or a string");
    assertBadRequest("{\"session_id\": 7}", "'session_id' must be a string, not a number.");
    assertBadRequest("{\"timeout_ms\": \"soon\"}", "'timeout_ms' must be a positive whole number");
    assertBadRequest("{\"timeout_ms\": -5}", "'timeout_ms' must be a positive whole number");
    assertBadRequest("{\"args\": {}}", "Unknown field 'args' in the request body (expected:");
  }

  @Test
  void anEmptyBodyCallsWithNoArguments() throws Exception {
    JsonNode body = JSON.readTree(post("/v1/tools/list_tool_guides/invoke", "").body());

    assertThat(body.get("is_error").asBoolean()).isFalse();
    assertThat(body.get("content").asString()).contains("tool-calls");
  }

  @Test
  void listsProfilesWithTheirRulesAndVisibleTools() throws Exception {
    HttpResponse<String> response = get("/v1/profiles");

    assertThat(response.statusCode()).isEqualTo(200);
    JsonNode profiles = JSON.readTree(response.body()).get("profiles");
    assertThat(profiles.valueStream().map(profile -> profile.get("name").asString()))
        .containsExactly(
            "main", "subagent", "scheduled", "a2a_synthesis", "guides_only", "no_test_tools");
    // An allow-list: what the extensions on this host grant a subagent, and no source.
    JsonNode subagent = profiles.get(1);
    assertThat(strings(subagent.get("allowed_sources"))).isEmpty();
    assertThat(strings(subagent.get("denied_sources"))).containsExactly("subagent");
    assertThat(strings(subagent.get("allowed_tools")))
        .containsExactly(
            "get_from_working_memory",
            "get_tool_guide",
            "list_tool_guides",
            "list_working_memory",
            "mcp_get_service_details",
            "mcp_invoke_tool",
            "mcp_list_services",
            "search_known_services",
            "search_working_memory");
    assertThat(strings(subagent.get("denied_tools"))).isEmpty();
    JsonNode noTestTools = profiles.get(5);
    assertThat(strings(noTestTools.get("denied_sources"))).containsExactly("builtin:test");
    assertThat(strings(noTestTools.get("tools"))).containsExactlyElementsOf(HostTools.NAMES);
  }

  @Test
  void healthIsOk() throws Exception {
    HttpResponse<String> response = get("/healthz");

    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(JSON.readTree(response.body()).get("status").asString()).isEqualTo("ok");
  }

  @Test
  void metricsCountInvocationsByToolAndStatus() throws Exception {
    post("/v1/tools/echo/invoke", "{\"arguments\": {\"text\": \"a\"}}");
    post("/v1/tools/echo/invoke", "{\"arguments\": {\"text\": \"b\"}}");
    post("/v1/tools/echo/invoke", "{\"arguments\": {}}");
    post("/v1/tools/explode/invoke", "{}");

    HttpResponse<String> response = get("/metrics");

    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.headers().firstValue("content-type"))
        .hasValue("text/plain; version=0.0.4; charset=utf-8");
    List<String> invocations =
        response
            .body()
            .lines()
            .filter(line -> line.startsWith("toolhost_tool_invocations"))
            .toList();
    assertThat(invocations)
        .anySatisfy(
            line ->
                assertThat(line)
                    .contains("status=\"ok\"")
                    .contains("tool_name=\"echo\"")
                    .endsWith(" 2.0"))
        .anySatisfy(
            line ->
                assertThat(line)
                    .contains("status=\"invalid_arguments\"")
                    .contains("tool_name=\"echo\"")
                    .endsWith(" 1.0"))
        .anySatisfy(
            line ->
                assertThat(line)
                    .contains("status=\"execution_failed\"")
                    .contains("tool_name=\"explode\"")
                    .endsWith(" 1.0"));
    assertThat(response.body()).contains("toolhost_tool_invoke_duration");
  }

  /** The finished span of that name; a request's span ends just after its response is sent. */
  private SpanData finished(String name) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (true) {
      Optional<SpanData> span =
          spans.getFinishedSpanItems().stream()
              .filter(candidate -> candidate.getName().equals(name))
              .findFirst();
      if (span.isPresent()) {
        return span.get();
      }
      assertThat(System.nanoTime())
          .as("no span %s in %s", name, spans.getFinishedSpanItems())
          .isLessThan(deadline);
      Thread.sleep(10);
    }
  }

  @Test
  void aTraceparentHeaderMakesTheRequestsSpanItsChildAndTheToolSpanAGrandchild() throws Exception {
    String traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    String parentSpanId = "00f067aa0ba902b7";

    post(
        "/v1/tools/echo/invoke",
        "{\"arguments\": {\"text\": \"traced\"}}",
        "traceparent",
        "00-" + traceId + "-" + parentSpanId + "-01");

    SpanData request = finished("POST /v1/tools/{name}/invoke");
    SpanData tool = finished("execute_tool echo");
    assertThat(request.getTraceId()).isEqualTo(traceId);
    assertThat(request.getParentSpanId()).isEqualTo(parentSpanId);
    assertThat(tool.getTraceId()).isEqualTo(traceId);
    assertThat(tool.getParentSpanId()).isEqualTo(request.getSpanId());
    assertThat(request.getKind()).isEqualTo(SpanKind.SERVER);
    assertThat(request.getAttributes().asMap())
        .containsEntry(AttributeKey.stringKey("http.request.method"), "POST")
        .containsEntry(AttributeKey.stringKey("http.route"), "/v1/tools/{name}/invoke")
        .containsEntry(AttributeKey.stringKey("url.path"), "/v1/tools/echo/invoke")
        .containsEntry(AttributeKey.stringKey("url.scheme"), "http")
        .containsEntry(AttributeKey.longKey("http.response.status_code"), 200L);
    // The body is not recorded.
    assertThat(request.getAttributes().asMap().values().toString()).doesNotContain("traced");
  }

  @Test
  void withoutATraceparentTheRequestsSpanStartsATrace() throws Exception {
    post("/v1/tools/echo/invoke", "{\"arguments\": {\"text\": \"untraced\"}}");

    SpanData request = finished("POST /v1/tools/{name}/invoke");
    assertThat(request.getParentSpanContext().isValid()).isFalse();
    assertThat(finished("execute_tool echo").getParentSpanId()).isEqualTo(request.getSpanId());
  }

  private static boolean measured(String metrics, String label, int status) {
    return metrics
        .lines()
        .anyMatch(
            line ->
                line.startsWith("http_server_request_duration_seconds_count{")
                    && line.contains(label)
                    && line.contains("http_response_status_code=\"" + status + "\""));
  }

  @Test
  void everyRequestIsMeasuredWithItsRouteAndStatusRefusedOnesToo() throws Exception {
    get("/v1/tools");
    get("/no/such/route?q=secret-words");
    post("/v1/tools/echo/invoke", "{not json");

    // A request is measured as its response completes, a moment after the client has it.
    String metrics = get("/metrics").body();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!(measured(metrics, "http_route=\"/v1/tools\"", 200)
            && measured(metrics, "http_route=\"/v1/tools/{name}/invoke\"", 400)
            && measured(metrics, "http_request_method=\"GET\"", 404))
        && System.nanoTime() < deadline) {
      Thread.sleep(20);
      metrics = get("/metrics").body();
    }

    assertThat(metrics.lines().filter(line -> line.startsWith("http_server_request_duration")))
        .anySatisfy(
            line ->
                assertThat(line)
                    .startsWith("http_server_request_duration_seconds_count{")
                    .contains("http_route=\"/v1/tools\"")
                    .contains("http_response_status_code=\"200\"")
                    .endsWith(" 1"))
        .anySatisfy(
            line ->
                assertThat(line)
                    .startsWith("http_server_request_duration_seconds_count{")
                    .contains("http_route=\"/v1/tools/{name}/invoke\"")
                    .contains("http_response_status_code=\"400\"")
                    .doesNotContain("error_type")
                    .endsWith(" 1"))
        .anySatisfy(
            line ->
                assertThat(line)
                    .startsWith("http_server_request_duration_seconds_count{")
                    .doesNotContain("http_route")
                    .contains("http_request_method=\"GET\"")
                    .contains("http_response_status_code=\"404\"")
                    .endsWith(" 1"));
    SpanData unknown = finished("GET");
    assertThat(unknown.getAttributes().asMap())
        .containsEntry(AttributeKey.stringKey("url.path"), "/no/such/route")
        .containsEntry(AttributeKey.longKey("http.response.status_code"), 404L);
    assertThat(unknown.getAttributes().asMap().values().toString()).doesNotContain("secret-words");
  }

  @Test
  void aCallWithoutATimeoutGetsTheToolsOwnAndANamedTimeoutWins() throws Exception {
    host.registry().registerAll(MethodTools.of(new DeadlineProbe(), "builtin:probe"));

    long own = timeLeft(post("/v1/tools/timeLeft/invoke", "{}"));
    long named = timeLeft(post("/v1/tools/timeLeft/invoke", "{\"timeout_ms\": 5000}"));

    // Past the 60 s default: the tool's two minutes.
    assertThat(own).isBetween(60_001L, 120_000L);
    assertThat(named).isBetween(0L, 5_000L);
  }

  private static long timeLeft(HttpResponse<String> response) throws Exception {
    assertThat(response.statusCode()).isEqualTo(200);
    return Long.parseLong(JSON.readTree(response.body()).get("content").asString());
  }

  @Test
  void anUnknownPathIsNotFound() throws Exception {
    HttpResponse<String> response = get("/v2/tools");

    assertThat(response.statusCode()).isEqualTo(404);
    assertThat(JSON.readTree(response.body()).get("error").get("code").asString())
        .isEqualTo("not_found");
  }

  @Test
  void aWrongMethodIsNotAllowed() throws Exception {
    HttpResponse<String> invokeByGet = get("/v1/tools/echo/invoke");
    HttpResponse<String> listByPost = post("/v1/tools", "{}");

    assertThat(invokeByGet.statusCode()).isEqualTo(405);
    assertThat(invokeByGet.headers().firstValue("allow")).hasValue("POST");
    assertThat(JSON.readTree(invokeByGet.body()).get("error").get("code").asString())
        .isEqualTo("method_not_allowed");
    assertThat(listByPost.statusCode()).isEqualTo(405);
    assertThat(listByPost.headers().firstValue("allow")).hasValue("GET");
  }

  @Test
  void theHostSaysWhereItListens() {
    assertThat(host.port()).isPositive();
    assertThat(base).isEqualTo(URI.create("http://127.0.0.1:" + host.port() + "/"));
  }

  private void assertBadRequest(String body, String messageStart) throws Exception {
    HttpResponse<String> response = post("/v1/tools/echo/invoke", body);

    assertThat(response.statusCode()).as(body).isEqualTo(400);
    JsonNode error = JSON.readTree(response.body()).get("error");
    assertThat(error.get("code").asString()).isEqualTo("invalid_request");
    assertThat(error.get("message").asString()).as(body).startsWith(messageStart);
  }

  private HttpResponse<String> get(String path, String... headers) throws Exception {
    return send(HttpRequest.newBuilder(base.resolve(path)).GET(), headers);
  }

  private HttpResponse<String> post(String path, String body, String... headers) throws Exception {
    return send(
        HttpRequest.newBuilder(base.resolve(path))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body)),
        headers);
  }

  private static HttpResponse<String> send(HttpRequest.Builder request, String... headers)
      throws Exception {
    if (headers.length > 0) {
      request.headers(headers);
    }
    return CLIENT.send(
        request.timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
  }

  private static List<String> names(JsonNode toolList) {
    return toolList
        .get("tools")
        .valueStream()
        .map(tool -> tool.get("function").get("name").asString())
        .toList();
  }

  private static List<String> strings(JsonNode array) {
    return array.valueStream().map(JsonNode::asString).toList();
  }
}
