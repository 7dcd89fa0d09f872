package dev.toolhost.scheduling;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.InstantSource;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The embedded store keeps what it acknowledged through a {@code kill -9}: a host in a JVM of its
 * own ({@link EmbeddedHost}) takes 200 {@code schedule_task} calls one after the other, as fast as
 * it answers them, and is killed with SIGKILL the moment the last answer arrives; a host opened on
 * the same file then lists all 200.
 */
@Timeout(120)
class EmbeddedStoreCrashTest {

  private static final int CALLS = 200;

  @TempDir Path dir;

  private Process child;

  @AfterEach
  void killChild() throws Exception {
    if (child != null) {
      child.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
    }
  }

  @Test
  void everyAcknowledgedScheduleSurvivesAKillRightAfterTheLastAnswer() throws Exception {
    Path state = dir.resolve("state");
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    child =
        new ProcessBuilder(
                java,
                "-cp",
                System.getProperty("java.class.path"),
                EmbeddedHost.class.getName(),
                state.toString())
            .redirectError(dir.resolve("host.err").toFile())
            .start();
    List<String> names = IntStream.range(0, CALLS).mapToObj(i -> "report-" + i).toList();
    try (BufferedReader answers =
            new BufferedReader(
                new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
        Writer calls = new OutputStreamWriter(child.getOutputStream(), StandardCharsets.UTF_8)) {
      assertThat(answers.readLine()).isEqualTo("READY");
      for (String name : names) {
        calls.write(name + "\n");
        calls.flush();
        assertThat(answers.readLine()).isEqualTo("OK " + name);
      }
      // SIGKILL on Linux: no shutdown hook, no close of the database.
      child.destroyForcibly();
      assertThat(child.waitFor(30, TimeUnit.SECONDS)).isTrue();
    }
    assertThat(child.exitValue()).isEqualTo(128 + 9);

    try (ScheduleStore store = ScheduleStore.embedded(state);
        TaskScheduler scheduler = TaskScheduler.builder(store).build()) {
      ToolRegistry registry = new ToolRegistry();
      registry.registerAll(
          new SchedulingTools(
                  scheduler,
                  SchedulingConfig.builder(state).agent("reporter").maxTasks(10_000).build(),
                  InstantSource.system())
              .tools());
      ToolResult listed =
          ToolDispatcher.create()
              .dispatch(
                  ToolSet.of(registry, ToolProfiles.MAIN), ToolCall.of(SchedulingTools.LIST, "{}"));

      assertThat(scheduler.tasks())
          .extracting(task -> task.task().name())
          .containsExactlyInAnyOrderElementsOf(names);
      assertThat(listed.isError()).as(listed.text()).isFalse();
      assertThat(names).allSatisfy(name -> assertThat(listed.text()).contains("| " + name + " |"));
    }
  }
}
