package dev.toolhost.bus;

/** The bus contract on the in-memory bus. */
class InMemoryBusTest extends MessageBusContractTest {
  @Override
  protected MessageBus newBus() {
    return new InMemoryBus();
  }

  @Override
  protected MessageBus newBus(int maxMessageSize) {
    return new InMemoryBus(maxMessageSize);
  }
}
