package dev.toolhost.rabbitmq;

import dev.toolhost.bus.MessageBus;
import dev.toolhost.bus.RemotePathContractTest;

/** The remote path on the RabbitMQ at 127.0.0.1:5672: host and workers on their own connections. */
class RabbitRemotePathTest extends RemotePathContractTest {
  @Override
  protected MessageBus hostBus() {
    return RabbitBus.connect(RabbitBusTest.BROKER);
  }

  @Override
  protected MessageBus workerBus() {
    return RabbitBus.connect(RabbitBusTest.BROKER);
  }

  @Override
  protected MessageBus smallHostBus(int maxMessageSize) {
    return RabbitBus.connect(RabbitBusTest.BROKER, maxMessageSize);
  }
}
