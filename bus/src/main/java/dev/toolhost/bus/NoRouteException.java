package dev.toolhost.bus;

/**
 * A no-route exception says a message sent to a queue reached no queue, or a queue nobody consumes:
 * nobody would ever handle it. It is thrown at once, not at a timeout.
 */
public final class NoRouteException extends BusException {
  private static final long serialVersionUID = 1L;

  /** An exception naming the queue. */
  public NoRouteException(String queue) {
    super("No consumer for queue '" + queue + "'.");
  }
}
