package dev.toolhost.bus;

import java.time.Instant;
import org.slf4j.LoggerFactory;

/**
 * A message bus moves JSON messages between processes: to one consumer of a shared queue (work,
 * with acknowledgement), to every subscriber of a topic (announcements), and as requests with their
 * replies, tied by correlation id.
 *
 * <p>Two implementations: {@link InMemoryBus}, the embedded default, where the whole remote path
 * runs in one process, and the RabbitMQ bus (module {@code toolhost-rabbitmq}). Both pass one
 * contract suite. Thread-safe; every method blocks at most for a broker round trip; none waits for
 * a consumer. Failures are {@link BusException}s; a message that could reach no consumer is a
 * {@link NoRouteException}, thrown at once.
 *
 * <p>A bus has a {@linkplain #maxMessageSize() maximum message size}: it refuses to send a larger
 * body ({@link MessageTooLargeException}, at once), and a larger one that reaches a consumer (sent
 * by another process) is dead-lettered with one log line, never handed to the handler, which hears
 * of it through {@link DeliveryHandler#tooLarge}. A message over the maximum never closes the
 * connection nor comes back.
 */
public interface MessageBus extends AutoCloseable {

  /** The queue that dead-lettered and expired messages of work queues end in. */
  String DEAD_LETTER_QUEUE = "toolhost.dead_letter";

  /**
   * The maximum message size of a bus unless configured: 64 MiB, half of RabbitMQ's default {@code
   * max_message_size} of 128 MiB.
   */
  int DEFAULT_MAX_MESSAGE_SIZE = 64 * 1024 * 1024;

  /** The largest body, in bytes as UTF-8, this bus sends or hands to a consumer. */
  int maxMessageSize();

  /**
   * Declares a durable work queue (idempotent): consumers of it compete, each message goes to one;
   * dead-lettered and expired messages go to {@link #DEAD_LETTER_QUEUE}.
   */
  void declareQueue(String queue);

  /** Deletes a queue and the messages in it; does nothing when there is no such queue. */
  void deleteQueue(String queue);

  /** How many consumers the queue has; 0 when there is no such queue. */
  int consumerCount(String queue);

  /**
   * Sends a message to one consumer of a queue and returns once the bus has taken it (a publisher
   * confirm, on a broker).
   *
   * @throws NoRouteException at once when no such queue exists
   * @throws MessageTooLargeException at once when the body is over the maximum size
   */
  void send(String queue, Message message);

  /**
   * Consumes a queue: the handler gets each delivery and settles it, on that thread or later on
   * another. At most {@code prefetch} deliveries are unsettled at once.
   */
  Subscription consume(String queue, int prefetch, DeliveryHandler handler);

  /** Publishes a message to every current subscriber of a topic; nobody listening is fine. */
  void publish(String topic, Message message);

  /** Subscribes to a topic; deliveries are settled as from {@link #consume}. */
  Subscription subscribe(String topic, DeliveryHandler handler);

  /**
   * Sends a request to a queue with a fresh correlation id and this bus's reply address, and
   * returns the replies as they come. The request expires at the deadline. It may return before the
   * bus has taken the request: a request the bus then refuses or cannot route ends its replies with
   * that failure instead of a reply.
   *
   * @throws NoRouteException at once when the queue does not exist or nobody consumes it
   * @throws MessageTooLargeException at once when the body is over the maximum size
   */
  Replies request(String queue, Message request, Instant deadline);

  /**
   * Sends a reply to a request: to its reply-to address, with its correlation id. A request with no
   * reply-to address, or whose requester has gone, drops the reply.
   */
  void reply(Message request, Message reply);

  /**
   * Replies to a delivered request, as {@link #reply}, and then acknowledges the delivery: never
   * before the bus has the reply. On a broker, the reply is published on the channel the request
   * came on and the acknowledgement follows it there; the broker handles a channel's commands in
   * order, so it routes the reply before it takes the acknowledgement, with no confirm round trip
   * for the worker to wait on. A reply that cannot be sent leaves the delivery unacknowledged, to
   * be delivered again, and is logged; it never throws for that.
   */
  default void replyThenAck(Delivery request, Message reply) {
    try {
      reply(request.message(), reply);
    } catch (BusException e) {
      LoggerFactory.getLogger(MessageBus.class)
          .warn("Could not reply; the request will be delivered again: {}", e.getMessage());
      return;
    }
    request.ack();
  }

  /**
   * Whether messages cross processes through a broker, whose connection may drop and deliver a
   * message again to another consumer; false for a bus inside one process.
   */
  default boolean spansProcesses() {
    return true;
  }

  /** Closes the bus: subscriptions stop, waiting requests fail. May be called more than once. */
  @Override
  void close();

  /** A delivery handler takes one delivery; it must not block for long, and must not throw. */
  @FunctionalInterface
  interface DeliveryHandler {
    /** Handles one delivery, settling it now or later. */
    void handle(Delivery delivery);

    /**
     * Hears of a message the bus did not deliver because its body was over the maximum size: the
     * bus has dead-lettered it and logged it, once. The message has its properties and headers but
     * an empty body. Does nothing unless overridden; must not throw.
     *
     * @param size the body's size in bytes
     */
    default void tooLarge(Message withoutBody, long size) {}
  }
}
