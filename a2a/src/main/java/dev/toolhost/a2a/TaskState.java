package dev.toolhost.a2a;

import java.util.Optional;

/**
 * A task state is where an A2A task stands, with its name in each version: {@code completed} in
 * 0.3, {@code TASK_STATE_COMPLETED} in 1.0.
 */
public enum TaskState {
  SUBMITTED("submitted", "TASK_STATE_SUBMITTED"),
  WORKING("working", "TASK_STATE_WORKING"),
  INPUT_REQUIRED("input-required", "TASK_STATE_INPUT_REQUIRED"),
  AUTH_REQUIRED("auth-required", "TASK_STATE_AUTH_REQUIRED"),
  COMPLETED("completed", "TASK_STATE_COMPLETED"),
  CANCELED("canceled", "TASK_STATE_CANCELED"),
  FAILED("failed", "TASK_STATE_FAILED"),
  REJECTED("rejected", "TASK_STATE_REJECTED"),
  UNKNOWN("unknown", "TASK_STATE_UNSPECIFIED");

  private final String v03;
  private final String v10;

  TaskState(String v03, String v10) {
    this.v03 = v03;
    this.v10 = v10;
  }

  /** The state's name in the given version. */
  public String wireName(A2aVersion version) {
    return version == A2aVersion.V1_0 ? v10 : v03;
  }

  /** The 0.3 name, as results shown to a model use it: {@code input-required}. */
  public String shown() {
    return v03;
  }

  /** Whether the task has ended and will not change again. */
  public boolean terminal() {
    return this == COMPLETED || this == CANCELED || this == FAILED || this == REJECTED;
  }

  /** Whether the task waits for its caller: more input, or credentials. */
  public boolean interrupted() {
    return this == INPUT_REQUIRED || this == AUTH_REQUIRED;
  }

  /** The state of either version's name; empty when neither names one. */
  public static Optional<TaskState> fromWireName(String name) {
    for (TaskState state : values()) {
      if (state.v03.equals(name) || state.v10.equals(name)) {
        return Optional.of(state);
      }
    }
    if (name.equals("cancelled") || name.equals("TASK_STATE_CANCELLED")) {
      return Optional.of(CANCELED);
    }
    return Optional.empty();
  }
}
