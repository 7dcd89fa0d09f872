package dev.toolhost.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.core.MethodTools;
import dev.toolhost.core.Tool;
import dev.toolhost.host.HostConfig;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A client that goes away mid-call cancels it: the tool of a call whose HTTP connection closes is
 * interrupted, and a call whose client stays is not.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HttpDisconnectTest {

  /** How long the tool sees at most between the client leaving and its cancel. */
  private static final Duration WITHIN = Duration.ofSeconds(1);

  /** A tool that sleeps for a minute and tells when it was interrupted. */
  public static final class Sleeper {
    final CountDownLatch started = new CountDownLatch(1);
    final CompletableFuture<Long> interruptedAt = new CompletableFuture<>();

    @Tool(description = "Sleeps for a minute.", timeoutSeconds = 120)
    public String sleep() {
      started.countDown();
      try {
        Thread.sleep(Duration.ofMinutes(1));
        return "slept";
      } catch (InterruptedException e) {
        interruptedAt.complete(System.nanoTime());
        Thread.currentThread().interrupt();
        return "interrupted";
      }
    }
  }

  @TempDir Path directory;

  @Test
  void aClientThatClosesItsConnectionMidCallCancelsTheToolWithinASecond() throws Exception {
    Sleeper sleeper = new Sleeper();
    try (Host host =
        Host.builder(HostConfig.parse("http:\n  port: 0\n", "toolhost.yaml", directory)).build()) {
      host.registry().registerAll(MethodTools.of(sleeper, "builtin:test"));
      URI base = host.start();
      long closedAt;
      try (Socket socket = new Socket(base.getHost(), base.getPort())) {
        OutputStream out = socket.getOutputStream();
        String body = "{}";
        out.write(
            ("POST /v1/tools/sleep/invoke HTTP/1.1\r\nHost: "
                    + base.getHost()
                    + ":"
                    + base.getPort()
                    + "\r\nContent-Type: application/json\r\nContent-Length: "
                    + body.length()
                    + "\r\n\r\n"
                    + body)
                .getBytes(StandardCharsets.US_ASCII));
        out.flush();
        assertThat(sleeper.started.await(30, TimeUnit.SECONDS)).isTrue();
        closedAt = System.nanoTime();
      }

      long seenAt = sleeper.interruptedAt.get(30, TimeUnit.SECONDS);

      assertThat(Duration.ofNanos(seenAt - closedAt)).isLessThan(WITHIN);
    }
  }
}
