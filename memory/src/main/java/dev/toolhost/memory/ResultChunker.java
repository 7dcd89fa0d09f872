package dev.toolhost.memory;

import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolInterceptor;
import dev.toolhost.core.ToolResult;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The result chunker is the step of the dispatch path that keeps large tool results out of the
 * conversation: a successful result longer than the threshold of the model in use is split into
 * chunks stored in working memory, and the model gets a compact index of them instead.
 *
 * <p>It runs at the dispatch chain's {@link dev.toolhost.core.DispatchStage#RESULT_SHAPING} stage,
 * so it applies to every tool whatever its source, after leak scanning has seen the whole result.
 * For a result of tool {@code name} in session {@code s}, with run id {@code r} (eight random hex
 * digits), the chunks ({@link ContentChunker}, each at most the larger of the threshold and 20,000
 * characters) are stored under {@code session/s/tool-name-r-chunk0}, {@code ...-chunk1} and so on,
 * and the document outline ({@link ContentChunker#outline}) under {@code
 * session/s/tool-name-r-index}, all in category {@code tool-result} for 20 minutes. The model
 * reads:
 *
 * <pre>
 * Tool result for 'list_models' is large (462 000 chars) and has been split into 23 chunk(s) stored in working memory.
 * A document outline is stored at key `session/abc123/tool-list_models-a1b2c3d4-index` — retrieve it with get_from_working_memory to navigate the content by section heading.
 * Call get_from_working_memory(key) for each relevant chunk BEFORE drawing conclusions.
 *
 * | # | Heading | Key                                              |
 * |---|---------|--------------------------------------------------|
 * | 0 | Part 0  | `session/abc123/tool-list_models-a1b2c3d4-chunk0` |
 * </pre>
 *
 * <p>Failures pass through untouched, and so do results of the working memory tools (source {@code
 * builtin:memory}), which are never chunked again. A call with no session, or a working memory that
 * fails to store, gets the result cut at the threshold, followed by {@code [result truncated — N
 * chars omitted]}. Thread-safe.
 */
public final class ResultChunker implements ToolInterceptor {

  /** The category of stored chunks and outlines. */
  public static final String CATEGORY = "tool-result";

  private static final Logger LOG = LoggerFactory.getLogger(ResultChunker.class);

  private final WorkingMemory memory;
  private final Config config;

  /** A chunker into the given working memory with the default thresholds. */
  public ResultChunker(WorkingMemory memory) {
    this(memory, Config.builder().build());
  }

  /** A chunker into the given working memory with the given thresholds. */
  public ResultChunker(WorkingMemory memory, Config config) {
    this.memory = Objects.requireNonNull(memory, "memory");
    this.config = Objects.requireNonNull(config, "config");
  }

  /**
   * The configuration of result chunking: the threshold by model, the least chunk length and how
   * long chunks live.
   *
   * @param defaultThreshold the longest result, in characters, passed through whole to a model with
   *     no threshold of its own (64,000: about 16,000 tokens, right for a model with a context of
   *     120,000 tokens or more)
   * @param modelThresholds thresholds by model name, as {@link ToolCall#model()} gives it; lower
   *     them for small-context models
   * @param minimumChunkLength the least maximum chunk length (20,000), so that a low threshold does
   *     not make many tiny chunks; chunks are at most the larger of this and the threshold
   * @param ttl how long chunks and outlines stay in working memory (20 minutes)
   */
  public record Config(
      int defaultThreshold,
      Map<String, Integer> modelThresholds,
      int minimumChunkLength,
      Duration ttl) {

    /** The default threshold: 64,000 characters. */
    public static final int DEFAULT_THRESHOLD = 64_000;

    /** The default least chunk length: 20,000 characters. */
    public static final int MINIMUM_CHUNK_LENGTH = 20_000;

    /** The default time to live of chunks: 20 minutes. */
    public static final Duration TTL = Duration.ofMinutes(20);

    public Config {
      modelThresholds = Map.copyOf(modelThresholds);
      Objects.requireNonNull(ttl, "ttl");
      if (defaultThreshold < 1 || minimumChunkLength < 2) {
        throw new IllegalArgumentException(
            "The threshold must be positive and the minimum chunk length at least 2.");
      }
      modelThresholds.forEach(
          (model, threshold) -> {
            if (threshold < 1) {
              throw new IllegalArgumentException(
                  "The threshold of model '"
                      + model
                      + "' must be positive, not "
                      + threshold
                      + ".");
            }
          });
      if (ttl.isNegative() || ttl.isZero()) {
        throw new IllegalArgumentException("The time to live must be positive, not " + ttl + ".");
      }
    }

    /** A builder starting from the defaults. */
    public static Builder builder() {
      return new Builder();
    }

    /** The threshold for the given model: its own, or the default. */
    public int thresholdFor(Optional<String> model) {
      return model.map(modelThresholds::get).orElse(defaultThreshold);
    }

    /** The longest chunk for the given model: the larger of its threshold and the minimum. */
    public int chunkLengthFor(Optional<String> model) {
      return Math.max(thresholdFor(model), minimumChunkLength);
    }

    /** A builder of a {@link Config}. */
    public static final class Builder {
      private int defaultThreshold = DEFAULT_THRESHOLD;
      private final Map<String, Integer> modelThresholds = new HashMap<>();
      private int minimumChunkLength = MINIMUM_CHUNK_LENGTH;
      private Duration ttl = TTL;

      private Builder() {}

      /** The threshold for models with none of their own. */
      public Builder defaultThreshold(int characters) {
        this.defaultThreshold = characters;
        return this;
      }

      /** The threshold for one model, by the name calls carry in {@link ToolCall#model()}. */
      public Builder threshold(String model, int characters) {
        modelThresholds.put(Objects.requireNonNull(model, "model"), characters);
        return this;
      }

      /** The least maximum chunk length. */
      public Builder minimumChunkLength(int characters) {
        this.minimumChunkLength = characters;
        return this;
      }

      /** How long chunks live. */
      public Builder ttl(Duration ttl) {
        this.ttl = Objects.requireNonNull(ttl, "ttl");
        return this;
      }

      /**
       * Builds the configuration.
       *
       * @throws IllegalArgumentException when a threshold is not positive
       */
      public Config build() {
        return new Config(defaultThreshold, modelThresholds, minimumChunkLength, ttl);
      }
    }
  }

  @Override
  public ToolResult intercept(Chain chain) {
    ToolResult result = chain.proceed(chain.call());
    if (!(result instanceof ToolResult.Success success)
        || WorkingMemoryTools.SOURCE.equals(chain.spec().source())) {
      return result;
    }
    ToolCall call = chain.call();
    int threshold = config.thresholdFor(call.model());
    String content = success.content();
    if (content.length() <= threshold) {
      return result;
    }
    Optional<String> session = call.sessionId().filter(id -> !id.isBlank());
    if (content.isBlank()) {
      // Nothing to chunk: the chunker makes no chunk of blank text.
      return ToolResult.success(truncate(content, threshold));
    }
    if (session.isEmpty()) {
      LOG.warn(
          "Truncated the {}-char result of tool '{}': the call has no session to chunk it into",
          content.length(),
          call.toolName());
      return ToolResult.success(truncate(content, threshold));
    }
    try {
      return ToolResult.success(store(call, session.get(), content));
    } catch (RuntimeException e) {
      LOG.warn(
          "Truncated the {}-char result of tool '{}': working memory failed to store its chunks",
          content.length(),
          call.toolName(),
          e);
      return ToolResult.success(truncate(content, threshold));
    }
  }

  private String store(ToolCall call, String session, String content) {
    List<ContentChunker.Chunk> chunks =
        new ContentChunker(config.chunkLengthFor(call.model())).chunk(content);
    String base =
        WorkingMemory.sessionNamespace(session)
            + "/tool-"
            + keySegment(call.toolName())
            + "-"
            + UUID.randomUUID().toString().substring(0, 8);
    Stored stored = store(memory, base, chunks, config.ttl(), CATEGORY);
    LOG.info(
        "Chunked the {}-char result of tool '{}' into {} chunk(s) under {}",
        content.length(),
        call.toolName(),
        chunks.size(),
        base);
    return index(call.toolName(), content.length(), chunks, stored.keys(), stored.indexKey());
  }

  /**
   * Where chunks were stored.
   *
   * @param keys each chunk's key, in order
   * @param indexKey the outline's key
   */
  public record Stored(List<String> keys, String indexKey) {
    public Stored {
      keys = List.copyOf(keys);
      Objects.requireNonNull(indexKey, "indexKey");
    }
  }

  /**
   * Stores chunks in working memory under {@code base-chunk0}, {@code base-chunk1} and so on, and
   * their outline ({@link ContentChunker#outline}) under {@code base-index}; the one way chunked
   * content is laid out, for tool results and for any extension that chunks content of its own.
   */
  public static Stored store(
      WorkingMemory memory,
      String base,
      List<ContentChunker.Chunk> chunks,
      Duration ttl,
      String category) {
    List<String> keys = new ArrayList<>(chunks.size());
    for (int i = 0; i < chunks.size(); i++) {
      String key = base + "-chunk" + i;
      keys.add(key);
      memory.put(key, chunks.get(i).content(), ttl, category);
    }
    String indexKey = base + "-index";
    memory.put(indexKey, ContentChunker.outline(chunks, keys), ttl, category);
    return new Stored(keys, indexKey);
  }

  /** The index table the model reads in place of the result. */
  static String index(
      String toolName,
      int length,
      List<ContentChunker.Chunk> chunks,
      List<String> keys,
      String indexKey) {
    return index("Tool result for '" + toolName + "'", "content", length, chunks, keys, indexKey);
  }

  /**
   * The index table a model reads in place of content stored in chunks: a sentence naming what was
   * split, the outline's key and a table of each chunk's heading and key.
   *
   * @param subject what was split, such as {@code Tool result for 'list_models'} or {@code Page
   *     'https://example.com/'}
   * @param what what the outline navigates, such as {@code content} or {@code page}
   * @param length the length of what was split, in characters
   * @param chunks the chunks
   * @param keys each chunk's key, in order
   * @param indexKey the outline's key
   */
  public static String index(
      String subject,
      String what,
      int length,
      List<ContentChunker.Chunk> chunks,
      List<String> keys,
      String indexKey) {
    List<String> labels = new ArrayList<>(chunks.size());
    List<String> quotedKeys = new ArrayList<>(chunks.size());
    int numberWidth = "#".length();
    int labelWidth = "Heading".length();
    int keyWidth = "Key".length();
    for (int i = 0; i < chunks.size(); i++) {
      String label = chunks.get(i).label(i).replace("|", "\\|");
      String key = "`" + keys.get(i) + "`";
      labels.add(label);
      quotedKeys.add(key);
      numberWidth = Math.max(numberWidth, String.valueOf(i).length());
      labelWidth = Math.max(labelWidth, label.length());
      keyWidth = Math.max(keyWidth, key.length());
    }
    StringBuilder index = new StringBuilder();
    index
        .append(subject)
        .append(" is large (")
        .append(chars(length))
        .append(" chars) and has been split into ")
        .append(chunks.size())
        .append(" chunk(s) stored in working memory.\n")
        .append("A document outline is stored at key `")
        .append(indexKey)
        .append("` — retrieve it with get_from_working_memory to navigate the ")
        .append(what)
        .append(" by section heading.\n")
        .append(
            "Call get_from_working_memory(key) for each relevant chunk BEFORE drawing"
                + " conclusions.\n\n");
    row(index, "#", numberWidth, "Heading", labelWidth, "Key", keyWidth);
    index
        .append("|")
        .append("-".repeat(numberWidth + 2))
        .append("|")
        .append("-".repeat(labelWidth + 2))
        .append("|")
        .append("-".repeat(keyWidth + 2))
        .append("|\n");
    for (int i = 0; i < chunks.size(); i++) {
      row(
          index,
          String.valueOf(i),
          numberWidth,
          labels.get(i),
          labelWidth,
          quotedKeys.get(i),
          keyWidth);
    }
    return index.toString().stripTrailing();
  }

  private static void row(
      StringBuilder out, String a, int aWidth, String b, int bWidth, String c, int cWidth) {
    out.append("| ")
        .append(pad(a, aWidth))
        .append(" | ")
        .append(pad(b, bWidth))
        .append(" | ")
        .append(pad(c, cWidth))
        .append(" |\n");
  }

  private static String pad(String text, int width) {
    return text.length() >= width ? text : text + " ".repeat(width - text.length());
  }

  /** The content cut at the threshold, with how much was cut. */
  static String truncate(String content, int threshold) {
    int cut = threshold;
    if (Character.isHighSurrogate(content.charAt(cut - 1))
        && Character.isLowSurrogate(content.charAt(cut))) {
      cut--;
    }
    return content.substring(0, cut)
        + "\n[result truncated — "
        + chars(content.length() - cut)
        + " chars omitted]";
  }

  /** A count of characters as the seed writes it, thousands apart: {@code 462 000}. */
  public static String chars(long count) {
    String digits = Long.toString(count);
    StringBuilder grouped = new StringBuilder(digits.length() + digits.length() / 3);
    for (int i = 0; i < digits.length(); i++) {
      if (i > 0 && (digits.length() - i) % 3 == 0) {
        grouped.append(' ');
      }
      grouped.append(digits.charAt(i));
    }
    return grouped.toString();
  }

  /** The tool's name as a key segment: letters, digits, '-' and '_', at most 64 characters. */
  private static String keySegment(String toolName) {
    StringBuilder segment = new StringBuilder(Math.min(toolName.length(), 64));
    for (int i = 0; i < toolName.length() && segment.length() < 64; i++) {
      char c = toolName.charAt(i);
      segment.append(Character.isLetterOrDigit(c) || c == '-' || c == '_' ? c : '_');
    }
    return segment.toString();
  }
}
