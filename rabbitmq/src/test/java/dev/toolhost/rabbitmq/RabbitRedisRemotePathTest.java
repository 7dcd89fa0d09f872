package dev.toolhost.rabbitmq;

import dev.toolhost.bus.RedisResultStore;
import dev.toolhost.bus.ResultStore;
import java.net.URI;

/**
 * The remote path on the RabbitMQ at 127.0.0.1:5672 with the workers' results in the Redis at
 * 127.0.0.1:6379, the store every host on the broker shares: every case again, deduplication and
 * call identity included.
 */
class RabbitRedisRemotePathTest extends RabbitRemotePathTest {
  @Override
  protected ResultStore resultStore() {
    return RedisResultStore.connect(URI.create("redis://127.0.0.1:6379"));
  }
}
