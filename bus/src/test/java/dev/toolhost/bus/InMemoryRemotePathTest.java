package dev.toolhost.bus;

/** The remote path on the in-memory bus: the whole path in one process. */
class InMemoryRemotePathTest extends RemotePathContractTest {
  private final InMemoryBus bus = new InMemoryBus();

  @Override
  protected MessageBus hostBus() {
    return bus;
  }

  @Override
  protected MessageBus workerBus() {
    return bus;
  }

  // One process, one bus: a bus of its own with the smaller limit, which refuses before routing.
  @Override
  protected MessageBus smallHostBus(int maxMessageSize) {
    return new InMemoryBus(maxMessageSize);
  }
}
