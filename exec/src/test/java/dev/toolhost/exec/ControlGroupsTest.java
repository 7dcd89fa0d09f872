package dev.toolhost.exec;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import tools.jackson.databind.JsonNode;

/**
 * The kernel's limits on sandboxed calls, on this machine's real cgroups: a call's memory and
 * processes together, all calls' memory together, and what a dead host left behind.
 */
@Timeout(120)
class ControlGroupsTest {

  private static final long MIB = 1L << 20;

  @RegisterExtension
  static final ExecFixture fixture =
      ExecFixture.create(
          builder ->
              builder.limits(
                  new ExecConfig.Limits(
                      512 * MIB, 300, 256 * MIB, 64, 64 * 1024, 256 * MIB, 768 * MIB, 50)));

  @BeforeAll
  static void start() throws Exception {
    assertThat(fixture.sandbox.groups())
        .as("this machine's cgroups (v1 memory and pids, writable as root) are used")
        .isPresent();
  }

  private static Path peakFile() {
    Path group = fixture.sandbox.groups().orElseThrow().hostGroup("memory").orElseThrow();
    Path peak = group.resolve("memory.max_usage_in_bytes");
    return Files.exists(peak) ? peak : group.resolve("memory.peak");
  }

  /** The most memory the host's calls have used at once since {@link #resetHostPeak}. */
  private static long hostPeak() throws Exception {
    return Long.parseLong(Files.readString(peakFile()).strip());
  }

  /** Starts the kernel's count of the host's peak memory afresh (v1 and recent v2 take a write). */
  private static void resetHostPeak() throws Exception {
    Files.writeString(peakFile(), "0");
  }

  @Test
  void sixProcessesOf450MbInOneCallAreStoppedByTheCallsMemoryLimit() throws Exception {
    resetHostPeak();
    JsonNode json =
        fixture.shell(
            "for i in 1 2 3 4 5 6; do python3 -c 'import time; b = b\"x\" * (450 * 1024 * 1024);"
                + " time.sleep(60)' & done; wait",
            90);

    assertThat(json.get("limit").asString()).isEqualTo("memory");
    assertThat(json.get("timed_out").asBoolean()).isFalse();
    assertThat(json.get("elapsed_ms").asLong()).isLessThan(60_000);
    // The kernel's own count of what all the host's calls used at most: one call's limit, and
    // the little the kernel charges the host's group itself for making the call's.
    assertThat(hostPeak()).isLessThanOrEqualTo(520 * MIB);
  }

  @Test
  void theCallsOfTheHostShareItsTotalMemory() throws Exception {
    resetHostPeak();
    // Two calls of 400 MiB each fit their own limit (512 MiB) but not the host's (768 MiB).
    String hog = "python3 -c 'import time; b = b\"x\" * (400 * 1024 * 1024); time.sleep(8)'";
    List<Thread> calls =
        List.of(
            Thread.ofVirtual().start(() -> fixture.shell(hog, 60)),
            Thread.ofVirtual().start(() -> fixture.shell(hog, 60)));
    for (Thread call : calls) {
      call.join();
    }

    assertThat(hostPeak()).isLessThanOrEqualTo(768 * MIB);
  }

  @Test
  void aForkLoopMeetsTheCallsProcessLimit() {
    JsonNode json = fixture.shell("for i in $(seq 1 100); do sleep 5 & done; wait", 60);

    assertThat(json.get("limit").asString()).isEqualTo("processes");
    assertThat(json.get("timed_out").asBoolean()).isFalse();
    assertThat(json.get("stderr").asString()).contains("fork");
  }

  @Test
  void aCallsGroupIsGoneWhenTheCallReturns() throws Exception {
    fixture.shell("true");

    Path host = fixture.sandbox.groups().orElseThrow().hostGroup("memory").orElseThrow();
    try (var children = Files.list(host)) {
      assertThat(children.filter(Files::isDirectory)).isEmpty();
    }
  }

  @Test
  void theGroupsOfAHostThatIsGoneAreRemovedWithWhatRunsInThem() throws Exception {
    Path own = fixture.sandbox.groups().orElseThrow().hostGroup("memory").orElseThrow().getParent();
    // A pid that no process has: the predecessor is dead, its group and a process in it are not.
    long dead = 4_000_000 + ProcessHandle.current().pid();
    Path stale = Files.createDirectories(own.resolve("toolhost-" + dead + "-1").resolve("call-1"));
    Process orphan =
        new ProcessBuilder(
                "/bin/sh",
                "-c",
                "echo $$ > " + stale.resolve("cgroup.procs") + " && exec sleep 300")
            .start();
    try {
      long waitUntil = System.nanoTime() + 10_000_000_000L;
      while (Files.readString(stale.resolve("cgroup.procs")).isBlank()
          && System.nanoTime() < waitUntil) {
        Thread.sleep(10);
      }

      ControlGroups.Opening opened = ControlGroups.open(ExecConfig.Limits.defaults());

      assertThat(opened).isInstanceOf(ControlGroups.Opened.class);
      ((ControlGroups.Opened) opened).groups().close();
      assertThat(stale.getParent()).doesNotExist();
      assertThat(orphan.waitFor(5, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
    } finally {
      orphan.destroyForcibly();
    }
  }

  @Test
  void whenTheHostDiesItsReaperKillsWhatRunsInItsCallsGroups() throws Exception {
    ControlGroups groups =
        ((ControlGroups.Opened) ControlGroups.open(ExecConfig.Limits.defaults())).groups();
    ControlGroups.Call call = groups.enter();
    StringBuilder joins = new StringBuilder();
    call.joins().forEach(file -> joins.append("echo $$ > ").append(file).append(" && "));
    Process inside = new ProcessBuilder("/bin/sh", "-c", joins + "exec sleep 300").start();
    try {
      long waitUntil = System.nanoTime() + 10_000_000_000L;
      while (Files.readString(call.joins().getFirst()).isBlank() && System.nanoTime() < waitUntil) {
        Thread.sleep(10);
      }
      assertThat(Files.readString(call.joins().getFirst())).isNotBlank();

      // The kernel closes the reaper's stdin when the host dies; closing it here is the same.
      groups.reaper().orElseThrow().getOutputStream().close();

      assertThat(inside.waitFor(5, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
      assertThat(groups.reaper().orElseThrow().waitFor(5, java.util.concurrent.TimeUnit.SECONDS))
          .isTrue();
      assertThat(groups.hostGroup("memory").orElseThrow()).doesNotExist();
    } finally {
      inside.destroyForcibly();
      groups.close();
    }
  }
}
