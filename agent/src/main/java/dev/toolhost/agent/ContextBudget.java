package dev.toolhost.agent;

import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * A context budget is how much of its model's context window an agent's requests may fill: the
 * window in tokens, the share of it past which the history is compacted, and how many recent turns
 * keep their tool results whole.
 *
 * <p>The window is the configured one, or else the one known for the model's name ({@link
 * #knownWindow}), or else {@link #UNKNOWN_MODEL_WINDOW}: a conservative default, since a model that
 * refuses a request as too long is recovered anyway, while one that silently cuts its input (as
 * some local servers do) is not. Immutable.
 *
 * @param window the model's context window in tokens, when configured
 * @param compactAt the share of the window (0.1 to 0.95) past which the history is compacted; the
 *     rest is left for the answer
 * @param toolResultTurns how many of the latest turns keep their tool results whole; older results
 *     are replaced by their working-memory key and a one-line digest
 */
public record ContextBudget(Optional<Integer> window, double compactAt, int toolResultTurns) {

  /** The window assumed for a model the table does not know: 32,768 tokens. */
  public static final int UNKNOWN_MODEL_WINDOW = 32_768;

  /** The default share of the window past which the history is compacted: 0.75. */
  public static final double DEFAULT_COMPACT_AT = 0.75;

  /** The default number of turns whose tool results stay whole: 3. */
  public static final int DEFAULT_TOOL_RESULT_TURNS = 3;

  /** The window looked up by model name, compaction at 75%, tool results whole for 3 turns. */
  public static final ContextBudget DEFAULT =
      new ContextBudget(Optional.empty(), DEFAULT_COMPACT_AT, DEFAULT_TOOL_RESULT_TURNS);

  /** The smallest window accepted, in tokens. */
  public static final int MIN_WINDOW = 1_024;

  public ContextBudget {
    Objects.requireNonNull(window, "window");
    if (window.filter(tokens -> tokens < MIN_WINDOW).isPresent()) {
      throw new IllegalArgumentException(
          "A context window must be at least " + MIN_WINDOW + " tokens, not " + window.get());
    }
    if (!(compactAt >= 0.1 && compactAt <= 0.95)) {
      throw new IllegalArgumentException(
          "The share of the window past which the history is compacted must be 0.1 to 0.95, not "
              + compactAt);
    }
    if (toolResultTurns < 0) {
      throw new IllegalArgumentException(
          "The turns that keep their tool results whole must be 0 or more, not " + toolResultTurns);
    }
  }

  /** This budget with the given window, in tokens. */
  public ContextBudget withWindow(int tokens) {
    return new ContextBudget(Optional.of(tokens), compactAt, toolResultTurns);
  }

  /** This budget compacting past the given share of the window. */
  public ContextBudget withCompactAt(double share) {
    return new ContextBudget(window, share, toolResultTurns);
  }

  /** This budget keeping the tool results of the given number of latest turns whole. */
  public ContextBudget withToolResultTurns(int turns) {
    return new ContextBudget(window, compactAt, turns);
  }

  /** The window for the model: the configured one, the known one, or the unknown model's. */
  public int windowFor(String model) {
    return window.orElseGet(() -> knownWindow(model).orElse(UNKNOWN_MODEL_WINDOW));
  }

  /**
   * The context window of a well-known model, by its name as an OpenAI-compatible server takes it
   * ({@code gpt-4o-mini}, {@code openai/gpt-4.1}, {@code llama3.1:8b}, {@code
   * Qwen/Qwen2.5-7B-Instruct}); empty for a name the table does not know. A vendor prefix ({@code
   * openai/}) is ignored, the longest known prefix of the rest wins.
   */
  public static OptionalInt knownWindow(String model) {
    String name = model.toLowerCase(Locale.ROOT);
    name = name.substring(name.lastIndexOf('/') + 1);
    Known best = null;
    for (Known known : KNOWN) {
      if (name.startsWith(known.prefix())
          && (best == null || known.prefix().length() > best.prefix().length())) {
        best = known;
      }
    }
    return best == null ? OptionalInt.empty() : OptionalInt.of(best.window());
  }

  private record Known(String prefix, int window) {}

  // Published context lengths; a served model may be set to less (Ollama defaults to a few
  // thousand tokens whatever the model allows): configure context_window for those.
  private static final List<Known> KNOWN =
      List.of(
          new Known("gpt-3.5-turbo", 16_385),
          new Known("gpt-4", 8_192),
          new Known("gpt-4-32k", 32_768),
          new Known("gpt-4-turbo", 128_000),
          new Known("gpt-4-1106", 128_000),
          new Known("gpt-4-0125", 128_000),
          new Known("gpt-4o", 128_000),
          new Known("chatgpt-4o", 128_000),
          new Known("gpt-4.1", 1_047_576),
          new Known("gpt-4.5", 128_000),
          new Known("gpt-5", 400_000),
          new Known("gpt-oss", 131_072),
          new Known("o1", 200_000),
          new Known("o1-mini", 128_000),
          new Known("o3", 200_000),
          new Known("o4-mini", 200_000),
          new Known("claude", 200_000),
          new Known("gemini-1.5", 1_048_576),
          new Known("gemini-2", 1_048_576),
          new Known("llama3", 8_192),
          new Known("llama-3", 8_192),
          new Known("meta-llama-3", 8_192),
          new Known("llama3.1", 131_072),
          new Known("llama-3.1", 131_072),
          new Known("meta-llama-3.1", 131_072),
          new Known("llama3.2", 131_072),
          new Known("llama-3.2", 131_072),
          new Known("llama3.3", 131_072),
          new Known("llama-3.3", 131_072),
          new Known("qwen2.5", 32_768),
          new Known("qwen3", 32_768),
          new Known("mistral-large", 131_072),
          new Known("mistral-small", 32_768),
          new Known("mistral-nemo", 131_072),
          new Known("mistral", 32_768),
          new Known("mixtral", 32_768),
          new Known("deepseek", 65_536),
          new Known("gemma2", 8_192),
          new Known("gemma3", 131_072),
          new Known("phi3", 4_096),
          new Known("phi4", 16_384));
}
