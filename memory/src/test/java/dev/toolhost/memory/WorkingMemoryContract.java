package dev.toolhost.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.toolhost.core.DispatchStage;
import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import dev.toolhost.core.ToolSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * The contract every working memory keeps, written once and run against each implementation: the
 * store itself, its tools, and a large tool result chunked into it through a real dispatcher.
 */
@Timeout(60)
abstract class WorkingMemoryContract {

  private static final Duration LONG = Duration.ofMinutes(5);
  private static final Pattern CHUNK_KEY = Pattern.compile("`(session/[^`]+-chunk\\d+)`");
  private static final Pattern INDEX_KEY = Pattern.compile("`(session/[^`]+-index)`");

  /** A unique session per test, so that tests never see each other's entries. */
  protected final String session = "test-" + UUID.randomUUID();

  protected final String namespace = WorkingMemory.sessionNamespace(session);
  protected WorkingMemory memory;
  private final ToolRegistry registry = new ToolRegistry();
  private ToolDispatcher dispatcher;

  /** A new, empty store for one test; it is closed after the test. */
  protected abstract WorkingMemory open();

  @BeforeEach
  void setUp() {
    memory = open();
    registry.registerAll(new WorkingMemoryTools(memory).tools());
    dispatcher =
        ToolDispatcher.builder()
            .interceptor(DispatchStage.RESULT_SHAPING, new ResultChunker(memory))
            .build();
  }

  @AfterEach
  void tearDown() {
    try {
      memory.removeAll(namespace);
      memory.removeAll("session/other-" + session);
      assertThat(memory.list(namespace)).isEmpty();
    } finally {
      memory.close();
    }
  }

  private ToolResult call(String tool, String arguments) {
    return dispatcher.dispatch(
        ToolSet.of(registry, ToolProfiles.MAIN),
        ToolCall.of(tool, arguments).withSessionId(session));
  }

  private static String json(String key, String value) {
    ObjectNode node = JsonMapper.shared().createObjectNode();
    node.put(key, value);
    return node.toString();
  }

  private static ErrorCode code(ToolResult result) {
    assertThat(result).isInstanceOf(ToolResult.Failure.class);
    return ((ToolResult.Failure) result).error().code();
  }

  // ---- The store ----

  @Test
  void storedTextComesBackWithItsCategoryAndExpiry() {
    Instant before = Instant.now();
    memory.put(namespace + "/emails", "Three unread emails.", LONG, "inbox");

    MemoryEntry entry = memory.get(namespace + "/emails").orElseThrow();

    assertThat(entry.key()).isEqualTo(namespace + "/emails");
    assertThat(entry.value()).isEqualTo("Three unread emails.");
    assertThat(entry.category()).isEqualTo("inbox");
    assertThat(entry.storedAt()).isBetween(before.minusSeconds(1), Instant.now().plusSeconds(1));
    assertThat(Duration.between(entry.storedAt(), entry.expiresAt())).isEqualTo(LONG);
  }

  @Test
  void aKeyWithoutCategoryIsGeneralAndPuttingAgainReplaces() {
    memory.put(namespace + "/note", "first", LONG);
    memory.put(namespace + "/note", "second", LONG);

    assertThat(memory.get(namespace + "/note").orElseThrow().category()).isEqualTo("general");
    assertThat(memory.get(namespace + "/note").orElseThrow().value()).isEqualTo("second");
    assertThat(memory.list(namespace)).hasSize(1);
  }

  @Test
  void textOfAnyKindSurvivesExactly() {
    String text = "line 1\n\ttab \"quotes\" \\ back — dash 😀 emoji\r\n{\"json\": [1, 2]}\u0000end";
    memory.put(namespace + "/odd key: *?[x]", text, LONG, "odd/category");

    assertThat(memory.get(namespace + "/odd key: *?[x]").orElseThrow().value()).isEqualTo(text);
    assertThat(memory.list(namespace + "/odd key: *?")).hasSize(1);
    assertThat(memory.list(namespace + "/odd key: *?[y")).isEmpty();
  }

  @Test
  void anEntryIsGoneOnceItsTimeToLiveHasPassed() throws InterruptedException {
    // Two seconds: long enough to be read back before it lapses on a busy machine.
    memory.put(namespace + "/short", "brief", Duration.ofSeconds(2), "tool-result");
    memory.put(namespace + "/long", "stays", LONG, "tool-result");
    assertThat(memory.get(namespace + "/short")).isPresent();

    Instant deadline = Instant.now().plusSeconds(10);
    while (memory.get(namespace + "/short").isPresent() && Instant.now().isBefore(deadline)) {
      Thread.sleep(50);
    }

    assertThat(memory.get(namespace + "/short")).isEmpty();
    assertThat(memory.list(namespace))
        .extracting(MemoryEntry::key)
        .containsExactly(namespace + "/long");
    assertThat(memory.search(namespace, "brief", 5)).isEmpty();
  }

  @Test
  void namespacesKeepSessionsApartAndListingIsInKeyOrder() {
    String other = "session/other-" + session;
    memory.put(namespace + "/b", "2", LONG, "x");
    memory.put(namespace + "/a", "1", LONG, "x");
    memory.put(namespace + "/a/deeper", "3", LONG, "x");
    memory.put(other + "/a", "elsewhere", LONG, "x");

    assertThat(memory.list(namespace + "/"))
        .extracting(MemoryEntry::key)
        .containsExactly(namespace + "/a", namespace + "/a/deeper", namespace + "/b");
    assertThat(memory.list(other + "/"))
        .extracting(MemoryEntry::value)
        .containsExactly("elsewhere");
    assertThat(memory.removeAll(namespace + "/a")).isEqualTo(2);
    assertThat(memory.remove(namespace + "/b")).isTrue();
    assertThat(memory.remove(namespace + "/b")).isFalse();
    assertThat(memory.list(namespace)).isEmpty();
    assertThat(memory.get(other + "/a")).isPresent();
  }

  @Test
  void searchRanksEntriesByTheirTextKeyAndCategory() {
    memory.put(
        namespace + "/pricing", "Model pricing: tokens cost money per million.", LONG, "notes");
    memory.put(namespace + "/limits", "Context windows and token limits.", LONG, "notes");
    memory.put(namespace + "/weather", "Sunny tomorrow.", LONG, "forecast");

    List<MemoryMatch> matches = memory.search(namespace + "/", "pricing per million", 10);
    List<MemoryMatch> byCategory = memory.search(namespace + "/", "forecast", 10);

    assertThat(matches).extracting(m -> m.entry().key()).containsExactly(namespace + "/pricing");
    assertThat(matches.get(0).relevance()).isEqualTo(1.0);
    assertThat(byCategory).extracting(m -> m.entry().key()).containsExactly(namespace + "/weather");
  }

  @Test
  void badArgumentsAreRefused() {
    assertThatThrownBy(() -> memory.put(" ", "v", LONG, "c"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> memory.put(namespace + "/k", "v", Duration.ZERO, "c"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> memory.put(namespace + "/k", "v", LONG, ""))
        .isInstanceOf(IllegalArgumentException.class);
  }

  // ---- The tools ----

  @Test
  void aRelativeKeyIsUnderTheCallersSessionAndAFullKeyMustBeInIt() {
    memory.put(namespace + "/notes", "session notes", LONG, "notes");
    memory.put("session/other-" + session + "/shared", "shared text", LONG, "notes");
    String otherKey = "session/other-" + session + "/shared";
    String missingKey = "session/other-" + session + "/never-stored";

    assertThat(call("get_from_working_memory", json("key", "notes")).text())
        .isEqualTo("session notes");
    assertThat(call("get_from_working_memory", json("key", namespace + "/notes")).text())
        .isEqualTo("session notes");
    // Another session's entry does not exist for this one: it answers as a missing key does.
    ToolResult other = call("get_from_working_memory", json("key", otherKey));
    ToolResult missing = call("get_from_working_memory", json("key", missingKey));
    assertThat(code(other)).isEqualTo(ErrorCode.INVALID_ARGUMENTS);
    assertThat(other.text())
        .doesNotContain("shared text")
        .isEqualTo(missing.text().replace(missingKey, otherKey));
  }

  @Test
  void aMissingOrExpiredKeyIsAnErrorThatSaysSo() throws InterruptedException {
    memory.put(namespace + "/brief", "gone soon", Duration.ofMillis(200), "tool-result");
    Instant deadline = Instant.now().plusSeconds(10);
    while (memory.get(namespace + "/brief").isPresent() && Instant.now().isBefore(deadline)) {
      Thread.sleep(50);
    }

    ToolResult missing = call("get_from_working_memory", json("key", "never-stored"));
    ToolResult expired = call("get_from_working_memory", json("key", "brief"));

    assertThat(code(missing)).isEqualTo(ErrorCode.INVALID_ARGUMENTS);
    assertThat(missing.text())
        .contains("working memory has no entry at key '" + namespace + "/never-stored'")
        .contains("expired")
        .contains("list_working_memory");
    assertThat(code(expired)).isEqualTo(ErrorCode.INVALID_ARGUMENTS);
    assertThat(expired.text()).contains("'" + namespace + "/brief'");
  }

  @Test
  void withoutASessionNoEntryCanBeRead() {
    memory.put(namespace + "/notes", "session notes", LONG, "notes");
    ToolSet set = ToolSet.of(registry, ToolProfiles.MAIN);

    ToolResult relative =
        dispatcher.dispatch(set, ToolCall.of("get_from_working_memory", json("key", "notes")));
    ToolResult full =
        dispatcher.dispatch(
            set, ToolCall.of("get_from_working_memory", json("key", namespace + "/notes")));
    ToolResult list = dispatcher.dispatch(set, ToolCall.of("list_working_memory", "{}"));

    assertThat(relative.text()).contains("this call has no session");
    assertThat(code(full)).isEqualTo(ErrorCode.INVALID_ARGUMENTS);
    assertThat(full.text()).doesNotContain("session notes").contains("this call has no session");
    assertThat(code(list)).isEqualTo(ErrorCode.INVALID_ARGUMENTS);
  }

  @Test
  void listingShowsTheSessionsEntriesAndFiltersByCategory() {
    memory.put(namespace + "/a", "x".repeat(1234), LONG, "tool-result");
    memory.put(namespace + "/b", "y", LONG, "notes/pricing");
    memory.put("session/other-" + session + "/c", "z", LONG, "notes");

    String all = call("list_working_memory", "{}").text();
    String notes = call("list_working_memory", json("category", "notes")).text();
    String none = call("list_working_memory", json("category", "nothing")).text();

    assertThat(all)
        .startsWith("This session's working memory (2 entries):")
        .contains("| `" + namespace + "/a` | tool-result | 1 234 chars | 4m 5")
        .contains("| `" + namespace + "/b` | notes/pricing | 1 chars |")
        .doesNotContain("other-");
    assertThat(notes).contains(namespace + "/b").doesNotContain(namespace + "/a`");
    assertThat(none).isEqualTo("This session's working memory has no entry in category 'nothing'.");
  }

  @Test
  void searchingTheSessionNamesTheBestKeysWithSnippets() {
    memory.put(namespace + "/pricing", "Model pricing:\n tokens cost money.", LONG, "notes");
    memory.put(namespace + "/weather", "Sunny.", LONG, "notes");
    memory.put("session/other-" + session + "/pricing", "Other pricing.", LONG, "notes");

    String found = call("search_working_memory", json("query", "pricing")).text();
    String nothing = call("search_working_memory", json("query", "kubernetes")).text();

    assertThat(found)
        .isEqualTo(
            "1 entry matches 'pricing', best first:\n- `"
                + namespace
                + "/pricing` (notes, relevance 1.0): Model pricing: tokens cost money.");
    assertThat(nothing).isEqualTo("Nothing in this session's working memory matches 'kubernetes'.");
    assertThat(call("search_working_memory", json("query", " ")).isError()).isTrue();
  }

  // ---- Tool results chunked into this store ----

  /** About 500,000 characters of markdown: sections, subsections, paragraphs and a code block. */
  static String largeMarkdown() {
    StringBuilder doc = new StringBuilder("Model catalogue, generated for the test.\n\n");
    for (int model = 0; model < 60; model++) {
      doc.append("# Model ").append(model).append("\n\n");
      doc.append("## Pricing\n\n");
      for (int p = 0; p < 30; p++) {
        doc.append("Paragraph ")
            .append(p)
            .append(" of model ")
            .append(model)
            .append(": ")
            .append("tokens cost money per million, ".repeat(8))
            .append("\n\n");
      }
      doc.append("### Token limits\n\n```\n# not a heading\nlimit = 128000\n```\n\n");
      doc.append("| tier | price |\n|---|---|\n| base | 1 |\n\n");
    }
    return doc.toString();
  }

  @Test
  void aLargeResultComesBackAsAnIndexAndEveryChunkCanBeRead() {
    String content = largeMarkdown();
    assertThat(content.length()).isBetween(480_000, 520_000);
    registry.register(
        new ToolSpec(
            "list_models",
            "Lists models.",
            (ObjectNode) JsonMapper.shared().readTree("{\"type\": \"object\"}"),
            "mcp:catalogue"),
        (c, a) -> ToolResult.success(content));

    ToolResult result = call("list_models", "{}");

    String index = result.text();
    assertThat(result.isError()).isFalse();
    assertThat(index)
        .startsWith(
            "Tool result for 'list_models' is large ("
                + ResultChunker.chars(content.length())
                + " chars) and has been split into ")
        .contains(
            " chunk(s) stored in working memory.\nA document outline is stored at key `"
                + namespace
                + "/tool-list_models-")
        .contains(
            "-index` — retrieve it with get_from_working_memory to navigate the content by section heading.\n")
        .contains(
            "Call get_from_working_memory(key) for each relevant chunk BEFORE drawing conclusions.\n\n| # ")
        // The text before the first heading starts the first chunk, packed with the sections
        // after it.
        .contains("| 0 | Part 0 ");
    assertThat(index.length()).isLessThan(content.length() / 10);

    List<String> keys = new ArrayList<>();
    Matcher chunkKeys = CHUNK_KEY.matcher(index);
    while (chunkKeys.find()) {
      keys.add(chunkKeys.group(1));
    }
    assertThat(index).contains("split into " + keys.size() + " chunk(s)");
    // About 500,000 characters in chunks of up to 64,000, small sections packed together.
    assertThat(keys).hasSizeBetween(8, 10);
    StringBuilder joined = new StringBuilder();
    for (String key : keys) {
      ToolResult chunk = call("get_from_working_memory", json("key", key));
      assertThat(chunk.isError()).as(key).isFalse();
      // Never chunked again, although chunks are as long as the threshold allows.
      assertThat(chunk.text()).doesNotStartWith("Tool result for");
      assertThat(chunk.text().length()).isLessThanOrEqualTo(64_000);
      joined.append(chunk.text());
    }
    assertThat(ContentChunkerTest.withoutBlankLines(joined.toString()))
        .isEqualTo(ContentChunkerTest.withoutBlankLines(content));

    Matcher indexKey = INDEX_KEY.matcher(index);
    assertThat(indexKey.find()).isTrue();
    String outline = call("get_from_working_memory", json("key", indexKey.group(1))).text();
    assertThat(outline)
        .startsWith("## Document Outline\n\n- **Part 0** → `")
        .contains("\n- **Model 0** → `")
        .contains("\n  - **Pricing** → `")
        .contains("\n    - **Token limits** → `");
    MemoryEntry stored = memory.get(keys.get(0)).orElseThrow();
    assertThat(stored.category()).isEqualTo("tool-result");
    assertThat(Duration.between(stored.storedAt(), stored.expiresAt()))
        .isEqualTo(Duration.ofMinutes(20));
    assertThat(memory.list(namespace + "/")).hasSize(keys.size() + 1);
  }
}
