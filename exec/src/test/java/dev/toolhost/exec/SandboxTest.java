package dev.toolhost.exec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ToolResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.JsonNode;

/** The sandbox's own behaviour: failing closed, prompts, the unsandboxed switch, exec. */
@Timeout(60)
class SandboxTest {

  @Test
  void withBwrapMissingEveryToolAnswersWhyAndHowToFixAndNothingRuns() throws Exception {
    try (ExecFixture fixture = new ExecFixture(builder -> builder.bwrap("/nonexistent/bwrap"))) {
      for (var call :
          List.of(
              Map.entry("shell", Map.of("command", "touch ran-anyway")),
              Map.entry("exec", Map.of("program", "touch", "args", List.of("ran-anyway"))),
              Map.entry("execute_python_script", Map.of("script", "open('ran-anyway', 'w')")))) {
        ToolResult result = fixture.call(call.getKey(), call.getValue());

        assertThat(result).as(call.getKey()).isInstanceOf(ToolResult.Failure.class);
        assertThat(((ToolResult.Failure) result).error().code()).isEqualTo(ErrorCode.UNAVAILABLE);
        assertThat(result.text())
            .startsWith(
                "The sandbox cannot start: bubblewrap ('/nonexistent/bwrap') is not installed."
                    + " Fix: install bubblewrap (Debian: apt-get install bubblewrap)")
            .contains("set exec.unsandboxed: true");
        assertThat(fixture.workspace().resolve("ran-anyway")).doesNotExist();
      }
    }
  }

  @Test
  void whenNamespacesAreRefusedTheToolsSayWhyAndNothingRuns() throws Exception {
    // A stand-in for bwrap inside a container that refuses namespaces: its message, its status.
    Path fake = Files.createTempDirectory(Path.of("/tmp"), "fake-bwrap");
    Files.setPosixFilePermissions(fake, PosixFilePermissions.fromString("rwxr-xr-x"));
    Path bwrap =
        Files.writeString(
            fake.resolve("bwrap"),
            "#!/bin/sh\necho 'bwrap: Creating new namespace failed: Operation not permitted' >&2\n"
                + "exit 1\n");
    Files.setPosixFilePermissions(bwrap, PosixFilePermissions.fromString("rwxr-xr-x"));
    try (ExecFixture fixture = new ExecFixture(builder -> builder.bwrap(bwrap.toString()))) {
      ToolResult result = fixture.call("shell", Map.of("command", "touch ran-anyway"));

      assertThat(((ToolResult.Failure) result).error().code()).isEqualTo(ErrorCode.UNAVAILABLE);
      assertThat(result.text())
          .startsWith(
              "The sandbox cannot start: bubblewrap failed to make its namespaces (bwrap: Creating"
                  + " new namespace failed: Operation not permitted). Fix: ")
          .contains("allow unprivileged user namespaces");
      assertThat(fixture.workspace().resolve("ran-anyway")).doesNotExist();
    } finally {
      Files.delete(bwrap);
      Files.delete(fake);
    }
  }

  @Test
  void aPromptFollowedBySilenceEndsTheCommandWithAClearResult() throws Exception {
    try (ExecFixture fixture = new ExecFixture()) {
      ToolResult result =
          fixture.call(
              "shell",
              Map.of("command", "/usr/bin/printf 'Overwrite all files? [y/n] '; sleep 30"));

      JsonNode json = ExecFixture.structured(result);
      assertThat(json.get("waiting_for_input").asBoolean()).isTrue();
      assertThat(json.get("timed_out").asBoolean()).isFalse();
      assertThat(json.get("elapsed_ms").asLong()).isBetween(1000L, 5000L);
      assertThat(result.text())
          .startsWith(
              "[ended: it waited for input ('Overwrite all files? [y/n]') and stdin is empty;"
                  + " pass a flag such as -y or --yes, or pipe the answer in; sandboxed]");
    }
  }

  @Test
  void quietOutputThatIsNoPromptIsLeftToRun() throws Exception {
    try (ExecFixture fixture = new ExecFixture()) {
      JsonNode json = fixture.shell("echo working; sleep 2; echo done");

      assertThat(json.get("waiting_for_input").asBoolean()).isFalse();
      assertThat(json.get("stdout").asString()).isEqualTo("working\ndone\n");
    }
  }

  @Test
  void execPassesArgumentsAsIsWithNoShell() throws Exception {
    try (ExecFixture fixture = new ExecFixture()) {
      ToolResult result =
          fixture.call(
              "exec",
              Map.of(
                  "program", "printf",
                  "args", List.of("%s|", "$HOME", "a b", "; rm -rf /"),
                  "env", Map.of("GREETING", "hi")));

      assertThat(ExecFixture.structured(result).get("stdout").asString())
          .isEqualTo("$HOME|a b|; rm -rf /|");
      assertThat(
              ExecFixture.structured(
                      fixture.call(
                          "exec",
                          Map.of(
                              "program",
                              "sh",
                              "args",
                              List.of("-c", "echo $GREETING"),
                              "env",
                              Map.of("GREETING", "hi"))))
                  .get("stdout")
                  .asString())
          .isEqualTo("hi\n");
    }
  }

  @Test
  void withTheNetworkAllowedTheHostsPortIsReachable() throws Exception {
    try (var server = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress());
        ExecFixture fixture = new ExecFixture(builder -> builder.network(true))) {
      JsonNode json =
          fixture.shell(
              "bash -c 'exec 3<>/dev/tcp/127.0.0.1/"
                  + server.getLocalPort()
                  + "' && echo connected");

      assertThat(json.get("stdout").asString()).isEqualTo("connected\n");
    }
  }

  @Test
  void aCancelledCallEndsItsWholeProcessTree() throws Exception {
    try (ExecFixture fixture = new ExecFixture()) {
      AtomicReference<ToolResult> result = new AtomicReference<>();
      Thread caller =
          Thread.ofPlatform()
              .start(
                  () ->
                      result.set(
                          fixture.call("shell", Map.of("command", "sleep 987201 & sleep 987202"))));
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> SandboxEscapeTest.processesMentioning("98720").size() >= 2);

      caller.interrupt();
      caller.join(Duration.ofSeconds(10));

      assertThat(((ToolResult.Failure) result.get()).error().code()).isEqualTo(ErrorCode.CANCELLED);
      await()
          .pollDelay(Duration.ofSeconds(1))
          .atMost(Duration.ofMillis(1500))
          .until(() -> SandboxEscapeTest.processesMentioning("98720").isEmpty());
    }
  }

  @Test
  void aCallersDeadlineShorterThanTheTimeoutEndsTheCommandInTime() throws Exception {
    try (ExecFixture fixture = new ExecFixture()) {
      ToolResult result =
          fixture.call("shell", Map.of("command", "sleep 987301"), Duration.ofSeconds(2));

      JsonNode json = ExecFixture.structured(result);
      assertThat(json.get("timed_out").asBoolean()).isTrue();
      // Ended before the caller's deadline, and not at once (a busy machine may take a while to
      // start it).
      assertThat(json.get("elapsed_ms").asLong()).isBetween(500L, 2000L);
      await()
          .pollDelay(Duration.ofSeconds(1))
          .atMost(Duration.ofMillis(1500))
          .until(() -> SandboxEscapeTest.processesMentioning("987301").isEmpty());
    }
  }

  @Test
  void cpuTimeFileSizeAndProcessLimitsHold() throws Exception {
    try (ExecFixture fixture =
        new ExecFixture(
            builder ->
                builder.limits(new ExecConfig.Limits(1L << 30, 1, 1L << 20, 24, 64 * 1024)))) {
      JsonNode cpu = fixture.shell("python3 -c 'while True: pass'", 20);
      JsonNode size =
          fixture.shell("head -c 2000000 /dev/zero > big; echo status=$?; stat -c %s big");
      JsonNode processes =
          fixture.shell(
              "python3 -c '"
                  + "import os, time\n"
                  + "forks = 0\n"
                  + "try:\n"
                  + "    while forks < 100:\n"
                  + "        if os.fork() == 0:\n"
                  + "            time.sleep(5)\n"
                  + "            os._exit(0)\n"
                  + "        forks += 1\n"
                  + "except BlockingIOError as e:\n"
                  + "    print(forks, e.errno)'");

      // SIGXCPU at the soft limit: 128 + 24.
      assertThat(cpu.get("exit_code").asInt()).isEqualTo(152);
      assertThat(cpu.get("timed_out").asBoolean()).isFalse();
      // SIGXFSZ at the limit: 128 + 25, the file cut at 1 MiB.
      assertThat(size.get("stdout").asString()).isEqualTo("status=153\n1048576\n");
      // EAGAIN once the sandbox user has 24 processes: bwrap's init and python among them, and
      // any other process of that user on the machine, since the kernel counts per user.
      String[] forked = processes.get("stdout").asString().strip().split(" ");
      assertThat(Integer.parseInt(forked[0])).isBetween(1, 22);
      assertThat(forked[1]).isEqualTo("11");
    }
  }

  @Test
  void aTimeoutAboveTheMaximumIsRefused() throws Exception {
    try (ExecFixture fixture =
        new ExecFixture(builder -> builder.maxTimeout(Duration.ofSeconds(120)))) {
      ToolResult result = fixture.call("shell", Map.of("command", "true", "timeout_seconds", 121));

      assertThat(result.text()).isEqualTo("timeout_seconds is 121; it must be 1 to 120.");
    }
  }

  @Test
  void theUnsandboxedSwitchRunsUncontainedAndEveryResultSaysSo() throws Exception {
    try (ExecFixture fixture = new ExecFixture(builder -> builder.unsandboxed(true))) {
      ToolResult result = fixture.call("shell", Map.of("command", "echo $HOME; id -u"));

      JsonNode json = ExecFixture.structured(result);
      assertThat(json.get("sandboxed").asBoolean()).isFalse();
      assertThat(json.get("stdout").asString()).isEqualTo(fixture.workspace() + "\n0\n");
      assertThat(result.text()).contains("; NOT sandboxed]");
      ToolResult python = fixture.call("execute_python_script", Map.of("script", "print(1)"));
      assertThat(python.text()).isEqualTo("1\n[ran NOT sandboxed]");
    }
  }
}
