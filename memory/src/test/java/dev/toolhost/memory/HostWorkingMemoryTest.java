package dev.toolhost.memory;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.core.MethodTools;
import dev.toolhost.core.Tool;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolGuide;
import dev.toolhost.core.ToolResult;
import dev.toolhost.testing.TestHost;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Drives large tool results through a host's dispatcher, as an agent's calls arrive: results
 * chunked into working memory (in-process, and the Redis on 127.0.0.1:6379) and read back chunk by
 * chunk with {@code get_from_working_memory}; the built-ins can be turned off.
 */
@Timeout(60)
class HostWorkingMemoryTest {

  /** How long the large result is, in characters. */
  static final int LARGE = 500_000;

  private static final Pattern CHUNK_KEY = Pattern.compile("`(session/[^`]+-chunk\\d+)`");
  private static final Pattern INDEX_KEY = Pattern.compile("`(session/[^`]+-index)`");

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

  private TestHost host;

  @AfterEach
  void closeHost() {
    if (host != null) {
      host.close();
    }
  }

  /** A host of the class path's extensions (working memory and service search) and the tools. */
  private void start(String yaml) {
    host = TestHost.builder().config(yaml).start();
    host.runtime().registry().registerAll(MethodTools.of(new LargeTools(), "builtin:test"));
  }

  @Test
  void aLargeResultComesBackAsAnIndexWhoseChunksGiveBackTheContent() throws Exception {
    start("");

    assertChunkedAndReadBack("session-in-process");
  }

  @Test
  void aLargeResultIsChunkedIntoRedisAndReadBackFromIt() throws Exception {
    String prefix = "toolhost-test:" + UUID.randomUUID() + ":";
    start(
        """
        memory:
          store: redis
          redis_uri: redis://127.0.0.1:6379
          key_prefix: "%s"
        """
            .formatted(prefix));
    try {
      assertThat(host.runtime().service(WorkingMemory.class).orElseThrow())
          .isInstanceOf(RedisWorkingMemory.class);

      assertChunkedAndReadBack("session-redis");

      try (RedisWorkingMemory redis =
          RedisWorkingMemory.connect(URI.create("redis://127.0.0.1:6379"), prefix)) {
        assertThat(redis.list("session/session-redis/")).isNotEmpty();
      }
    } finally {
      host.runtime().service(WorkingMemory.class).orElseThrow().removeAll("");
    }
  }

  private void assertChunkedAndReadBack(String session) throws Exception {
    String content = markdown(LARGE);

    ToolResult result = call(ToolCall.of("report", "{}").withSessionId(session));

    assertThat(result.isError()).isFalse();
    String index = result.text();
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
      ToolResult chunk = call(read(session, chunkKey));
      assertThat(chunk.isError()).as(chunkKey).isFalse();
      chunks.add(chunk.text());
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
    String outline = call(read(session, indexKey.group(1))).text();
    long headings = content.lines().filter(line -> line.matches("#{1,3} .*")).count();
    assertThat(outline)
        .startsWith("## Document Outline")
        .contains("- **Family 0** → `" + keys.getFirst() + "`");
    assertThat(outline.lines().filter(l -> l.contains("- **")).count()).isEqualTo(headings);
  }

  @Test
  void theModelInTheInvokeBodyChoosesItsOwnThreshold() throws Exception {
    start(
        """
        memory:
          chunking:
            models: {small-model: 10000}
        """);

    ToolResult large = call(ToolCall.of("summary", "{}").withSessionId("s"));
    ToolResult small =
        call(ToolCall.of("summary", "{}").withSessionId("s").withModel("small-model"));

    assertThat(large.text()).isEqualTo(markdown(30_000));
    assertThat(small.text())
        .startsWith("Tool result for 'summary' is large (30 000 chars) and has been split into 2");
  }

  @Test
  void aResultWithoutASessionIsCutAtTheThreshold() throws Exception {
    start("");

    String content = call(ToolCall.of("report", "{}")).text();

    assertThat(content)
        .startsWith(markdown(LARGE).substring(0, 64_000))
        .endsWith("[result truncated — 436 000 chars omitted]");
  }

  @Test
  void theBuiltinsCanBeTurnedOff() {
    start("builtins: {memory: false, search: false}\n");

    assertThat(host.runtime().registry().find("get_from_working_memory")).isEmpty();
    assertThat(host.runtime().registry().find("search_known_services")).isEmpty();
    assertThat(host.runtime().guides().orElseThrow().all())
        .extracting(ToolGuide::name)
        .doesNotContain("working-memory", "service-search");
  }

  private static ToolCall read(String session, String key) {
    return ToolCall.of("get_from_working_memory", "{\"key\": \"" + key + "\"}")
        .withSessionId(session);
  }

  private ToolResult call(ToolCall call) {
    return host.runtime().dispatcher().dispatch(host.runtime().toolSet("main"), call);
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
