package dev.toolhost.memory;

import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.MethodTools;
import dev.toolhost.core.Param;
import dev.toolhost.core.Tool;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolException;
import dev.toolhost.core.ToolGuide;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Working memory tools let a model read its session's working memory: {@code
 * get_from_working_memory(key)}, {@code list_working_memory} and {@code
 * search_working_memory(query)}, source {@code builtin:memory}.
 *
 * <p>A session's working memory is its own: these tools read only the calling session's namespace,
 * {@code session/{sessionId}/}. A key that contains {@code /} is a full key (the chunk keys of a
 * chunked tool result are full keys) and must lie in that namespace; any other key is read under
 * it. A key of another session or of any other namespace does not exist for the caller: it answers
 * exactly as a key with no entry does, an {@code invalid_arguments} error that says so, and nothing
 * of the other entry is read. A call that has no session has no working memory, and is told so.
 * Results of these tools are never chunked again ({@link ResultChunker} lets them through).
 */
public final class WorkingMemoryTools {

  /** The source of the working memory tools. */
  public static final String SOURCE = "builtin:memory";

  /** How many entries {@code search_working_memory} returns. */
  public static final int SEARCH_RESULTS = 10;

  /** The guide to working memory and chunked tool results. */
  public static final ToolGuide GUIDE =
      ToolGuide.fromResource(
          "working-memory",
          "How to read working memory and large tool results split into chunks.",
          WorkingMemoryTools.class,
          "guides/working-memory.md");

  private static final int SNIPPET = 160;

  private final WorkingMemory memory;

  /** The tools over the given working memory. */
  public WorkingMemoryTools(WorkingMemory memory) {
    this.memory = Objects.requireNonNull(memory, "memory");
  }

  /** The three tools, to register in a registry or bind to a tool set. */
  public List<ExecutableTool> tools() {
    return MethodTools.of(this, SOURCE);
  }

  /**
   * The full key a tool call means: the key itself when it contains {@code /}, else the key under
   * the session's namespace; empty when the key lies outside the session's namespace, for such a
   * key does not exist for the caller.
   *
   * @throws ToolException when the call has no session
   */
  public static Optional<String> resolve(String key, Optional<String> sessionId) {
    String namespace = namespace(sessionId, "working memory is kept per session") + "/";
    if (!key.contains("/")) {
      return Optional.of(namespace + key);
    }
    return key.startsWith(namespace) ? Optional.of(key) : Optional.empty();
  }

  @Tool(
      name = "get_from_working_memory",
      description =
          "Returns the text stored in working memory under a key: a key from a chunked tool"
              + " result's index (a full key, with '/'), or a key of this session's working"
              + " memory.",
      readOnly = true,
      destructive = false,
      idempotent = true,
      openWorld = false)
  public String getFromWorkingMemory(
      @Param(description = "The key, exactly as listed (for example session/abc/tool-x-1-chunk0).")
          String key,
      ToolCall call) {
    if (key.isBlank()) {
      throw ToolException.invalidArguments("key is required.");
    }
    String given = key.strip();
    Optional<String> fullKey = resolve(given, call.sessionId());
    return fullKey
        .flatMap(memory::get)
        .map(MemoryEntry::value)
        // Another session's key answers exactly as a missing one: it does not exist for this one.
        .orElseThrow(
            () ->
                ToolException.invalidArguments(
                    "working memory has no entry at key '"
                        + fullKey.orElse(given)
                        + "': it was never stored there, or it has expired (chunks of tool results"
                        + " expire after 20 minutes). Call list_working_memory to see the keys that"
                        + " exist, or call the tool again for a fresh result."));
  }

  @Tool(
      name = "list_working_memory",
      description =
          "Lists this session's working memory: each entry's key, category, size and time left.",
      readOnly = true,
      destructive = false,
      idempotent = true,
      openWorld = false)
  public String listWorkingMemory(
      @Param(
              description =
                  "Only entries of this category (or its subcategories, such as pricing/2025), for"
                      + " example tool-result.")
          Optional<String> category,
      ToolCall call) {
    String namespace = namespace(call.sessionId(), "working memory is listed per session");
    List<MemoryEntry> entries =
        memory.list(namespace + "/").stream().filter(e -> inCategory(e, category)).toList();
    if (entries.isEmpty()) {
      return category.isPresent()
          ? "This session's working memory has no entry in category '" + category.get() + "'."
          : "This session's working memory is empty.";
    }
    Instant now = Instant.now();
    StringBuilder answer =
        new StringBuilder("This session's working memory (")
            .append(entries.size())
            .append(entries.size() == 1 ? " entry):\n\n" : " entries):\n\n")
            .append("| Key | Category | Size | Expires in |\n|---|---|---|---|\n");
    for (MemoryEntry entry : entries) {
      answer
          .append("| `")
          .append(entry.key())
          .append("` | ")
          .append(entry.category())
          .append(" | ")
          .append(ResultChunker.chars(entry.value().length()))
          .append(" chars | ")
          .append(left(Duration.between(now, entry.expiresAt())))
          .append(" |\n");
    }
    return answer.toString().strip();
  }

  @Tool(
      name = "search_working_memory",
      description =
          "Searches this session's working memory by keywords and returns the best matching"
              + " entries' keys with a snippet of each; read one with get_from_working_memory.",
      readOnly = true,
      destructive = false,
      idempotent = true,
      openWorld = false)
  public String searchWorkingMemory(
      @Param(description = "Keywords to look for, such as \"pricing tiers\".") String query,
      ToolCall call) {
    if (query.isBlank()) {
      throw ToolException.invalidArguments("query is required: give keywords to look for.");
    }
    String namespace = namespace(call.sessionId(), "working memory is searched per session");
    List<MemoryMatch> matches = memory.search(namespace + "/", query, SEARCH_RESULTS);
    if (matches.isEmpty()) {
      return "Nothing in this session's working memory matches '" + query + "'.";
    }
    StringBuilder answer =
        new StringBuilder()
            .append(matches.size())
            .append(matches.size() == 1 ? " entry matches '" : " entries match '")
            .append(query)
            .append("', best first:");
    for (MemoryMatch match : matches) {
      MemoryEntry entry = match.entry();
      answer
          .append("\n- `")
          .append(entry.key())
          .append("` (")
          .append(entry.category())
          .append(", relevance ")
          .append(match.relevance())
          .append("): ")
          .append(snippet(entry.value()));
    }
    return answer.toString();
  }

  private static String namespace(Optional<String> sessionId, String what) {
    return WorkingMemory.sessionNamespace(
        sessionId
            .filter(id -> !id.isBlank())
            .orElseThrow(
                () ->
                    ToolException.invalidArguments(
                        what + ", and this call has no session, so it has no working memory.")));
  }

  private static boolean inCategory(MemoryEntry entry, Optional<String> category) {
    return category
        .map(c -> entry.category().equals(c) || entry.category().startsWith(c + "/"))
        .orElse(true);
  }

  private static String snippet(String value) {
    String head = value.length() > 4 * SNIPPET ? value.substring(0, 4 * SNIPPET) : value;
    String flat = head.strip().replaceAll("\\s+", " ");
    return flat.length() <= SNIPPET ? flat : flat.substring(0, SNIPPET) + "…";
  }

  private static String left(Duration duration) {
    long seconds = Math.max(0, duration.toSeconds());
    if (seconds >= 3600) {
      return seconds / 3600 + "h " + seconds % 3600 / 60 + "m";
    }
    return seconds / 60 + "m " + seconds % 60 + "s";
  }
}
