package dev.toolhost.rabbitmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
}
