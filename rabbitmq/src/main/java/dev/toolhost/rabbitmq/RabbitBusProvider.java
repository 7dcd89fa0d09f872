package dev.toolhost.rabbitmq;

import dev.toolhost.bus.MessageBus;
import dev.toolhost.bus.MessageBusProvider;
import java.net.URI;
import java.util.Set;

/**
 * The RabbitMQ bus provider opens a {@link RabbitBus} for an {@code amqp://} or {@code amqps://}
 * URI: {@code --bus amqp://user:pass@host:5672/vhost}.
 */
public final class RabbitBusProvider implements MessageBusProvider {

  @Override
  public Set<String> schemes() {
    return Set.of("amqp", "amqps");
  }

  @Override
  public String example() {
    return "amqp://user:pass@host:5672/";
  }

  @Override
  public MessageBus open(URI uri) {
    return RabbitBus.connect(uri);
  }
}
