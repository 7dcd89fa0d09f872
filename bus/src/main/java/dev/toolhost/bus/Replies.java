package dev.toolhost.bus;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Optional;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Replies are what one request gets back, one or several messages with its correlation id, read in
 * the order they arrived.
 *
 * <p>Closing the replies stops listening: a reply that comes later is dropped. When the bus loses
 * its connection, or the broker refuses or cannot route the request, a waiting {@link #next} throws
 * a {@link BusException} saying so ({@link NoRouteException} for no route). Read from one thread at
 * a time.
 */
public final class Replies implements AutoCloseable {

  private final String correlationId;
  private final Correlations owner;
  private final LinkedBlockingQueue<Object> arrived = new LinkedBlockingQueue<>();

  Replies(String correlationId, Correlations owner) {
    this.correlationId = correlationId;
    this.owner = owner;
  }

  /** The correlation id of the request. */
  public String correlationId() {
    return correlationId;
  }

  /**
   * Waits for the next reply until the deadline.
   *
   * @return the reply, or empty when none came by the deadline
   * @throws NoRouteException when the request reached no consumer after all
   * @throws BusException when the connection was lost while waiting, or the broker refused the
   *     request
   * @throws InterruptedException when the waiting thread is interrupted
   */
  public Optional<Message> next(Instant deadline) throws InterruptedException {
    long nanos = Instant.now().until(deadline, ChronoUnit.NANOS);
    Object next = arrived.poll(Math.max(0, nanos), TimeUnit.NANOSECONDS);
    return switch (next) {
      case null -> Optional.empty();
      case Message message -> Optional.of(message);
      case NoRouteException noRoute -> throw noRoute;
      case MessageTooLargeException tooLarge -> throw tooLarge;
      case BusClosedException closed -> throw new BusClosedException();
      case BusException failure -> throw new BusException(failure.getMessage(), failure.getCause());
      default -> throw new IllegalStateException("unexpected " + next);
    };
  }

  void offer(Object replyOrFailure) {
    arrived.add(replyOrFailure);
  }

  /** Stops listening; later replies are dropped. */
  @Override
  public void close() {
    owner.remove(correlationId);
  }
}
