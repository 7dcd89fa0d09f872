package dev.toolhost.rabbitmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import dev.toolhost.bus.Delivery;
import dev.toolhost.bus.Message;
import dev.toolhost.bus.MessageBus;
import dev.toolhost.bus.MessageBusContractTest;
import dev.toolhost.bus.NoRouteException;
import dev.toolhost.bus.Replies;
import dev.toolhost.bus.Subscription;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The bus contract on the RabbitMQ at 127.0.0.1:5672. */
class RabbitBusTest extends MessageBusContractTest {

  static final URI BROKER = URI.create("amqp://guest:guest@127.0.0.1:5672/");

  @Override
  protected MessageBus newBus() {
    return RabbitBus.connect(BROKER);
  }

  @Override
  protected MessageBus newBus(int maxMessageSize) {
    return RabbitBus.connect(BROKER, maxMessageSize);
  }

  @Test
  void aMessageOverTheConsumersLimitIsDeadLetteredOnceAndTheConsumerKeepsConsuming()
      throws Exception {
    String queue = queue();
    String marker = UUID.randomUUID().toString();
    LinkedBlockingQueue<Delivery> got = new LinkedBlockingQueue<>();
    List<Long> tooLarge = new CopyOnWriteArrayList<>();
    try (MessageBus small = newBus(1024)) {
      Subscription consuming =
          small.consume(
              queue,
              10,
              new MessageBus.DeliveryHandler() {
                @Override
                public void handle(Delivery delivery) {
                  got.add(delivery);
                }

                @Override
                public void tooLarge(Message withoutBody, long size) {
                  assertThat(withoutBody.body()).isEmpty();
                  assertThat(withoutBody.headers()).containsEntry("marker", marker);
                  tooLarge.add(size);
                }
              });
      bus.send(
          queue, Message.of("\"" + "x".repeat(2000) + "\"").withHeaders(Map.of("marker", marker)));
      bus.send(queue, Message.of("{\"small\":true}"));
      Delivery small1 = got.poll(10, TimeUnit.SECONDS);
      assertThat(small1.message().body()).isEqualTo("{\"small\":true}");
      small1.ack();
      await().atMost(Duration.ofSeconds(10)).until(() -> tooLarge.size() == 1);
      assertThat(tooLarge).containsExactly(2002L);
      assertThat(small.consumerCount(queue)).isEqualTo(1);
      // A sentinel sent last and dead-lettered by the consumer comes after any second delivery or
      // second dead letter of the large message, in the queue and in the dead-letter queue.
      bus.send(queue, Message.of("{\"sentinel\":true}").withHeaders(Map.of("marker", marker)));
      Delivery sentinel = got.poll(10, TimeUnit.SECONDS);
      assertThat(sentinel.message().body()).isEqualTo("{\"sentinel\":true}");
      sentinel.deadLetter("sentinel");
      assertThat(takeDeadLettered(marker)).isEqualTo(1);
      assertThat(tooLarge).containsExactly(2002L);
      assertThat(got).isEmpty();
      consuming.close();
    }
  }

  // Takes this test's letters off the shared dead-letter queue, up to its sentinel, and counts
  // the others; others' letters go back to it.
  private int takeDeadLettered(String marker) {
    AtomicInteger taken = new AtomicInteger();
    AtomicBoolean sentinel = new AtomicBoolean();
    try (Subscription dead =
        bus.consume(
            MessageBus.DEAD_LETTER_QUEUE,
            100,
            delivery -> {
              if (marker.equals(delivery.message().headers().get("marker"))) {
                delivery.ack();
                if (delivery.message().body().equals("{\"sentinel\":true}")) {
                  sentinel.set(true);
                } else {
                  taken.incrementAndGet();
                }
              }
            })) {
      await().atMost(Duration.ofSeconds(10)).untilTrue(sentinel);
    }
    return taken.get();
  }

  @Test
  void aRequestTheBrokerReturnsEndsItsRepliesWithNoRouteAtOnce() throws Exception {
    String queue = queue();
    Subscription consuming = bus.consume(queue, 10, Delivery::ack);
    waitFor(() -> bus.consumerCount(queue) == 1);
    // The first request counts the queue's consumers, and the count is trusted for a second.
    bus.request(queue, Message.of("{}"), Instant.now().plusSeconds(10)).close();
    consuming.close();
    bus.deleteQueue(queue);
    Instant start = Instant.now();
    Instant deadline = start.plusSeconds(10);
    // The broker's return ends the replies; on a machine so busy that the trusted second has
    // passed, the request's own count answers the same, as it does for any queue gone idle.
    assertThatThrownBy(
            () -> {
              try (Replies replies = bus.request(queue, Message.of("{}"), deadline)) {
                replies.next(deadline);
              }
            })
        .isInstanceOf(NoRouteException.class);
    assertThat(Duration.between(start, Instant.now())).isLessThan(Duration.ofSeconds(2));
  }

  @Test
  void onlyMessagesThatAskForThemCarryTheCorrelationIdAndExpiryAsHeaders() throws Exception {
    String queue = queue();
    ConnectionFactory factory = new ConnectionFactory();
    factory.setUri(BROKER);
    factory.setVirtualHost("/");
    LinkedBlockingQueue<AMQP.BasicProperties> seen = new LinkedBlockingQueue<>();
    try (Connection raw = factory.newConnection("test-raw-consumer")) {
      raw.createChannel()
          .basicConsume(
              queue, true, (tag, delivery) -> seen.add(delivery.getProperties()), tag -> {});
      waitFor(() -> bus.consumerCount(queue) == 1);
      Instant deadline = Instant.now().plusSeconds(10);

      // A worker request: correlation id and expiry as properties, no headers.
      bus.request(queue, Message.of("{}"), deadline).close();
      AMQP.BasicProperties plain = seen.poll(10, TimeUnit.SECONDS);
      assertThat(plain.getCorrelationId()).isNotBlank();
      assertThat(Long.parseLong(plain.getExpiration())).isBetween(1L, 10_000L);
      assertThat(plain.getHeaders()).isNull();
      assertThat(plain.getMessageId()).isNull();

      // A tool-service request: the same, also as TrustGraph's headers.
      bus.request(queue, Message.of("{}").withPropertyHeaders(), deadline).close();
      AMQP.BasicProperties tagged = seen.poll(10, TimeUnit.SECONDS);
      assertThat(tagged.getHeaders().get("id")).hasToString(tagged.getCorrelationId());
      assertThat(tagged.getHeaders().get("toolhost_expires_at"))
          .hasToString(Long.toString(deadline.toEpochMilli()));
    }
  }
}
