package dev.toolhost.rabbitmq;

import dev.toolhost.bus.MessageBus;
import dev.toolhost.bus.MessageBusContractTest;
import java.net.URI;

/** The bus contract on the RabbitMQ at 127.0.0.1:5672. */
class RabbitBusTest extends MessageBusContractTest {

  static final URI BROKER = URI.create("amqp://guest:guest@127.0.0.1:5672/");

  @Override
  protected MessageBus newBus() {
    return RabbitBus.connect(BROKER);
  }
}
