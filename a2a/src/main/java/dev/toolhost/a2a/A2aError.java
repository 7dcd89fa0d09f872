package dev.toolhost.a2a;

/**
 * An A2A error is one JSON-RPC error code the protocol and JSON-RPC define, as the server answers
 * them and the client reads them.
 */
public enum A2aError {
  PARSE_ERROR(-32700, "Invalid JSON payload"),
  INVALID_REQUEST(-32600, "Request payload validation error"),
  METHOD_NOT_FOUND(-32601, "Method not found"),
  INVALID_PARAMS(-32602, "Invalid parameters"),
  INTERNAL_ERROR(-32603, "Internal error"),
  TASK_NOT_FOUND(-32001, "Task not found"),
  TASK_NOT_CANCELABLE(-32002, "Task cannot be canceled"),
  UNSUPPORTED_OPERATION(-32004, "This operation is not supported"),
  VERSION_NOT_SUPPORTED(-32009, "Protocol version is not supported"),
  /**
   * The caller may not talk to the agent (its principal may not use the agent's profile): an
   * implementation-defined server error of JSON-RPC, answered with HTTP 403, as A2A leaves
   * authorization to the transport.
   */
  FORBIDDEN(-32000, "Forbidden");

  private final int code;
  private final String title;

  A2aError(int code, String title) {
    this.code = code;
    this.title = title;
  }

  /** The JSON-RPC error code. */
  public int code() {
    return code;
  }

  /** The error's standard title. */
  public String title() {
    return title;
  }
}
