package dev.toolhost.benchmarks.load;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.server.Host;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

// Needs Debian's wrk (apt-get install -y wrk); skipped where it is missing.
@Timeout(60)
class WrkTest {

  @TempDir static Path directory;
  private static Host host;
  private static Path sessions;

  @BeforeAll
  static void startHost() throws Exception {
    // run-tests installs wrk (scripts/test-services.sh): a machine without it fails here.
    assertThat(Path.of("/usr/bin/wrk")).as("wrk (apt-get install wrk)").isExecutable();
    host = LoadRun.start(directory);
    sessions = directory.resolve("sessions.txt");
    McpSessions.open(host.uri().resolve(Target.MCP.path()), 20, sessions);
  }

  @AfterAll
  static void closeHost() {
    if (host != null) {
      host.close();
    }
  }

  @Test
  void everyTargetIsDrivenWithoutAnError() {
    Wrk wrk = new Wrk(host.uri(), directory, sessions, 2, Optional.empty());
    for (Target target : Target.values()) {
      Wrk.Result result = wrk.run(target, 4, 1);

      assertThat(result.requests()).as(target.label()).isGreaterThan(100);
      assertThat(result.errors()).as(target.label()).isZero();
      assertThat(result.p99Micros()).as(target.label()).isGreaterThanOrEqualTo(result.p50Micros());
      assertThat(result.cpuSeconds()).as(target.label()).isPositive();
    }
  }

  @Test
  void callsInSessionsTheGatewayNeverGaveAreCountedAsErrors() throws Exception {
    Path unknown = directory.resolve("unknown.txt");
    Files.write(unknown, List.of("no-such-session-1", "no-such-session-2"));
    Wrk wrk = new Wrk(host.uri(), directory, unknown, 1, Optional.empty());

    Wrk.Result result = wrk.run(Target.MCP, 2, 1);

    assertThat(result.requests()).isPositive();
    assertThat(result.errors()).isEqualTo(result.requests());
  }
}
