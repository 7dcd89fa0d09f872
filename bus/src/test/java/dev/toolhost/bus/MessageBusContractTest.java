package dev.toolhost.bus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The message-bus contract, written once and run against every bus: subclass it and make a bus.
 * Every queue a test declares has a unique name and is deleted afterwards.
 */
@Timeout(30)
public abstract class MessageBusContractTest {

  protected MessageBus bus;
  private final List<String> queues = new ArrayList<>();
  private final List<Subscription> subscriptions = new ArrayList<>();

  /** Makes a fresh bus for one test. */
  protected abstract MessageBus newBus();

  /** Makes a fresh bus with the given maximum message size. */
  protected abstract MessageBus newBus(int maxMessageSize);

  @BeforeEach
  void openBus() {
    bus = newBus();
  }

  @AfterEach
  void closeBus() throws InterruptedException {
    subscriptions.forEach(Subscription::close);
    takeBackOwnDeadLetters();
    queues.forEach(bus::deleteQueue);
    bus.close();
  }

  // Messages that expired in this test's queues reach the shared dead-letter queue (the broker
  // names their first queue in x-first-death-queue); take them back so the broker is left as it
  // was found. Other dead letters stay unsettled, so the broker keeps them. A sentinel
  // dead-lettered last comes after every letter already there: once it is taken, so are they.
  private void takeBackOwnDeadLetters() throws InterruptedException {
    if (queues.isEmpty()) {
      return;
    }
    String own = queue();
    String sentinel = "{\"sentinel\":\"" + UUID.randomUUID() + "\"}";
    CountDownLatch taken = new CountDownLatch(1);
    try (Subscription drain =
        bus.consume(
            MessageBus.DEAD_LETTER_QUEUE,
            100,
            d -> {
              if (d.message().body().equals(sentinel)) {
                d.ack();
                taken.countDown();
              } else if (queues.contains(
                  d.message().headers().getOrDefault("x-first-death-queue", ""))) {
                d.ack();
              }
            })) {
      try (Subscription last = bus.consume(own, 1, d -> d.deadLetter("sentinel"))) {
        bus.send(own, Message.of(sentinel));
        assertThat(taken.await(10, TimeUnit.SECONDS)).as("the sentinel came back").isTrue();
      }
    }
  }

  protected String queue() {
    String name = "test.contract." + UUID.randomUUID();
    bus.declareQueue(name);
    queues.add(name);
    return name;
  }

  private Subscription track(Subscription subscription) {
    subscriptions.add(subscription);
    return subscription;
  }

  private static Message poll(LinkedBlockingQueue<Delivery> got) throws InterruptedException {
    Delivery delivery = got.poll(10, TimeUnit.SECONDS);
    assertThat(delivery).as("a delivery within 10s").isNotNull();
    delivery.ack();
    return delivery.message();
  }

  /** The deliveries of a consumer of the queue, once the bus counts it. */
  private LinkedBlockingQueue<Delivery> listening(String queue) throws Exception {
    LinkedBlockingQueue<Delivery> got = new LinkedBlockingQueue<>();
    serving(queue, got::add);
    return got;
  }

  /** Consumes the queue with the handler (10 at a time), once the bus counts the consumer. */
  private void serving(String queue, MessageBus.DeliveryHandler handler) throws Exception {
    track(bus.consume(queue, 10, handler));
    waitFor(() -> bus.consumerCount(queue) == 1);
  }

  @Test
  void sentMessageReachesAConsumerWithItsHeaders() throws Exception {
    String queue = queue();
    LinkedBlockingQueue<Delivery> got = new LinkedBlockingQueue<>();
    track(bus.consume(queue, 10, got::add));
    bus.send(queue, Message.of("{\"a\":1}").withHeaders(Map.of("tool_name", "echo")));
    Message message = poll(got);
    assertThat(message.body()).isEqualTo("{\"a\":1}");
    assertThat(message.headers()).containsEntry("tool_name", "echo");
  }

  @Test
  void messagesSentBeforeAnyoneConsumesWaitInTheQueue() throws Exception {
    String queue = queue();
    bus.send(queue, Message.of("{}"));
    LinkedBlockingQueue<Delivery> got = new LinkedBlockingQueue<>();
    track(bus.consume(queue, 10, got::add));
    assertThat(poll(got).body()).isEqualTo("{}");
  }

  @Test
  void sendingToAMissingQueueFailsAtOnce() {
    Instant start = Instant.now();
    assertThatThrownBy(() -> bus.send("test.missing." + UUID.randomUUID(), Message.of("{}")))
        .isInstanceOf(NoRouteException.class);
    assertThat(Duration.between(start, Instant.now())).isLessThan(Duration.ofSeconds(2));
  }

  @Test
  void aMessageOverTheMaximumSizeIsRefusedAtOnceNamingItsSizeInUtf8Bytes() throws Exception {
    String queue = queue();
    LinkedBlockingQueue<Delivery> got = listening(queue);
    assertThat(bus.maxMessageSize()).isEqualTo(MessageBus.DEFAULT_MAX_MESSAGE_SIZE);
    try (MessageBus small = newBus(1024)) {
      assertThat(small.maxMessageSize()).isEqualTo(1024);
      // 600 chars, 1202 bytes as UTF-8.
      Message accented = Message.of("\"" + "é".repeat(600) + "\"");
      Instant deadline = Instant.now().plusSeconds(10);
      assertThatThrownBy(() -> small.send(queue, accented))
          .isInstanceOfSatisfying(
              MessageTooLargeException.class,
              e -> {
                assertThat(e.size()).isEqualTo(1202);
                assertThat(e.limit()).isEqualTo(1024);
                assertThat(e.getMessage()).contains("1202 bytes").contains("1024 bytes");
              });
      assertThatThrownBy(() -> small.request(queue, accented, deadline))
          .isInstanceOf(MessageTooLargeException.class);
      assertThatThrownBy(() -> small.publish("test.topic." + UUID.randomUUID(), accented))
          .isInstanceOf(MessageTooLargeException.class);
      assertThat(Message.of("\"" + "é".repeat(511) + "\"").largerThan(1024)).isFalse();
    }
    assertThat(got.poll(300, TimeUnit.MILLISECONDS)).isNull();
  }

  @Test
  void competingConsumersEachGetDifferentMessages() throws Exception {
    String queue = queue();
    List<String> first = new CopyOnWriteArrayList<>();
    List<String> second = new CopyOnWriteArrayList<>();
    track(bus.consume(queue, 1, d -> settleAfter(d, first)));
    track(bus.consume(queue, 1, d -> settleAfter(d, second)));
    for (int i = 0; i < 20; i++) {
      bus.send(queue, Message.of("{\"n\":" + i + "}"));
    }
    waitFor(() -> first.size() + second.size() == 20);
    List<String> all = new ArrayList<>(first);
    all.addAll(second);
    assertThat(all).doesNotHaveDuplicates().hasSize(20);
    assertThat(first).isNotEmpty();
    assertThat(second).isNotEmpty();
  }

  private static void settleAfter(Delivery delivery, List<String> into) {
    Thread.ofVirtual()
        .start(
            () -> {
              try {
                Thread.sleep(20);
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
              into.add(delivery.message().body());
              delivery.ack();
            });
  }

  @Test
  void anUnsettledMessageIsRedeliveredWhenItsConsumerCloses() throws Exception {
    String queue = queue();
    LinkedBlockingQueue<Delivery> first = new LinkedBlockingQueue<>();
    Subscription dying = bus.consume(queue, 1, first::add);
    bus.send(queue, Message.of("{\"once\":true}"));
    Delivery unsettled = first.poll(10, TimeUnit.SECONDS);
    assertThat(unsettled).isNotNull();
    assertThat(unsettled.redelivered()).isFalse();
    dying.close();
    LinkedBlockingQueue<Delivery> second = new LinkedBlockingQueue<>();
    track(bus.consume(queue, 1, second::add));
    Delivery again = second.poll(10, TimeUnit.SECONDS);
    assertThat(again).isNotNull();
    assertThat(again.redelivered()).isTrue();
    assertThat(again.message().body()).isEqualTo("{\"once\":true}");
    again.ack();
    assertThat(second.poll(300, TimeUnit.MILLISECONDS)).isNull();
  }

  @Test
  void aDeadLetteredMessageIsNotDeliveredAgainAndReachesTheDeadLetterQueue() throws Exception {
    String queue = queue();
    String marker = UUID.randomUUID().toString();
    LinkedBlockingQueue<Delivery> dead = new LinkedBlockingQueue<>();
    track(
        bus.consume(
            MessageBus.DEAD_LETTER_QUEUE,
            50,
            d -> {
              // Only this test's message: others' dead letters stay with the broker.
              if (d.message().body().contains(marker)) {
                d.ack();
                dead.add(d);
              }
            }));
    LinkedBlockingQueue<Delivery> got = new LinkedBlockingQueue<>();
    track(bus.consume(queue, 1, got::add));
    bus.send(queue, Message.of("{\"marker\":\"" + marker + "\"}"));
    Delivery delivery = got.poll(10, TimeUnit.SECONDS);
    assertThat(delivery).isNotNull();
    delivery.deadLetter("not a request");
    assertThat(dead.poll(10, TimeUnit.SECONDS)).isNotNull();
    assertThat(got.poll(300, TimeUnit.MILLISECONDS)).isNull();
  }

  @Test
  void anExpiredMessageIsNotDelivered() throws Exception {
    String queue = queue();
    Instant expiration = Instant.now().plusMillis(50);
    bus.send(queue, Message.of("{\"late\":true}").withExpiration(expiration));
    bus.send(queue, Message.of("{\"late\":false}"));
    // The message's life running out is the point: a consumer comes once it has. A broker starts
    // that life when it has the message, a moment after the expiration was turned into a TTL,
    // hence the margin.
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> Instant.now().isAfter(expiration.plusMillis(150)));
    LinkedBlockingQueue<Delivery> got = new LinkedBlockingQueue<>();
    track(bus.consume(queue, 10, got::add));
    assertThat(poll(got).body()).isEqualTo("{\"late\":false}");
    // A message sent last arrives next: the expired one did not come in between.
    bus.send(queue, Message.of("{\"last\":true}"));
    assertThat(poll(got).body()).isEqualTo("{\"last\":true}");
  }

  @Test
  void anExpiredMessageIsDeadLetteredOnceNamingItsQueueAndWhy() throws Exception {
    String queue = queue();
    String body = "{\"expired\":\"" + UUID.randomUUID() + "\"}";
    Instant expiration = Instant.now().plusMillis(50);
    bus.send(queue, Message.of(body).withExpiration(expiration));
    // A consumer comes once the message's life has run out (with the margin of the test above):
    // the in-memory bus finds it expired when it would deliver it, a broker at the queue's head.
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> Instant.now().isAfter(expiration.plusMillis(150)));
    LinkedBlockingQueue<Delivery> got = new LinkedBlockingQueue<>();
    track(bus.consume(queue, 10, got::add));
    LinkedBlockingQueue<Delivery> letters = new LinkedBlockingQueue<>();
    track(
        bus.consume(
            MessageBus.DEAD_LETTER_QUEUE,
            100,
            d -> {
              if (d.message().body().equals(body)) {
                d.ack();
                letters.add(d);
              }
            }));

    Delivery letter = letters.poll(10, TimeUnit.SECONDS);
    // A second letter of it would come within the margin an expiry takes.
    Delivery again = letters.poll(1, TimeUnit.SECONDS);

    assertThat(letter).as("the expired message in the dead-letter queue").isNotNull();
    assertThat(letter.message().headers())
        .containsEntry("x-first-death-queue", queue)
        .containsEntry("x-first-death-reason", "expired");
    assertThat(again).isNull();
    assertThat(got).isEmpty();
  }

  @Test
  void aPublishedMessageReachesEverySubscriber() throws Exception {
    String topic = "test.topic." + UUID.randomUUID();
    LinkedBlockingQueue<Delivery> first = new LinkedBlockingQueue<>();
    LinkedBlockingQueue<Delivery> second = new LinkedBlockingQueue<>();
    track(bus.subscribe(topic, first::add));
    track(bus.subscribe(topic, second::add));
    bus.publish(topic, Message.of("{\"hello\":1}"));
    assertThat(poll(first).body()).isEqualTo("{\"hello\":1}");
    assertThat(poll(second).body()).isEqualTo("{\"hello\":1}");
  }

  @Test
  void publishingWithNoSubscriberIsFine() {
    bus.publish("test.topic." + UUID.randomUUID(), Message.of("{}"));
  }

  @Test
  void consumerCountCountsConsumers() {
    String queue = queue();
    assertThat(bus.consumerCount(queue)).isZero();
    Subscription one = bus.consume(queue, 1, Delivery::ack);
    waitFor(() -> bus.consumerCount(queue) == 1);
    one.close();
    waitFor(() -> bus.consumerCount(queue) == 0);
    assertThat(bus.consumerCount("test.missing." + UUID.randomUUID())).isZero();
  }

  @Test
  void aRequestGetsItsReplyByCorrelationId() throws Exception {
    String queue = queue();
    serving(
        queue,
        d -> {
          bus.reply(d.message(), Message.of("{\"echo\":" + d.message().body() + "}"));
          d.ack();
        });
    Instant deadline = Instant.now().plusSeconds(10);
    try (Replies first = bus.request(queue, Message.of("1"), deadline);
        Replies second = bus.request(queue, Message.of("2"), deadline)) {
      Message two = second.next(deadline).orElseThrow();
      Message one = first.next(deadline).orElseThrow();
      assertThat(two.body()).isEqualTo("{\"echo\":2}");
      assertThat(one.body()).isEqualTo("{\"echo\":1}");
      assertThat(one.correlationId()).contains(first.correlationId());
    }
  }

  @Test
  void severalRepliesToOneRequestArriveInOrder() throws Exception {
    String queue = queue();
    serving(
        queue,
        d -> {
          for (int i = 0; i < 5; i++) {
            bus.reply(d.message(), Message.of("{\"part\":" + i + "}"));
          }
          d.ack();
        });
    Instant deadline = Instant.now().plusSeconds(10);
    try (Replies replies = bus.request(queue, Message.of("{}"), deadline)) {
      for (int i = 0; i < 5; i++) {
        assertThat(replies.next(deadline).orElseThrow().body()).isEqualTo("{\"part\":" + i + "}");
      }
    }
  }

  @Test
  void aRequestWithNoReplyByItsDeadlineGetsNone() throws Exception {
    String queue = queue();
    serving(queue, d -> {});
    Instant deadline = Instant.now().plusMillis(300);
    try (Replies replies = bus.request(queue, Message.of("{}"), deadline)) {
      assertThat(replies.next(deadline)).isEmpty();
      assertThat(Instant.now()).isBefore(deadline.plusSeconds(1));
    }
  }

  @Test
  void aRequestToAQueueNobodyConsumesFailsAtOnce() {
    String queue = queue();
    assertThatThrownBy(() -> bus.request(queue, Message.of("{}"), Instant.now().plusSeconds(30)))
        .isInstanceOf(NoRouteException.class);
    assertThatThrownBy(
            () ->
                bus.request(
                    "test.missing." + UUID.randomUUID(),
                    Message.of("{}"),
                    Instant.now().plusSeconds(30)))
        .isInstanceOf(NoRouteException.class);
  }

  @Test
  void replyThenAckRepliesAndAcknowledgesTheRequest() throws Exception {
    String queue = queue();
    // With a prefetch of 1, the second request is only delivered once the first was acknowledged.
    track(bus.consume(queue, 1, d -> bus.replyThenAck(d, Message.of(d.message().body()))));
    waitFor(() -> bus.consumerCount(queue) == 1);
    Instant deadline = Instant.now().plusSeconds(10);
    try (Replies first = bus.request(queue, Message.of("{\"n\":1}"), deadline);
        Replies second = bus.request(queue, Message.of("{\"n\":2}"), deadline)) {
      assertThat(first.next(deadline).orElseThrow().body()).isEqualTo("{\"n\":1}");
      assertThat(second.next(deadline).orElseThrow().body()).isEqualTo("{\"n\":2}");
    }
  }

  @Test
  void aLateReplyIsDropped() throws Exception {
    String queue = queue();
    LinkedBlockingQueue<Delivery> got = listening(queue);
    Instant deadline = Instant.now().plusMillis(200);
    Replies replies = bus.request(queue, Message.of("{}"), Instant.now().plusSeconds(10));
    assertThat(replies.next(deadline)).isEmpty();
    replies.close();
    Delivery late = got.poll(10, TimeUnit.SECONDS);
    bus.reply(late.message(), Message.of("{\"late\":true}"));
    late.ack();
    // Replies reach this bus on one queue, in order: once a reply sent after the late one has
    // arrived, the late one has been dealt with.
    try (Replies after = bus.request(queue, Message.of("{}"), Instant.now().plusSeconds(10))) {
      Delivery next = got.poll(10, TimeUnit.SECONDS);
      bus.reply(next.message(), Message.of("{\"after\":true}"));
      next.ack();
      assertThat(after.next(Instant.now().plusSeconds(10)).orElseThrow().body())
          .isEqualTo("{\"after\":true}");
    }
    assertThat(replies.next(Instant.now())).isEmpty();
  }

  protected static void waitFor(java.util.function.BooleanSupplier condition) {
    Instant until = Instant.now().plusSeconds(10);
    while (!condition.getAsBoolean()) {
      if (Instant.now().isAfter(until)) {
        throw new AssertionError("condition not met within 10s");
      }
      try {
        Thread.sleep(10);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError("interrupted");
      }
    }
  }
}
