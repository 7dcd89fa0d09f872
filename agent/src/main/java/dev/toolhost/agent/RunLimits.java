package dev.toolhost.agent;

import java.time.Duration;
import java.util.Objects;

/**
 * Run limits are the guards on one run of the agent loop: how many model steps, how many tool
 * calls, and how long.
 *
 * <p>On the last step the model is asked for an answer with {@code tool_choice: none}; calls past
 * the tool-call limit are answered with an error result, and the next step asks for an answer.
 *
 * @param maxSteps the most model requests one run makes
 * @param maxToolCalls the most tool calls one run executes
 * @param timeout how long one run may take, tools included
 */
public record RunLimits(int maxSteps, int maxToolCalls, Duration timeout) {

  /** Ten steps, thirty tool calls, five minutes. */
  public static final RunLimits DEFAULT = new RunLimits(10, 30, Duration.ofMinutes(5));

  public RunLimits {
    Objects.requireNonNull(timeout, "timeout");
    if (maxSteps < 1) {
      throw new IllegalArgumentException("maxSteps must be at least 1, not " + maxSteps);
    }
    if (maxToolCalls < 0) {
      throw new IllegalArgumentException("maxToolCalls must be 0 or more, not " + maxToolCalls);
    }
    if (timeout.isNegative() || timeout.isZero()) {
      throw new IllegalArgumentException("timeout must be positive, not " + timeout);
    }
  }

  /** These limits with another timeout. */
  public RunLimits withTimeout(Duration timeout) {
    return new RunLimits(maxSteps, maxToolCalls, timeout);
  }
}
