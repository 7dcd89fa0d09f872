package dev.toolhost.agent;

/**
 * A token count is how many tokens a request (or a part of one) takes, and whether that number is
 * exact (counted with the model's own tokenizer) or an estimate.
 *
 * @param tokens the number of tokens
 * @param estimate whether the number is an estimate rather than the model tokenizer's count
 */
public record TokenCount(int tokens, boolean estimate) {

  public TokenCount {
    if (tokens < 0) {
      throw new IllegalArgumentException("A token count is 0 or more, not " + tokens);
    }
  }

  /** {@code 1234 tokens}, or {@code about 1234 tokens (estimated)}. */
  @Override
  public String toString() {
    return estimate ? "about " + tokens + " tokens (estimated)" : tokens + " tokens";
  }
}
