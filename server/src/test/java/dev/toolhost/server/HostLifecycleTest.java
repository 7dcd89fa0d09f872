package dev.toolhost.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.core.spi.HostExtensionException;
import dev.toolhost.host.HostConfig;
import dev.toolhost.mcp.McpConfig;
import dev.toolhost.mcp.McpExtension;
import dev.toolhost.mcp.McpServerConfig;
import dev.toolhost.mcp.NpmPackages;
import dev.toolhost.mcp.TestProcesses;
import dev.toolhost.memory.MemoryConfig;
import dev.toolhost.memory.WorkingMemoryExtension;
import dev.toolhost.testing.ProcessSockets;
import dev.toolhost.testing.StartingExtension;
import dev.toolhost.testing.WatchedExtension;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The host's lifecycle over the real extensions: when one fails to start, the ones started before
 * it are closed in reverse order, and nothing they opened is left running: no MCP server process,
 * no thread of theirs, no Redis connection.
 */
@Timeout(120)
class HostLifecycleTest {

  private static final String MARKER = "mcp-server-everything";

  @Test
  void whenTheThirdRealExtensionFailsTheRedisMemoryAndTheMcpServersAreClosedInReverse()
      throws Exception {
    LongSupplier redisClients = HostLifecycleTest::redisClients;
    long clientsBefore = redisClients.getAsLong();
    List<String> log = new CopyOnWriteArrayList<>();
    WatchedExtension<MemoryConfig> memory =
        new WatchedExtension<>(new WorkingMemoryExtension(), log);
    WatchedExtension<McpConfig> mcp = new WatchedExtension<>(new McpExtension(), log);
    HostExtension<Void> broken =
        new StartingExtension(
            "broken",
            host -> {
              // By now the first two hold a Redis connection pool and a running MCP server.
              assertThat(TestProcesses.aliveDescendants(MARKER)).isPositive();
              throw new IllegalStateException("port 9 is taken");
            });

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

  /** How many connections this process holds to the Redis server, another build's not counted. */
  private static long redisClients() {
    return ProcessSockets.connectedTo(6379);
  }
}
