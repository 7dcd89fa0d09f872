package dev.toolhost.agent;

import java.util.Objects;
import java.util.Optional;

/**
 * A run result is how one run of the agent loop ended: the final text, why it stopped, and what it
 * took.
 *
 * @param text the model's last text (empty when it gave none)
 * @param stop why the run stopped
 * @param steps how many model requests it made
 * @param toolCalls how many tool calls it executed
 * @param usage the tokens its model requests took, summed over those whose server reported them;
 *     empty when none did. Runs of other agents it called (agents as tools, subagents) are not
 *     included: each is a run of its own.
 */
public record RunResult(
    String text, Stop stop, int steps, int toolCalls, Optional<TokenUsage> usage) {

  public RunResult {
    Objects.requireNonNull(text, "text");
    Objects.requireNonNull(stop, "stop");
    Objects.requireNonNull(usage, "usage");
  }

  /** Why a run stopped. */
  public enum Stop {
    /** The model answered without calling a tool. */
    COMPLETED,
    /** The run used its last step and the model still called tools. */
    MAX_STEPS,
    /** The run's deadline passed; the stream and the running tools were stopped. */
    TIMEOUT,
    /** The caller cancelled; the stream and the running tools were stopped. */
    CANCELLED,
    /** The model called {@code skip}: the turn ended on purpose, with no message for the user. */
    SKIPPED
  }
}
