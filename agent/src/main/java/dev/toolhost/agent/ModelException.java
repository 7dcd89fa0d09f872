package dev.toolhost.agent;

/**
 * A model exception says why a model could not answer, in words an operator can act on: a refused
 * key names its environment variable, an unknown model names the model, a malformed chunk is
 * quoted.
 */
public final class ModelException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  private final int status;
  private final boolean contextOverflow;

  /** An exception with the HTTP status that caused it (0 when there was none). */
  public ModelException(String message, int status) {
    this(message, status, false);
  }

  /**
   * An exception with the HTTP status that caused it, saying whether the model refused the request
   * as longer than its context window.
   */
  public ModelException(String message, int status, boolean contextOverflow) {
    super(message);
    this.status = status;
    this.contextOverflow = contextOverflow;
  }

  /** An exception with no HTTP status and a cause. */
  public ModelException(String message, Throwable cause) {
    super(message, cause);
    this.status = 0;
    this.contextOverflow = false;
  }

  /** Whether the model refused the request as longer than its context window. */
  public boolean contextOverflow() {
    return contextOverflow;
  }

  /** The HTTP status that caused this, or 0 when the failure was not an HTTP status. */
  public int status() {
    return status;
  }
}
