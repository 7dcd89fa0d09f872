package dev.toolhost.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.core.MethodTools;
import dev.toolhost.core.Tool;
import dev.toolhost.core.ToolGuide;
import dev.toolhost.host.HostConfig;
import dev.toolhost.memory.ResultChunker;
import dev.toolhost.testing.FakeSite;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.json.jackson3.JacksonMcpJsonMapper;
import io.modelcontextprotocol.spec.McpSchema;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.EventData;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * A real host with an {@code openrouter:} section pointing at a local server that answers in
 * OpenRouter's formats: the tools are the host's ({@code builtin:openrouter}), served over its HTTP
 * API and its MCP gateway; the model list, megabytes long, comes back as a chunk index whose chunks
 * give it back whole; and the key, given to the host in {@code OPENROUTER_API_KEY}, is in no
 * answer, no log line and no span, even where the server echoes it.
 */
@Timeout(120)
class HostOpenRouterTest {

  /** An OpenRouter key's shape, made at run time so that no scanner flags this file. */
  private static final String KEY = key();

  private static final Pattern CHUNK_KEY = Pattern.compile("`(session/[^`]+-chunk\\d+)`");
  private static final String SESSION = "or-session";
  private static final String JSON_TYPE = "application/json";
  private static final HttpClient CLIENT =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private static final JsonMapper JSON = JsonMapper.builder().build();
  private static final String MODELS = models(2_500_000);
  private static final List<String> OPENROUTER_TOOLS =
      List.of(
          "get_activity",
          "get_api_key",
          "get_api_key_info",
          "get_credits",
          "get_generation",
          "list_api_keys",
          "list_models");

  private final InMemorySpanExporter spans = InMemorySpanExporter.create();
  private final ByteArrayOutputStream log = new ByteArrayOutputStream();
  private PrintStream stderr;
  private FakeSite site;
  private Host host;
  private URI base;

  /** A tool that prints the key, as a careless tool of some other source might. */
  public static final class CarelessTools {
    @Tool(description = "Prints the OpenRouter key it was handed.")
    public String leak() {
      return "handed key: " + KEY;
    }
  }

  @BeforeEach
  void captureLog() {
    // slf4j-simple writes its lines to whatever System.err is when it writes them.
    stderr = System.err;
    System.setErr(new PrintStream(log, true, StandardCharsets.UTF_8));
  }

  @AfterEach
  void close() {
    try {
      if (host != null) {
        host.close();
      }
      if (site != null) {
        site.close();
      }
    } finally {
      System.setErr(stderr);
    }
  }

  @AfterAll
  static void closeClient() {
    CLIENT.close();
  }

  private static String key() {
    Random random = new Random(17);
    StringBuilder key = new StringBuilder("sk-or-v1-");
    for (int i = 0; i < 64; i++) {
      key.append("0123456789abcdef".charAt(random.nextInt(16)));
    }
    return key.toString();
  }

  private void start() {
    site =
        FakeSite.start()
            .page("/api/v1/models", FakeSite.Page.ok(JSON_TYPE, MODELS))
            .page(
                "/api/v1/credits",
                // What a proxy in front of the API might do: echo the request's credentials.
                FakeSite.Page.of(
                    401,
                    JSON_TYPE,
                    "{\"error\":{\"message\":\"No auth credentials found\",\"code\":401,"
                        + "\"metadata\":{\"authorization\":\"Bearer "
                        + KEY
                        + "\"}}}"))
            .page(
                "/api/v1/key",
                FakeSite.Page.ok(
                    JSON_TYPE,
                    "{\"data\":{\"label\":\"" + KEY + "\",\"limit\":null,\"usage\":25.5}}"));
    String config =
        """
        http:
          port: 0
        telemetry:
          record_content: true
        openrouter:
          base_url: %s/api/v1
        """
            .formatted(site.url());
    host =
        Host.builder(HostConfig.parse(config, "openrouter.yaml"))
            .environment(Map.of("OPENROUTER_API_KEY", KEY))
            .spanProcessor(SimpleSpanProcessor.create(spans))
            .build();
    host.registry().registerAll(MethodTools.of(new CarelessTools(), "builtin:test"));
    base = host.start();
  }

  private HttpResponse<String> invoke(String tool, String body) throws Exception {
    return CLIENT.send(
        HttpRequest.newBuilder(base.resolve("/v1/tools/" + tool + "/invoke"))
            .header("Content-Type", "application/json")
            .timeout(Duration.ofSeconds(60))
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private JsonNode invokeOk(String tool, String body) throws Exception {
    HttpResponse<String> response = invoke(tool, body);
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    return JSON.readTree(response.body());
  }

  private static String sessionBody(String arguments) {
    return "{\"session_id\": \"" + SESSION + "\", \"arguments\": " + arguments + "}";
  }

  @Test
  void theModelListOfMegabytesComesBackAsAnIndexWhoseChunksGiveItBackWhole() throws Exception {
    start();

    JsonNode result = invokeOk("list_models", sessionBody("{}"));

    assertThat(result.get("is_error").asBoolean()).isFalse();
    String index = result.get("content").asString();
    assertThat(index)
        .startsWith(
            "Tool result for 'list_models' is large ("
                + ResultChunker.chars(MODELS.length())
                + " chars) and has been split into ")
        .containsPattern("\\| #\\s+\\| Heading\\s+\\| Key");
    List<String> keys = new ArrayList<>();
    Matcher key = CHUNK_KEY.matcher(index);
    while (key.find()) {
      keys.add(key.group(1));
    }
    // 2.5 MB in chunks of at most 64,000 characters.
    assertThat(keys)
        .hasSizeGreaterThanOrEqualTo(MODELS.length() / 64_000)
        .allMatch(k -> k.startsWith("session/" + SESSION + "/tool-list_models-"));
    StringBuilder whole = new StringBuilder(MODELS.length());
    for (String chunkKey : keys) {
      JsonNode chunk =
          invokeOk("get_from_working_memory", sessionBody("{\"key\": \"" + chunkKey + "\"}"));
      assertThat(chunk.get("is_error").asBoolean()).as(chunk.toString()).isFalse();
      assertThat(chunk.get("content").asString().length()).isLessThanOrEqualTo(64_000);
      whole.append(chunk.get("content").asString());
    }
    assertThat(whole.length()).isEqualTo(MODELS.length());
    assertThat(whole.toString()).isEqualTo(MODELS);
    assertThat(JSON.readTree(whole.toString()).get("data").size())
        .isEqualTo(JSON.readTree(MODELS).get("data").size());
  }

  @Test
  void withoutASessionTheModelListIsCutAndSaysSo() throws Exception {
    start();

    String content = invokeOk("list_models", "{\"arguments\": {}}").get("content").asString();

    assertThat(content)
        .startsWith(MODELS.substring(0, 64_000))
        .endsWith(
            "[result truncated — "
                + ResultChunker.chars(MODELS.length() - 64_000)
                + " chars omitted]");
  }

  @Test
  void theKeyIsInNoAnswerNoLogLineAndNoSpanEvenWhereTheServerEchoesIt() throws Exception {
    start();
    LoggerFactory.getLogger(HostOpenRouterTest.class).warn("The log is captured from here on.");
    List<String> answers = new ArrayList<>();

    HttpResponse<String> refused = invoke("get_credits", sessionBody("{}"));
    HttpResponse<String> echoed = invoke("get_api_key_info", sessionBody("{}"));
    HttpResponse<String> models = invoke("list_models", sessionBody("{}"));
    answers.add(refused.body());
    answers.add(echoed.body());
    answers.add(models.body());
    Matcher chunk = CHUNK_KEY.matcher(JSON.readTree(models.body()).get("content").asString());
    while (chunk.find()) {
      answers.add(
          invoke("get_from_working_memory", sessionBody("{\"key\": \"" + chunk.group(1) + "\"}"))
              .body());
    }
    answers.add(invoke("get_api_key", sessionBody("{\"key_hash\": \"../credits\"}")).body());
    answers.add(
        CLIENT
            .send(
                HttpRequest.newBuilder(base.resolve("/v1/tools")).build(),
                HttpResponse.BodyHandlers.ofString())
            .body());
    // Read before the host closes: closing shuts the exporter down, which empties it.
    List<SpanData> recorded = spans.getFinishedSpanItems();
    host.close();
    host = null;

    // The key was in play: sent to the API on every call.
    assertThat(site.takeRequests())
        .hasSize(3)
        .allSatisfy(
            request -> assertThat(request.header("Authorization")).isEqualTo("Bearer " + KEY));
    JsonNode error = JSON.readTree(refused.body());
    assertThat(error.get("is_error").asBoolean()).isTrue();
    assertThat(error.get("content").asString())
        .isEqualTo(
            "OpenRouter API error 401 for '/credits': {\"error\":{\"message\":\"No auth credentials"
                + " found\",\"code\":401,\"metadata\":{\"authorization\":\"Bearer"
                + " [REDACTED:OPENROUTER_API_KEY]\"}}}. The key in OPENROUTER_API_KEY is missing,"
                + " invalid or revoked.");
    assertThat(JSON.readTree(echoed.body()).get("content").asString())
        .isEqualTo(
            "{\"data\":{\"label\":\"[REDACTED:OPENROUTER_API_KEY]\",\"limit\":null,\"usage\":25.5}}");
    assertThat(answers).hasSizeGreaterThan(40).noneMatch(answer -> answer.contains(KEY));
    String logged = log.toString(StandardCharsets.UTF_8);
    assertThat(logged).contains("The log is captured from here on.").doesNotContain(KEY);
    assertThat(recorded)
        .extracting(SpanData::getName)
        .contains("execute_tool get_credits", "execute_tool list_models");
    assertThat(recorded).allSatisfy(span -> assertThat(everything(span)).doesNotContain(KEY));
    // The spans do record content: the redacted error is there, so a key would have been too.
    assertThat(recorded)
        .anySatisfy(
            span -> assertThat(everything(span)).contains("Bearer [REDACTED:OPENROUTER_API_KEY]"));
  }

  @Test
  void theSecretsExtensionKnowsTheKeyByItsVariablesNameAndRedactsItFromAnyTool() throws Exception {
    start();

    JsonNode leaked = invokeOk("leak", "{\"arguments\": {}}");
    List<SpanData> recorded = spans.getFinishedSpanItems();
    host.close();
    host = null;

    assertThat(leaked.get("content").asString())
        .startsWith("handed key: [REDACTED:OPENROUTER_API_KEY]")
        .doesNotContain(KEY);
    assertThat(log.toString(StandardCharsets.UTF_8))
        .contains("A secret (OPENROUTER_API_KEY, " + KEY.length() + " chars")
        .doesNotContain(KEY);
    assertThat(recorded).extracting(SpanData::getName).contains("execute_tool leak");
    assertThat(recorded).allSatisfy(span -> assertThat(everything(span)).doesNotContain(KEY));
  }

  /** Everything a span holds that could carry a value: its name, attributes, events, status. */
  private static String everything(SpanData span) {
    StringBuilder all = new StringBuilder(span.getName()).append('\n');
    all.append(span.getAttributes()).append('\n');
    for (EventData event : span.getEvents()) {
      all.append(event.getName()).append(' ').append(event.getAttributes()).append('\n');
    }
    all.append(span.getStatus().getDescription()).append('\n');
    all.append(span.getResource().getAttributes()).append('\n');
    span.getLinks().forEach(link -> all.append(link.getAttributes()).append('\n'));
    return all.toString();
  }

  @Test
  void theToolsAreTheHostsOfSourceBuiltinOpenRouterAndServedOverMcp() throws Exception {
    start();

    JsonNode listed =
        JSON.readTree(
            CLIENT
                .send(
                    HttpRequest.newBuilder(base.resolve("/v1/tools")).build(),
                    HttpResponse.BodyHandlers.ofString())
                .body());
    List<String> openRouter = new ArrayList<>();
    for (JsonNode tool : listed.get("tools")) {
      if (tool.get("source").asString().equals("builtin:openrouter")) {
        openRouter.add(tool.at("/function/name").asString());
      }
    }
    assertThat(openRouter).containsExactlyInAnyOrderElementsOf(OPENROUTER_TOOLS);
    assertThat(host.guides().orElseThrow().all())
        .extracting(ToolGuide::name)
        .contains("openrouter");

    McpSyncClient client =
        McpClient.sync(
                HttpClientStreamableHttpTransport.builder(base.toString())
                    .endpoint("/mcp/main")
                    .jsonMapper(new JacksonMcpJsonMapper(JsonMapper.shared()))
                    .build())
            .requestTimeout(Duration.ofSeconds(30))
            .build();
    try {
      client.initialize();
      assertThat(client.listTools().tools())
          .extracting(McpSchema.Tool::name)
          .containsAll(OPENROUTER_TOOLS);
      McpSchema.CallToolResult credits =
          client.callTool(
              McpSchema.CallToolRequest.builder("get_credits").arguments(Map.of()).build());
      assertThat(credits.isError()).isTrue();
      assertThat(((McpSchema.TextContent) credits.content().getFirst()).text())
          .startsWith("OpenRouter API error 401 for '/credits': ")
          .doesNotContain(KEY);
    } finally {
      client.closeGracefully();
    }
  }

  /**
   * OpenRouter's model list in its own compact form, at least {@code length} characters: models
   * with ids, names, descriptions, context lengths, architecture, prices as strings and supported
   * parameters, from a fixed seed.
   */
  static String models(int length) {
    Random random = new Random(42);
    String[] vendors = {
      "openai",
      "anthropic",
      "google",
      "meta-llama",
      "mistralai",
      "qwen",
      "deepseek",
      "x-ai",
      "cohere",
      "nousresearch",
      "microsoft",
      "amazon"
    };
    String[] families = {"chat", "instruct", "coder", "vision", "reasoner", "mini", "pro", "flash"};
    String[] words = {
      "a",
      "model",
      "tuned",
      "for",
      "long",
      "context",
      "reasoning",
      "and",
      "tool",
      "use",
      "with",
      "strong",
      "multilingual",
      "coding",
      "ability",
      "that",
      "follows",
      "instructions",
      "well",
      "in",
      "chat",
      "agents",
      "summaries",
      "the",
      "latest",
      "release",
      "of",
      "its",
      "family"
    };
    String[] parameters = {
      "tools",
      "tool_choice",
      "max_tokens",
      "temperature",
      "top_p",
      "reasoning",
      "include_reasoning",
      "structured_outputs",
      "response_format",
      "stop",
      "frequency_penalty",
      "presence_penalty",
      "seed"
    };
    ObjectNode root = JSON.createObjectNode();
    ArrayNode data = root.putArray("data");
    int size = 12;
    for (int i = 0; size < length; i++) {
      String vendor = vendors[random.nextInt(vendors.length)];
      String family = families[random.nextInt(families.length)];
      String id = vendor + "/" + family + "-" + (i / 7 + 1) + "." + (i % 7);
      ObjectNode model = data.addObject();
      model.put("id", id);
      model.put("canonical_slug", id + "-2025" + String.format(Locale.ROOT, "%04d", i % 1231));
      model.put("name", vendor + ": " + family + " " + (i / 7 + 1) + "." + (i % 7));
      model.put("created", 1_700_000_000L + i * 3_600L);
      StringBuilder description = new StringBuilder();
      for (int w = 0; w < 120 + random.nextInt(80); w++) {
        description.append(w == 0 ? "" : " ").append(words[random.nextInt(words.length)]);
      }
      model.put("description", description.append('.').toString());
      int context = 4_096 << random.nextInt(8);
      model.put("context_length", context);
      ObjectNode architecture = model.putObject("architecture");
      architecture.put("modality", random.nextBoolean() ? "text->text" : "text+image->text");
      architecture.putArray("input_modalities").add("text").add("image");
      architecture.putArray("output_modalities").add("text");
      architecture.put(
          "tokenizer", vendor.substring(0, 1).toUpperCase(Locale.ROOT) + vendor.substring(1));
      architecture.putNull("instruct_type");
      ObjectNode pricing = model.putObject("pricing");
      pricing.put(
          "prompt",
          String.format(Locale.ROOT, "%.8f", random.nextInt(3_000) / 1e8).replaceAll("0+$", ""));
      pricing.put(
          "completion",
          String.format(Locale.ROOT, "%.8f", random.nextInt(9_000) / 1e8).replaceAll("0+$", ""));
      pricing.put("request", "0");
      pricing.put("image", "0");
      pricing.put("web_search", "0");
      pricing.put("internal_reasoning", "0");
      ObjectNode top = model.putObject("top_provider");
      top.put("context_length", context);
      top.put("max_completion_tokens", Math.min(context, 16_384));
      top.put("is_moderated", random.nextBoolean());
      model.putNull("per_request_limits");
      ArrayNode supported = model.putArray("supported_parameters");
      for (String parameter : parameters) {
        if (random.nextInt(3) > 0) {
          supported.add(parameter);
        }
      }
      model.putObject("default_parameters");
      size += JSON.writeValueAsString(model).length() + 1;
    }
    return JSON.writeValueAsString(root);
  }
}
