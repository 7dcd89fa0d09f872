package dev.toolhost.bus;

/**
 * A delivery is one message handed to one consumer, which must settle it exactly once: acknowledge
 * it (done with) or dead-letter it (never deliver again).
 *
 * <p>A delivery left unsettled when its consumer's subscription closes or its connection drops is
 * delivered again, to any consumer of the queue, with {@link #redelivered()} true. Settling may
 * happen on any thread; settling twice, or after the subscription closed, does nothing.
 */
public interface Delivery {

  /** The message. */
  Message message();

  /** Whether this message was delivered before and not acknowledged. */
  boolean redelivered();

  /** Acknowledges the message: it is removed from its queue. */
  void ack();

  /**
   * Rejects the message for good: it goes to the dead-letter queue {@value
   * MessageBus#DEAD_LETTER_QUEUE}. The reason is for the log; the caller logs it.
   */
  void deadLetter(String reason);
}
