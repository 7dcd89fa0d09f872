package dev.toolhost.bus;

import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingDeque;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The in-memory bus is the embedded default: queues, topics and replies inside one process, so the
 * whole remote path (remote executor, bus, invoke handler) runs with no broker.
 *
 * <p>It keeps the broker's semantics that the protocol relies on: competing consumers with
 * prefetch, redelivery of unsettled messages when a consumer closes, dead-lettering, expiry, and
 * sends to a missing queue failing at once, and the maximum message size (a body is measured as
 * UTF-8, as a broker would see it). Consumers run on virtual threads. Nothing survives the process.
 */
public final class InMemoryBus implements MessageBus {

  private static final Logger LOG = LoggerFactory.getLogger(InMemoryBus.class);

  private final Map<String, MemoryQueue> queues = new ConcurrentHashMap<>();
  private final Map<String, List<MemoryQueue>> topics = new ConcurrentHashMap<>();
  private final Correlations correlations = new Correlations();
  private final String replyQueue = "toolhost.reply." + UUID.randomUUID();
  private final Subscription replySubscription;
  private final AtomicBoolean closed = new AtomicBoolean();
  private final int maxMessageSize;

  /** A new, empty bus with the {@linkplain #DEFAULT_MAX_MESSAGE_SIZE default maximum size}. */
  public InMemoryBus() {
    this(DEFAULT_MAX_MESSAGE_SIZE);
  }

  /**
   * A new, empty bus.
   *
   * @param maxMessageSize the largest body, in bytes as UTF-8, it sends
   */
  public InMemoryBus(int maxMessageSize) {
    if (maxMessageSize < 1) {
      throw new IllegalArgumentException("The maximum message size must be 1 byte or more.");
    }
    this.maxMessageSize = maxMessageSize;
    queues.put(DEAD_LETTER_QUEUE, new MemoryQueue(DEAD_LETTER_QUEUE));
    queues.put(replyQueue, new MemoryQueue(replyQueue));
    replySubscription =
        consume(
            replyQueue,
            Integer.MAX_VALUE,
            delivery -> {
              delivery.ack();
              correlations.deliver(delivery.message());
            });
  }

  @Override
  public boolean spansProcesses() {
    return false;
  }

  @Override
  public int maxMessageSize() {
    return maxMessageSize;
  }

  @Override
  public void declareQueue(String queue) {
    checkOpen();
    queues.computeIfAbsent(queue, MemoryQueue::new);
  }

  @Override
  public void deleteQueue(String queue) {
    MemoryQueue removed = queues.remove(queue);
    if (removed != null) {
      removed.delete();
    }
  }

  @Override
  public int consumerCount(String queue) {
    MemoryQueue found = queues.get(queue);
    return found == null ? 0 : found.consumers.get();
  }

  @Override
  public void send(String queue, Message message) {
    checkOpen();
    message.checkSize(queue, maxMessageSize);
    MemoryQueue found = queues.get(queue);
    if (found == null) {
      throw new NoRouteException(queue);
    }
    found.put(message, false);
  }

  @Override
  public Subscription consume(String queue, int prefetch, DeliveryHandler handler) {
    checkOpen();
    MemoryQueue found = queues.get(queue);
    if (found == null) {
      throw new BusException("No queue '" + queue + "' to consume.");
    }
    return found.consumer(prefetch, handler, false);
  }

  @Override
  public void publish(String topic, Message message) {
    checkOpen();
    message.checkSize(topic, maxMessageSize);
    for (MemoryQueue subscriber : topics.getOrDefault(topic, List.of())) {
      subscriber.put(message, false);
    }
  }

  @Override
  public Subscription subscribe(String topic, DeliveryHandler handler) {
    checkOpen();
    MemoryQueue own = new MemoryQueue(topic + ".subscriber." + UUID.randomUUID());
    topics.computeIfAbsent(topic, name -> new CopyOnWriteArrayList<>()).add(own);
    Subscription consumer = own.consumer(Integer.MAX_VALUE, handler, true);
    return () -> {
      topics.getOrDefault(topic, List.of()).remove(own);
      consumer.close();
    };
  }

  @Override
  public Replies request(String queue, Message request, Instant deadline) {
    checkOpen();
    request.checkSize(queue, maxMessageSize);
    MemoryQueue found = queues.get(queue);
    if (found == null || found.consumers.get() == 0) {
      throw new NoRouteException(queue);
    }
    Replies replies = correlations.open();
    found.put(
        request
            .withCorrelationId(replies.correlationId())
            .withReplyTo(replyQueue)
            .withExpiration(deadline),
        false);
    return replies;
  }

  @Override
  public void reply(Message request, Message reply) {
    Optional<String> to = request.replyTo();
    MemoryQueue found = to.map(queues::get).orElse(null);
    if (found == null) {
      LOG.debug("Dropped a reply: the request has no reply-to queue, or it is gone");
      return;
    }
    reply.checkSize(to.get(), maxMessageSize);
    Message correlated = request.correlationId().map(reply::withCorrelationId).orElse(reply);
    found.put(correlated, false);
  }

  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    replySubscription.close();
    correlations.failAll(new BusClosedException());
    queues.values().forEach(MemoryQueue::delete);
    topics.values().forEach(list -> list.forEach(MemoryQueue::delete));
  }

  private void checkOpen() {
    if (closed.get()) {
      throw new BusClosedException();
    }
  }

  private void deadLetter(Message message, String queue, String reason) {
    MemoryQueue dead = queues.get(DEAD_LETTER_QUEUE);
    if (dead != null) {
      // As RabbitMQ does: the headers name the first queue and why, and the letter keeps no
      // expiration, or an expired message would expire again in the dead-letter queue.
      Map<String, String> headers = new HashMap<>(message.headers());
      headers.putIfAbsent("x-first-death-queue", queue);
      headers.putIfAbsent("x-first-death-reason", reason);
      dead.put(
          new Message(
              message.body(),
              headers,
              message.correlationId(),
              message.replyTo(),
              Optional.empty(),
              message.propertyHeaders()),
          false);
    }
  }

  private record Entry(Message message, boolean redelivered) {}

  /** One queue: a deque of entries and the virtual threads that consume it. */
  private final class MemoryQueue {
    final String name;
    final LinkedBlockingDeque<Entry> entries = new LinkedBlockingDeque<>();
    final AtomicInteger consumers = new AtomicInteger();
    final Set<Consumer> active = ConcurrentHashMap.newKeySet();

    MemoryQueue(String name) {
      this.name = name;
    }

    void put(Message message, boolean redelivered) {
      entries.add(new Entry(message, redelivered));
    }

    Subscription consumer(int prefetch, DeliveryHandler handler, boolean deleteOnClose) {
      Consumer consumer = new Consumer(this, prefetch, handler, deleteOnClose);
      active.add(consumer);
      consumers.incrementAndGet();
      consumer.thread = Thread.ofVirtual().name("toolhost-bus-" + name).start(consumer::run);
      return consumer;
    }

    void delete() {
      active.forEach(Consumer::close);
      entries.clear();
    }
  }

  /** One consumer of a queue, on a virtual thread. */
  private final class Consumer implements Subscription {
    final MemoryQueue queue;
    final Semaphore credit;
    final DeliveryHandler handler;
    final boolean deleteOnClose;
    final Set<MemoryDelivery> unsettled = ConcurrentHashMap.newKeySet();
    final AtomicBoolean stopped = new AtomicBoolean();
    volatile Thread thread;

    Consumer(MemoryQueue queue, int prefetch, DeliveryHandler handler, boolean deleteOnClose) {
      this.queue = queue;
      this.credit = new Semaphore(prefetch);
      this.handler = Objects.requireNonNull(handler, "handler");
      this.deleteOnClose = deleteOnClose;
    }

    void run() {
      try {
        while (!stopped.get()) {
          credit.acquire();
          Entry entry = queue.entries.poll(100, TimeUnit.MILLISECONDS);
          if (entry == null) {
            credit.release();
            continue;
          }
          if (stopped.get()) {
            queue.entries.addFirst(entry);
            return;
          }
          if (entry.message().expiredAt(Instant.now())) {
            credit.release();
            deadLetter(entry.message(), queue.name, "expired");
            continue;
          }
          MemoryDelivery delivery = new MemoryDelivery(this, entry);
          unsettled.add(delivery);
          try {
            handler.handle(delivery);
          } catch (RuntimeException e) {
            LOG.warn("A consumer of queue '{}' threw; the message goes back", queue.name, e);
            delivery.settle(Settle.REQUEUE, "");
          }
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }

    @Override
    public void close() {
      if (!stopped.compareAndSet(false, true)) {
        return;
      }
      queue.consumers.decrementAndGet();
      queue.active.remove(this);
      Thread running = thread;
      if (running != null) {
        running.interrupt();
        try {
          running.join(5_000);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      for (MemoryDelivery delivery : List.copyOf(unsettled)) {
        delivery.settle(Settle.REQUEUE, "");
      }
      if (deleteOnClose) {
        queue.entries.clear();
      }
    }
  }

  private enum Settle {
    ACK,
    DEAD_LETTER,
    REQUEUE
  }

  private final class MemoryDelivery implements Delivery {
    final Consumer consumer;
    final Entry entry;
    final AtomicBoolean settled = new AtomicBoolean();

    MemoryDelivery(Consumer consumer, Entry entry) {
      this.consumer = consumer;
      this.entry = entry;
    }

    @Override
    public Message message() {
      return entry.message();
    }

    @Override
    public boolean redelivered() {
      return entry.redelivered();
    }

    @Override
    public void ack() {
      settle(Settle.ACK, "");
    }

    @Override
    public void deadLetter(String reason) {
      settle(Settle.DEAD_LETTER, reason);
    }

    void settle(Settle how, String reason) {
      if (!settled.compareAndSet(false, true)) {
        return;
      }
      consumer.unsettled.remove(this);
      consumer.credit.release();
      switch (how) {
        case ACK -> {}
        case DEAD_LETTER ->
            InMemoryBus.this.deadLetter(entry.message(), consumer.queue.name, reason);
        case REQUEUE -> consumer.queue.entries.addFirst(new Entry(entry.message(), true));
      }
    }
  }
}
