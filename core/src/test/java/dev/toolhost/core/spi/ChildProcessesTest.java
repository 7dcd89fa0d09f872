package dev.toolhost.core.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Children that die with the thread that started them, and the orphans of dead hosts. */
@Timeout(60)
class ChildProcessesTest {

  private final List<Process> started = new ArrayList<>();

  @AfterEach
  void killLeftovers() {
    started.forEach(Process::destroyForcibly);
  }

  private Process track(Process process) {
    started.add(process);
    return process;
  }

  @Test
  void aChildDiesWhenItsSpawnerThreadEndsThoughNobodyKillsIt() throws Exception {
    ChildProcesses children = new ChildProcesses("test");
    Process sleep = track(children.start(new ProcessBuilder("sleep", "300")));
    assertThat(sleep.isAlive()).isTrue();

    // Only the spawner thread ends: the kernel's parent-death signal is what kills the child.
    children.close();

    await().atMost(Duration.ofSeconds(5)).until(() -> !sleep.isAlive());
    assertThat(sleep.exitValue()).isEqualTo(128 + 9);
  }

  @Test
  void aChildCarriesItsHostsMarkInItsEnvironment() throws Exception {
    try (ChildProcesses children = new ChildProcesses("test")) {
      ProcessBuilder builder = new ProcessBuilder("sleep", "300");
      builder.environment().clear();
      Process sleep = track(children.start(builder));

      String environment =
          new String(
              Files.readAllBytes(Path.of("/proc", Long.toString(sleep.pid()), "environ")),
              StandardCharsets.UTF_8);
      assertThat(environment.split("\0"))
          .containsExactly(ChildProcesses.OWNER_VARIABLE + "=" + OwnerMark.current());
    }
  }

  @Test
  void aProgramThatIsNotThereFailsNamingIt() {
    try (ChildProcesses children = new ChildProcesses("test")) {
      assertThatThrownBy(() -> children.start(new ProcessBuilder("no-such-program-of-toolhost")))
          .isInstanceOf(IOException.class)
          .hasMessageContaining("\"no-such-program-of-toolhost\": no executable file of that name")
          .hasMessageContaining("on the PATH");
      assertThatThrownBy(() -> children.start(new ProcessBuilder("/nonexistent/program")))
          .isInstanceOf(IOException.class)
          .hasMessageContaining("\"/nonexistent/program\"");
    }
  }

  @Test
  void theOrphansOfADeadHostAreKilledAndTheChildrenOfALiveOneAreNot() throws Exception {
    OwnerMark self = OwnerMark.current();
    // This process's id with another start time: a host that died, whose id was reused.
    OwnerMark dead = new OwnerMark(self.pid(), self.startMillis() - 3_600_000);
    assertThat(dead.alive()).isFalse();
    assertThat(self.alive()).isTrue();
    ProcessBuilder orphan = new ProcessBuilder("sleep", "300");
    orphan.environment().put(ChildProcesses.OWNER_VARIABLE, dead.toString());
    ProcessBuilder child = new ProcessBuilder("sleep", "300");
    child.environment().put(ChildProcesses.OWNER_VARIABLE, self.toString());
    Process left = track(orphan.start());
    Process kept = track(child.start());

    assertThat(ChildProcesses.endOrphans()).isPositive();

    await().atMost(Duration.ofSeconds(5)).until(() -> !left.isAlive());
    assertThat(kept.isAlive()).isTrue();
  }

  @Test
  void aMarkReadsBackAsWritten() {
    OwnerMark mark = OwnerMark.current();

    assertThat(OwnerMark.parse(mark.toString())).contains(mark);
    assertThat(OwnerMark.parse("12")).isEmpty();
    assertThat(OwnerMark.parse("a-b")).isEmpty();
  }
}
