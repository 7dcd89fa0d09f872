package dev.toolhost.scheduling;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.toolhost.core.ToolResult;
import dev.toolhost.testing.TestHost;
import java.time.Duration;

/**
 * Host tasks are a test's tasks on a started test host with the scheduling extension: scheduled
 * through its {@code schedule_task} as an agent would, and their runs awaited on its scheduler.
 * Shared with other modules' tests in this module's test jar.
 */
public final class HostTasks {

  private HostTasks() {}

  /** Calls {@code schedule_task} with the JSON arguments under the main profile; its answer. */
  public static String schedule(TestHost host, String arguments) {
    ToolResult scheduled = host.call("schedule_task", arguments);
    assertThat(scheduled.isError()).as(scheduled.text()).isFalse();
    return scheduled.text();
  }

  /**
   * Waits up to 30 seconds until the named task's latest run has that status, and returns the run.
   */
  public static TaskRun awaitRun(TestHost host, String name, TaskRun.Status status)
      throws Exception {
    TaskScheduler scheduler = host.runtime().service(TaskScheduler.class).orElseThrow();
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> scheduler.runs(name, 1).stream().anyMatch(run -> run.status() == status));
    return scheduler.runs(name, 1).getFirst();
  }
}
