package dev.toolhost.bus;

/**
 * A subscription is one consumer of a queue or topic; closing it stops deliveries, and puts its
 * unsettled deliveries back on the queue for other consumers.
 */
public interface Subscription extends AutoCloseable {
  /** Stops this consumer; may be called more than once. */
  @Override
  void close();
}
