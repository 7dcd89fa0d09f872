package dev.toolhost.scheduling;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneId;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The three tools through a dispatcher, on the embedded store, with the clock at 09:59 in Paris:
 * their answers, refusals and the list's table.
 */
class SchedulingToolsTest {

  @TempDir Path dir;

  private final TestClock clock = new TestClock(Instant.parse("2026-11-25T08:59:00Z"));
  private final ToolRegistry registry = new ToolRegistry();
  private final ToolDispatcher dispatcher = ToolDispatcher.create();
  private ScheduleStore store;
  private TaskScheduler scheduler;

  @BeforeEach
  void open() throws Exception {
    store = ScheduleStore.embedded(dir);
    scheduler = TaskScheduler.builder(store).clock(clock).build();
    tools(SchedulingConfig.builder(dir).zone(ZoneId.of("Europe/Paris")).agent("helper").build());
  }

  /** Registers the tools over the scheduler with the config, in place of any before. */
  private void tools(SchedulingConfig config) {
    for (var tool : new SchedulingTools(scheduler, config, clock).tools()) {
      registry.unregister(tool.name());
      registry.register(tool);
    }
  }

  @AfterEach
  void close() {
    scheduler.close();
    store.close();
  }

  private ToolResult call(String tool, String arguments) {
    return dispatcher.dispatch(
        ToolSet.of(registry, ToolProfiles.MAIN), ToolCall.of(tool, arguments));
  }

  private ToolResult schedule(String name, String cron) {
    return call(
        "schedule_task",
        "{\"name\": \"" + name + "\", \"cron\": \"" + cron + "\", \"description\": \"Do it\"}");
  }

  @Test
  void schedulingAnswersTheNextFireAndTheCurrentTimeInTheHostsZone() {
    ToolResult created = schedule("morning", "0 9 * * *");
    ToolResult replaced = schedule("morning", "30 9 * * 1-5");

    assertThat(created.isError()).as(created.text()).isFalse();
    assertThat(created.text())
        .matches(
            "Scheduled task 'morning' with cron '0 9 \\* \\* \\*'\\. Next fire: 2026-11-26 09:00:00"
                + " Europe/Paris \\(UTC\\+01:00\\)\\. Current time: 2026-11-25 09:59:0\\d"
                + " Europe/Paris \\(UTC\\+01:00\\)\\.");
    assertThat(replaced.text())
        .startsWith(
            "Replaced task 'morning' with cron '30 9 * * 1-5'. Next fire: 2026-11-26 09:30:00");
  }

  @Test
  void runOnceIsAlsoTakenInCamelCaseAndATaskMayReadAnotherZone() {
    ToolResult once =
        call(
            "schedule_task",
            "{\"name\": \"call-mum\", \"cron\": \"0 18 25 12 *\", \"description\": \"Call\","
                + " \"runOnce\": true, \"zone\": \"America/New_York\"}");

    assertThat(once.text())
        .startsWith(
            "Scheduled task 'call-mum' with cron '0 18 25 12 *', once. Next fire: 2026-12-26"
                + " 00:00:00 Europe/Paris (UTC+01:00), which is 2026-12-25 18:00:00"
                + " America/New_York (UTC-05:00). Current time: 2026-11-25 09:59:0");
  }

  @Test
  void refusalsNameWhatIsWrong() {
    assertThat(schedule("bad name!", "0 9 * * *").text())
        .isEqualTo(
            "name 'bad name!' is not valid: use 1 to 64 characters of A-Z, a-z, 0-9, '_', '.'"
                + " and '-'.");
    assertThat(schedule("x".repeat(65), "0 9 * * *").isError()).isTrue();
    assertThat(schedule("feb", "0 0 30 2 *").text())
        .isEqualTo(
            "cron '0 0 30 2 *' never fires: no month it allows (month field '2') has a day it"
                + " allows (day-of-month field '30').");
    assertThat(schedule("late", "0 25 * * *").text())
        .isEqualTo("cron '0 25 * * *': hour is 25, outside 0-23.");
    assertThat(
            call(
                    "schedule_task",
                    "{\"name\": \"t\", \"cron\": \"0 9 * * *\", \"description\": \"x\", \"tool\":"
                        + " \"rm_rf\"}")
                .text())
        .isEqualTo(
            "tool 'rm_rf' cannot run in a scheduled task: it is not one of your tools, and a task"
                + " does only what its owner may.");
    assertThat(
            call(
                    "schedule_task",
                    "{\"name\": \"t\", \"cron\": \"0 9 * * *\", \"description\": \"x\", \"zone\":"
                        + " \"Mars/Base\"}")
                .text())
        .isEqualTo("zone 'Mars/Base' is not an IANA zone name, such as Europe/Paris.");
  }

  @Test
  void aHostWithoutAnAgentTakesOnlyToolCalls() {
    tools(SchedulingConfig.defaults(dir));

    assertThat(schedule("think", "0 9 * * *").text())
        .isEqualTo(
            "This host has no agent to run a prompt (scheduling.agent is not set): give tool and"
                + " arguments to schedule a tool call instead.");
  }

  @Test
  void theMaximumOfTasksRefusesANewNameButNotAReplacement() {
    tools(SchedulingConfig.builder(dir).agent("helper").maxTasks(2).build());
    schedule("a", "0 9 * * *");
    schedule("b", "0 9 * * *");

    assertThat(schedule("c", "0 9 * * *").text())
        .isEqualTo(
            "There are 2 scheduled tasks, the most this host allows: cancel one first, or replace"
                + " one by scheduling a task of its name.");
    assertThat(schedule("b", "0 10 * * *").isError()).isFalse();
  }

  @Test
  void theListIsATableHeadedByTheCurrentTimeWithOverdueTasksMarked() {
    schedule("daily-report", "0 9 * * *");
    call(
        "schedule_task",
        "{\"name\": \"pipes\", \"cron\": \"0 12 * * *\", \"description\": \"a | b\\nc\"}");
    // No host runs them: at noon the next day, both fires have passed unrun.
    clock.set(Instant.parse("2026-11-26T11:00:00Z"));

    String list = call("list_scheduled_tasks", "{}").text();

    assertThat(list)
        .matches(
            "(?s)Current time: 2026-11-26 12:00:0\\d Europe/Paris \\(UTC\\+01:00\\)\n\n"
                + "\\| name \\| cron \\| description \\| next fire \\| last run \\|\n"
                + "\\| --- \\| --- \\| --- \\| --- \\| --- \\|\n"
                + "\\| pipes \\| `0 12 \\* \\* \\*` \\| a \\\\\\| b c \\| ⚠️ OVERDUE 2026-11-25"
                + " 12:00:00 Europe/Paris \\(UTC\\+01:00\\) \\| never \\|\n"
                + "\\| daily-report \\| `0 9 \\* \\* \\*` \\| Do it \\| ⚠️ OVERDUE 2026-11-26"
                + " 09:00:00 Europe/Paris \\(UTC\\+01:00\\) \\| never \\|");
  }

  @Test
  void anEmptyListSaysSo() {
    assertThat(call("list_scheduled_tasks", "{}").text())
        .matches(
            "Current time: 2026-11-25 09:59:0\\d Europe/Paris \\(UTC\\+01:00\\)\n\nNo scheduled tasks\\.");
  }

  @Test
  void cancellingAnUnknownNameListsTheNearestNames() {
    schedule("daily-report", "0 9 * * *");
    schedule("weekly-report", "0 9 * * 1");
    schedule("backup", "0 3 * * *");
    schedule("water-plants", "0 8 * * *");

    ToolResult unknown = call("cancel_scheduled_task", "{\"name\": \"daily-reports\"}");
    ToolResult cancelled = call("cancel_scheduled_task", "{\"name\": \"daily-report\"}");

    assertThat(unknown.isError()).isTrue();
    assertThat(unknown.text())
        .isEqualTo(
            "No scheduled task named 'daily-reports' was found. Nearest names: daily-report,"
                + " weekly-report, water-plants.");
    assertThat(cancelled.text()).isEqualTo("Cancelled task 'daily-report'.");
    assertThat(call("cancel_scheduled_task", "{\"name\": \"daily-report\"}").text())
        .startsWith("No scheduled task named 'daily-report' was found. Nearest names:");
  }
}
