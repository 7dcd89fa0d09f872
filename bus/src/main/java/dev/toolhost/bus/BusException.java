package dev.toolhost.bus;

/**
 * A bus exception says the message bus could not do what was asked: it is not connected, the broker
 * refused, or the connection was lost while a request waited for its reply.
 *
 * <p>Its message is safe to show an operator: it never holds a password.
 */
public class BusException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** An exception with a message. */
  public BusException(String message) {
    super(message);
  }

  /** An exception with a message and its cause. */
  public BusException(String message, Throwable cause) {
    super(message, cause);
  }
}
