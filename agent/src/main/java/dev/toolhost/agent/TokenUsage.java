package dev.toolhost.agent;

/**
 * A token usage is how many tokens a model spent, as the model's server counted them: the tokens it
 * read (the prompt, tools included) and the tokens it wrote (the answer, tool calls and reasoning
 * included).
 *
 * <p>It is the server's own count ({@code usage.prompt_tokens} and {@code usage.completion_tokens}
 * in the Chat Completions format), never an estimate made here.
 *
 * @param inputTokens the tokens the model read ({@code prompt_tokens})
 * @param outputTokens the tokens the model wrote ({@code completion_tokens})
 */
public record TokenUsage(long inputTokens, long outputTokens) {

  /**
   * A usage of the given counts.
   *
   * @throws IllegalArgumentException when a count is negative
   */
  public TokenUsage {
    if (inputTokens < 0 || outputTokens < 0) {
      throw new IllegalArgumentException(
          "Token counts are 0 or more, not " + inputTokens + " and " + outputTokens);
    }
  }

  /** This usage and another, added up. */
  public TokenUsage plus(TokenUsage other) {
    return new TokenUsage(inputTokens + other.inputTokens, outputTokens + other.outputTokens);
  }
}
