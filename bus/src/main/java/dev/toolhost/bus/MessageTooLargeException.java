package dev.toolhost.bus;

/**
 * A message-too-large exception says a message's body is over the bus's {@linkplain
 * MessageBus#maxMessageSize() maximum size}: the bus refused to send it, at once, or did not hand
 * it to its receiver.
 */
public final class MessageTooLargeException extends BusException {
  private static final long serialVersionUID = 1L;

  private final long size;
  private final long limit;

  /** An exception naming where the message was going, its size and the limit, in bytes. */
  public MessageTooLargeException(String where, long size, long limit) {
    super(
        "A message to '"
            + where
            + "' is "
            + size
            + " bytes, over the message bus's limit of "
            + limit
            + " bytes.");
    this.size = size;
    this.limit = limit;
  }

  /** The body's size in bytes (UTF-8). */
  public long size() {
    return size;
  }

  /** The bus's limit in bytes. */
  public long limit() {
    return limit;
  }
}
