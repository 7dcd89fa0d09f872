package dev.toolhost.bus;

/**
 * A bus-closed exception says the message bus was closed by its owner: unlike a lost connection, it
 * will not come back, so nothing waits for it.
 */
public final class BusClosedException extends BusException {
  private static final long serialVersionUID = 1L;

  /** An exception saying the bus is closed. */
  public BusClosedException() {
    super("The message bus is closed.");
  }
}
