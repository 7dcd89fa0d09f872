package dev.toolhost.a2a;

/**
 * An A2A exception is a JSON-RPC error: one a remote agent answered (its code and message as it
 * sent them), or one the server answers a request with. Its message never holds a credential.
 */
public final class A2aException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final int code;

  /** An error with the given JSON-RPC code and message. */
  public A2aException(int code, String message) {
    super(message, null, false, false);
    this.code = code;
  }

  /** An error of a known kind with a message that says what was wrong. */
  public A2aException(A2aError error, String message) {
    this(error.code(), message);
  }

  /** The JSON-RPC error code. */
  public int code() {
    return code;
  }
}
