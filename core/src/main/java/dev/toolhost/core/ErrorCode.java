package dev.toolhost.core;

/**
 * An error code is the closed set of ways a tool call can fail, each with a stable wire name,
 * whether a retry may help, and a safe default message for the model.
 *
 * <p>Wire names never change once released; they are what remote workers, the HTTP API and the MCP
 * gateway put on the wire.
 */
public enum ErrorCode {
  TOOL_NOT_FOUND("tool_not_found", false, "No tool by that name is available."),
  INVALID_ARGUMENTS(
      "invalid_arguments", false, "The arguments do not match the tool's parameters schema."),
  EXECUTION_FAILED("execution_failed", false, "The tool failed while running."),
  TIMEOUT("timeout", true, "The tool did not finish before its deadline."),
  CANCELLED("cancelled", false, "The call was cancelled before the tool finished."),
  UNAVAILABLE("unavailable", true, "The tool is temporarily unavailable.");

  private final String wireName;
  private final boolean retryable;
  private final String defaultMessage;

  ErrorCode(String wireName, boolean retryable, String defaultMessage) {
    this.wireName = wireName;
    this.retryable = retryable;
    this.defaultMessage = defaultMessage;
  }

  /** The lower_snake name used on the wire, such as {@code tool_not_found}. */
  public String wireName() {
    return wireName;
  }

  /** Whether calling again, unchanged, may succeed. */
  public boolean retryable() {
    return retryable;
  }

  /** A message safe to show the model when the tool gives none of its own. */
  public String defaultMessage() {
    return defaultMessage;
  }

  /**
   * Returns the code with the given wire name.
   *
   * @throws IllegalArgumentException naming the unknown wire name
   */
  public static ErrorCode fromWireName(String wireName) {
    for (ErrorCode code : values()) {
      if (code.wireName.equals(wireName)) {
        return code;
      }
    }
    throw new IllegalArgumentException("Unknown tool error code '" + wireName + "'.");
  }
}
