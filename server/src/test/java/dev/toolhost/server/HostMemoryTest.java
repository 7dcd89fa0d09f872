package dev.toolhost.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.core.MethodTools;
import dev.toolhost.core.Tool;
import dev.toolhost.core.ToolGuide;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSpec;
import dev.toolhost.host.HostConfig;
import dev.toolhost.memory.RedisWorkingMemory;
import dev.toolhost.memory.WorkingMemory;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * Drives large tool results and service search through a real host's HTTP API on a free port:
 * results chunked into working memory (in-process, and the Redis on 127.0.0.1:6379) and read back
 * chunk by chunk with {@code get_from_working_memory}.
 */
@Timeout(60)
class HostMemoryTest {

  /** How long the large result is, in characters. */
  static final int LARGE = 500_000;

  private static final Pattern CHUNK_KEY = Pattern.compile("`(session/[^`]+-chunk\\d+)`");
  private static final Pattern INDEX_KEY = Pattern.compile("`(session/[^`]+-index)`");
  private static final HttpClient CLIENT =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private static final JsonMapper JSON = JsonMapper.builder().build();

  /** Tools of source {@code builtin:test} that return long markdown. */
  public static final class LargeTools {
    @Tool(description = "Returns a report of 500,000 characters of markdown.")
    public String report() {
      return markdown(LARGE);
    }

    @Tool(description = "Returns a report of 30,000 characters of markdown.")
    public String summary() {
      return markdown(30_000);
    }
  }

  private Host host;
  private URI base;

  @AfterEach
  void closeHost() {
    if (host != null) {
      host.close();
    }
  }

  @AfterAll
  static void closeClient() {
    CLIENT.close();
  }

  private void start(String yaml) {
    host = Host.builder(HostConfig.parse(yaml, "memory-test.yaml")).environment(Map.of()).build();
    host.registry().registerAll(MethodTools.of(new LargeTools(), "builtin:test"));
    base = host.start();
  }

  @Test
  void aLargeResultComesBackAsAnIndexWhoseChunksGiveBackTheContent() throws Exception {
    start("http: {port: 0}\n");

    assertChunkedAndReadBack("session-in-process");
  }

  @Test
  void aLargeResultIsChunkedIntoRedisAndReadBackFromIt() throws Exception {
    String prefix = "toolhost-test:" + UUID.randomUUID() + ":";
    start(
        """
        http: {port: 0}
        memory:
          store: redis
          redis_uri: redis://127.0.0.1:6379
          key_prefix: "%s"
        """
            .formatted(prefix));
    try {
      assertThat(host.service(WorkingMemory.class).orElseThrow())
          .isInstanceOf(RedisWorkingMemory.class);

      assertChunkedAndReadBack("session-redis");

      try (RedisWorkingMemory redis =
          RedisWorkingMemory.connect(URI.create("redis://127.0.0.1:6379"), prefix)) {
        assertThat(redis.list("session/session-redis/")).isNotEmpty();
      }
    } finally {
      host.service(WorkingMemory.class).orElseThrow().removeAll("");
    }
  }

  private void assertChunkedAndReadBack(String session) throws Exception {
    String content = markdown(LARGE);

    JsonNode result = invoke("report", "{\"session_id\": \"" + session + "\"}");

    assertThat(result.get("is_error").asBoolean()).isFalse();
    String index = result.get("content").asString();
    assertThat(index)
        .startsWith("Tool result for 'report' is large (500 000 chars) and has been split into ")
        .contains("| # | Heading");
    List<String> keys = new ArrayList<>();
    Matcher key = CHUNK_KEY.matcher(index);
    while (key.find()) {
      keys.add(key.group(1));
    }
    // 500,000 characters in chunks of at most 64,000, packed section by section.
    assertThat(keys).hasSizeBetween(8, 10).allMatch(k -> k.startsWith("session/" + session + "/"));
    List<String> chunks = new ArrayList<>();
    for (String chunkKey : keys) {
      JsonNode chunk = invoke("get_from_working_memory", body(session, chunkKey));
      assertThat(chunk.get("is_error").asBoolean()).as(chunkKey).isFalse();
      chunks.add(chunk.get("content").asString());
    }
    // Each chunk is an exact slice, in order, with only the blank line between two chunks left
    // out: the generated document has exactly one blank line wherever a chunk can start.
    int at = 0;
    for (String chunk : chunks) {
      assertThat(chunk.length()).isLessThanOrEqualTo(64_000);
      int found = content.indexOf(chunk, at);
      assertThat(content.substring(at, found)).isBlank();
      at = found + chunk.length();
    }
    assertThat(content.substring(at)).isBlank();
    assertThat(String.join("\n", chunks)).isEqualTo(content);

    Matcher indexKey = INDEX_KEY.matcher(index);
    assertThat(indexKey.find()).isTrue();
    JsonNode outline = invoke("get_from_working_memory", body(session, indexKey.group(1)));
    long headings = content.lines().filter(line -> line.matches("#{1,3} .*")).count();
    assertThat(outline.get("content").asString())
        .startsWith("## Document Outline")
        .contains("- **Family 0** → `" + keys.getFirst() + "`");
    assertThat(outline.get("content").asString().lines().filter(l -> l.contains("- **")).count())
        .isEqualTo(headings);
  }

  @Test
  void theModelInTheInvokeBodyChoosesItsOwnThreshold() throws Exception {
    start(
        """
        http: {port: 0}
        memory:
          chunking:
            models: {small-model: 10000}
        """);

    JsonNode large = invoke("summary", "{\"session_id\": \"s\"}");
    JsonNode small = invoke("summary", "{\"session_id\": \"s\", \"model\": \"small-model\"}");

    assertThat(large.get("content").asString()).isEqualTo(markdown(30_000));
    assertThat(small.get("content").asString())
        .startsWith("Tool result for 'summary' is large (30 000 chars) and has been split into 2");
  }

  @Test
  void aResultWithoutASessionIsCutAtTheThreshold() throws Exception {
    start("http: {port: 0}\n");

    String content = invoke("report", "{}").get("content").asString();

    assertThat(content)
        .startsWith(markdown(LARGE).substring(0, 64_000))
        .endsWith("[result truncated — 436 000 chars omitted]");
  }

  @Test
  void servicesSearchFindsToolServicesAndRemoteGroupsFromTheRegistry() throws Exception {
    start("http: {port: 0}\n");
    host.registry()
        .register(
            new ToolSpec(
                "create_invoice",
                "Creates an invoice for a customer.",
                (ObjectNode) JSON.readTree("{\"type\": \"object\"}"),
                "service:billing"),
            (call, arguments) -> ToolResult.success("ok"));

    HttpResponse<String> found = get("/v1/services/search?q=customer%20invoice");
    HttpResponse<String> none = get("/v1/services/search?q=weather%20forecast");

    assertThat(found.statusCode()).isEqualTo(200);
    JsonNode results = JSON.readTree(found.body()).get("results");
    assertThat(results).hasSize(1);
    assertThat(results.get(0).get("id").asString()).isEqualTo("billing");
    assertThat(results.get(0).get("type").asString()).isEqualTo("service");
    assertThat(results.get(0).get("summary").asString())
        .isEqualTo("Tool service billing: Creates an invoice for a customer.");
    assertThat(results.get(0).get("relevance_score").asDouble()).isEqualTo(1.0);
    assertThat(results.get(0).get("top_tools").get(0).asString()).isEqualTo("create_invoice");
    assertThat(none.body()).isEqualTo("{\"results\":[]}");
    JsonNode tool = invoke("search_known_services", "{\"arguments\": {\"query\": \"invoice\"}}");
    assertThat(JSON.readTree(tool.get("content").asString()).at("/results/0/id").asString())
        .isEqualTo("billing");
  }

  @Test
  void servicesSearchWithoutAQueryIsABadRequest() throws Exception {
    start("http: {port: 0}\n");

    HttpResponse<String> missing = get("/v1/services/search");
    HttpResponse<String> blank = get("/v1/services/search?q=%20");
    HttpResponse<String> post =
        CLIENT.send(
            HttpRequest.newBuilder(base.resolve("/v1/services/search?q=x"))
                .POST(HttpRequest.BodyPublishers.noBody())
                .build(),
            HttpResponse.BodyHandlers.ofString());

    assertThat(missing.statusCode()).isEqualTo(400);
    assertThat(JSON.readTree(missing.body()).at("/error/code").asString())
        .isEqualTo("invalid_request");
    assertThat(JSON.readTree(missing.body()).at("/error/message").asString())
        .contains("'q' is required");
    assertThat(blank.statusCode()).isEqualTo(400);
    assertThat(post.statusCode()).isEqualTo(405);
  }

  @Test
  void servicesSearchNeedsTheTokenWhenTheHostHasOne() throws Exception {
    start("http: {port: 0, token: s3cret}\n");

    HttpResponse<String> without = get("/v1/services/search?q=invoice");
    HttpResponse<String> with =
        CLIENT.send(
            HttpRequest.newBuilder(base.resolve("/v1/services/search?q=invoice"))
                .header("Authorization", "Bearer s3cret")
                .build(),
            HttpResponse.BodyHandlers.ofString());

    assertThat(without.statusCode()).isEqualTo(401);
    assertThat(with.statusCode()).isEqualTo(200);
  }

  @Test
  void theBuiltinsCanBeTurnedOff() {
    start("http: {port: 0}\nbuiltins: {memory: false, search: false}\n");

    assertThat(host.registry().find("get_from_working_memory")).isEmpty();
    assertThat(host.registry().find("search_known_services")).isEmpty();
    assertThat(host.guides().orElseThrow().all())
        .extracting(ToolGuide::name)
        .doesNotContain("working-memory", "service-search");
  }

  private static String body(String session, String key) {
    return "{\"session_id\": \"" + session + "\", \"arguments\": {\"key\": \"" + key + "\"}}";
  }

  private JsonNode invoke(String tool, String body) throws Exception {
    HttpResponse<String> response =
        CLIENT.send(
            HttpRequest.newBuilder(base.resolve("/v1/tools/" + tool + "/invoke"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    return JSON.readTree(response.body());
  }

  private HttpResponse<String> get(String path) throws Exception {
    return CLIENT.send(
        HttpRequest.newBuilder(base.resolve(path)).build(), HttpResponse.BodyHandlers.ofString());
  }

  /**
   * Markdown of exactly {@code length} characters ending in a line break: an H1 every eight
   * sections, an H2 and a paragraph per section (about 1,200 characters), one blank line between
   * blocks.
   */
  static String markdown(int length) {
    StringBuilder doc = new StringBuilder(length + 2000);
    for (int section = 0; doc.length() < length; section++) {
      if (section % 8 == 0) {
        doc.append("# Family ").append(section / 8).append("\n\n");
      }
      doc.append("## Variant ").append(section).append("\n\n");
      for (int p = 0; p < 8; p++) {
        doc.append("Paragraph ")
            .append(p)
            .append(": input tokens cost 0.5 per million, output tokens 1.5 per million.\n\n");
      }
    }
    doc.setLength(length - 1);
    // Ends in a line that is not blank, as a chunk does.
    if (doc.charAt(length - 2) == '\n') {
      doc.setCharAt(length - 2, '.');
    }
    return doc.append('\n').toString();
  }
}
