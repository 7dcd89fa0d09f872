package dev.toolhost.rabbitmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The bus contract on the RabbitMQ at 127.0.0.1:5672. */
class RabbitBusTest extends MessageBusContractTest {

  static final URI BROKER = URI.create("amqp://guest:guest@127.0.0.1:5672/");

  @Override
  protected MessageBus newBus() {
    return RabbitBus.connect(BROKER);
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
    try (Replies replies = bus.request(queue, Message.of("{}"), deadline)) {
      assertThatThrownBy(() -> replies.next(deadline)).isInstanceOf(NoRouteException.class);
    }
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
