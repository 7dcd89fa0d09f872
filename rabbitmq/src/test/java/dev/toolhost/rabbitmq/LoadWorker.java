package dev.toolhost.rabbitmq;

import dev.toolhost.bus.RedisResultStore;
import dev.toolhost.bus.ToolWorker;
import dev.toolhost.core.MethodTools;
import dev.toolhost.core.Param;
import dev.toolhost.core.Tool;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolRegistry;
import java.net.URI;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import redis.clients.jedis.RedisClient;

/**
 * A load worker is a worker process for {@link ReliabilityLoadTest}: one tool, {@code work}, that
 * counts in Redis how often each call started (per worker) and finished, so that a test can kill
 * the process with {@code kill -9} and still count every execution.
 *
 * <p>Usage: {@code LoadWorker amqp-uri redis-uri group lease-ms concurrency name}. Prints {@code
 * ready} once it consumes; runs until killed.
 */
public final class LoadWorker {

  private LoadWorker() {}

  /** The tool: sleeps, counting its start and its end per token in the group's hashes. */
  public record Work(RedisClient redis, String group, String name) {

    @Tool(description = "Sleeps, counting how often each token ran.")
    public String work(
        @Param(description = "One per call.") String token,
        @Param(description = "How long, in ms.") int millis)
        throws InterruptedException {
      redis.hincrBy(runs(group), token + "@" + name, 1);
      Thread.sleep(millis);
      redis.hincrBy(finished(group), token, 1);
      return "worked " + token;
    }
  }

  /** The Redis hash of how often each token's call started on each worker: {@code token@worker}. */
  static String runs(String group) {
    return "toolhost:load:" + group + ":runs";
  }

  /** The Redis hash of how often each token's call ran to its end. */
  static String finished(String group) {
    return "toolhost:load:" + group + ":finished";
  }

  /** Runs a worker until the process is killed. */
  public static void main(String[] args) throws Exception {
    URI broker = URI.create(args[0]);
    URI redisUri = URI.create(args[1]);
    String group = args[2];
    Duration lease = Duration.ofMillis(Long.parseLong(args[3]));
    int concurrency = Integer.parseInt(args[4]);
    String name = args[5];
    RedisClient counts = RedisClient.create(redisUri);
    ToolRegistry registry = new ToolRegistry();
    registry.registerAll(MethodTools.of(new Work(counts, group, name), "builtin:load"));
    RabbitBus bus = RabbitBus.connect(broker);
    RedisResultStore results = RedisResultStore.connect(redisUri);
    new ToolWorker(
            bus,
            group,
            registry,
            ToolDispatcher.create(),
            results,
            concurrency,
            Duration.ofSeconds(1),
            lease)
        .start();
    System.out.println("ready");
    System.out.flush();
    new CountDownLatch(1).await();
  }
}
