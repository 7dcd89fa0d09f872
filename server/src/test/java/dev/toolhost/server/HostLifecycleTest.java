package dev.toolhost.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.toolhost.core.spi.HostContext;
import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.core.spi.HostExtensionException;
import dev.toolhost.core.spi.ReadyHost;
import dev.toolhost.core.spi.SectionReading;
import dev.toolhost.host.HostConfig;
import dev.toolhost.mcp.McpConfig;
import dev.toolhost.mcp.McpExtension;
import dev.toolhost.mcp.McpServerConfig;
import dev.toolhost.mcp.NpmPackages;
import dev.toolhost.mcp.TestProcesses;
import dev.toolhost.memory.MemoryConfig;
import dev.toolhost.memory.WorkingMemoryExtension;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import redis.clients.jedis.Jedis;
import tools.jackson.databind.JsonNode;

/**
 * The host's lifecycle over the real extensions: when one fails to start, the ones started before
 * it are closed in reverse order, and nothing they opened is left running: no MCP server process,
 * no thread of theirs, no Redis connection.
 */
@Timeout(120)
class HostLifecycleTest {

  private static final String MARKER = "mcp-server-everything";

  /** An extension as it is, with its start and close noted in a shared log. */
  private record Logged<C>(HostExtension<C> extension, List<String> log)
      implements HostExtension<C> {
    @Override
    public String name() {
      return extension.name();
    }

    @Override
    public Set<Class<?>> provides() {
      return extension.provides();
    }

    @Override
    public Set<Class<?>> requires() {
      return extension.requires();
    }

    @Override
    public Set<Class<?>> uses() {
      return extension.uses();
    }

    @Override
    public JsonNode configSchema() {
      return extension.configSchema();
    }

    @Override
    public C read(JsonNode section, SectionReading reading) {
      return extension.read(section, reading);
    }

    @Override
    public void start(HostContext host, Optional<C> config) throws Exception {
      extension.start(host, config);
      log.add("started " + name());
    }

    @Override
    public void ready(ReadyHost host) throws Exception {
      extension.ready(host);
    }

    @Override
    public void close() throws Exception {
      extension.close();
      log.add("closed " + name());
    }
  }

  @Test
  void whenTheThirdRealExtensionFailsTheRedisMemoryAndTheMcpServersAreClosedInReverse()
      throws Exception {
    LongSupplier redisClients = HostLifecycleTest::redisClients;
    long clientsBefore = redisClients.getAsLong();
    List<String> log = new CopyOnWriteArrayList<>();
    Logged<MemoryConfig> memory = new Logged<>(new WorkingMemoryExtension(), log);
    Logged<McpConfig> mcp = new Logged<>(new McpExtension(), log);
    HostExtension<Void> broken =
        new HostExtension<>() {
          @Override
          public String name() {
            return "broken";
          }

          @Override
          public Void read(JsonNode section, SectionReading reading) {
            return null;
          }

          @Override
          public void start(HostContext host, Optional<Void> config) {
            // By now the first two hold a Redis connection pool and a running MCP server.
            assertThat(TestProcesses.aliveDescendants(MARKER)).isPositive();
            throw new IllegalStateException("port 9 is taken");
          }
        };

    assertThatThrownBy(
            () ->
                Host.builder(HostConfig.defaults())
                    .environment(Map.of())
                    .extensions(List.of())
                    .extension(
                        memory,
                        MemoryConfig.redis(
                            MemoryConfig.DEFAULT_REDIS_URI, "toolhost-test:lifecycle:"))
                    .extension(
                        mcp,
                        McpConfig.of(
                            List.of(
                                new McpServerConfig(
                                    "everything",
                                    new McpServerConfig.Stdio(
                                        NpmPackages.bin(MARKER),
                                        List.of("stdio"),
                                        Map.of(),
                                        List.of()),
                                    Optional.empty(),
                                    Duration.ofSeconds(30)))))
                    .extension(broken)
                    .build())
        .isInstanceOf(HostExtensionException.class)
        .hasMessageContaining("'broken' failed to start: port 9 is taken");

    assertThat(log).containsExactly("started memory", "started mcp", "closed mcp", "closed memory");
    // Closed means stopped: the server process reaped, the threads ended, the connections closed
    // (the Redis server counts a closed connection within moments).
    assertThat(TestProcesses.aliveDescendants(MARKER)).isZero();
    assertThat(Thread.getAllStackTraces().keySet())
        .extracting(Thread::getName)
        .noneMatch(name -> name.startsWith("toolhost-mcp-"));
    long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
    while (redisClients.getAsLong() != clientsBefore && System.nanoTime() < deadline) {
      Thread.sleep(50);
    }
    assertThat(redisClients.getAsLong()).isEqualTo(clientsBefore);
  }

  /** How many clients the Redis server has, this question's own connection not counted. */
  private static long redisClients() {
    try (Jedis redis = new Jedis("127.0.0.1", 6379)) {
      String info = redis.info("clients");
      return info.lines()
              .filter(line -> line.startsWith("connected_clients:"))
              .mapToLong(line -> Long.parseLong(line.substring(line.indexOf(':') + 1).strip()))
              .findFirst()
              .orElseThrow()
          - 1;
    }
  }
}
