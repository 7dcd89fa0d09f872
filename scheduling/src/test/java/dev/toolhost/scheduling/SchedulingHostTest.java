package dev.toolhost.scheduling;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSpec;
import dev.toolhost.core.spi.ConfigException;
import dev.toolhost.host.HostConfig;
import dev.toolhost.testing.StartingExtension;
import dev.toolhost.testing.TestHost;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code scheduling:} section on a started host with the scheduling extension alone: a tool
 * task calls its tool through the host's dispatcher, on the embedded store across a restart and on
 * one PostgreSQL store shared by two hosts; the profile rules follow the config; a host without the
 * section has none of it; a wrong section is refused with its places.
 */
@Timeout(60)
class SchedulingHostTest {

  @TempDir Path dir;

  private static TestHost host(String yaml) {
    return host(yaml, Map.of());
  }

  private static TestHost host(String yaml, Map<String, String> environment) {
    return TestHost.builder()
        .config(yaml)
        .extensions(List.of(new SchedulingExtension()))
        .environment(environment)
        .start();
  }

  private static HostConfig parse(String yaml) {
    return TestHost.config(yaml, List.of(new SchedulingExtension()), Path.of(""));
  }

  @Test
  void aToolTaskCallsItsToolThroughTheDispatcherAndTheListShowsItsOutcome() throws Exception {
    String yaml =
        """
        scheduling:
          state_dir: %s
          zone: Europe/Paris
          poll_interval: 200ms
        """
            .formatted(dir.resolve("state"));
    try (TestHost host = host(yaml)) {
      Instant second = PinnedCron.dueSoon();
      String cron = PinnedCron.at(second, ZoneId.of("Europe/Paris"));

      ToolResult refused =
          host.call(
              "schedule_task",
              "{\"name\": \"turn\", \"cron\": \"0 9 * * *\", \"description\": \"Think\"}");
      assertThat(refused.text())
          .isEqualTo(
              "This host has no agent to run a prompt (scheduling.agent is not set): give tool and"
                  + " arguments to schedule a tool call instead.");
      HostTasks.schedule(
          host,
          "{\"name\": \"guides\", \"cron\": \""
              + cron
              + "\", \"description\": \"List the guides\", \"tool\": \"list_tool_guides\","
              + " \"arguments\": {}}");

      HostTasks.awaitRun(host, "guides", TaskRun.Status.SUCCEEDED);
      String list = host.call("list_scheduled_tasks", "{}").text();
      assertThat(list).startsWith("Current time: ").contains(" Europe/Paris (UTC+");
      assertThat(list)
          .contains("| name | cron | description | next fire | last run |")
          .contains("| guides | `" + cron + "` | calls list_tool_guides: List the guides | ")
          .contains("| succeeded ");
      assertThat(list).contains("scheduling");
    }
  }

  @Test
  void twoHostsOnOnePostgresStoreShareTheirTasksWithThePasswordFromTheEnvironment()
      throws Exception {
    String schema = "sched_host_" + Long.toHexString(System.nanoTime());
    String server = "jdbc:postgresql://127.0.0.1:5432/test";
    try (java.sql.Connection connection =
            java.sql.DriverManager.getConnection(server, "postgres", "");
        java.sql.Statement statement = connection.createStatement()) {
      statement.execute("create schema " + schema);
    }
    String yaml =
        """
        scheduling:
          store: %s?currentSchema=%s
          user: postgres
          password_env: SCHEDULES_DB_PASSWORD
          zone: UTC
        """
            .formatted(server, schema);
    try {
      assertThatThrownBy(() -> host(yaml))
          .isInstanceOf(ConfigException.class)
          .hasMessage(
              "scheduling: the store's password variable SCHEDULES_DB_PASSWORD"
                  + " (scheduling.password_env) is not set");
      Map<String, String> environment = Map.of("SCHEDULES_DB_PASSWORD", "trusted-anyway");
      try (TestHost a = host(yaml, environment);
          TestHost b = host(yaml, environment)) {
        HostTasks.schedule(
            a,
            "{\"name\": \"shared\", \"cron\": \"0 9 * * *\", \"description\": \"x\","
                + " \"tool\": \"list_tool_guides\"}");
        assertThat(b.call("list_scheduled_tasks", "{}").text())
            .contains("| shared | `0 9 * * *` | calls list_tool_guides: x | ");
        assertThat(b.call("cancel_scheduled_task", "{\"name\": \"shared\"}").text())
            .isEqualTo("Cancelled task 'shared'.");
        assertThat(a.call("list_scheduled_tasks", "{}").text()).endsWith("No scheduled tasks.");
      }
    } finally {
      try (java.sql.Connection connection =
              java.sql.DriverManager.getConnection(server, "postgres", "");
          java.sql.Statement statement = connection.createStatement()) {
        statement.execute("drop schema " + schema + " cascade");
      }
    }
  }

  @Test
  void aTaskCreatedOnAHostFiresOnceAfterTheHostRestarts() throws Exception {
    String yaml =
        """
        scheduling:
          state_dir: %s
          zone: UTC
          poll_interval: 200ms
        """
            .formatted(dir.resolve("state"));
    Instant second;
    try (TestHost first = host(yaml)) {
      second = PinnedCron.dueSoon();
      HostTasks.schedule(
          first,
          "{\"name\": \"after-restart\", \"cron\": \""
              + PinnedCron.at(second, ZoneOffset.UTC)
              + "\", \"description\": \"x\", \"run_once\": true, \"tool\":"
              + " \"list_tool_guides\"}");
    }
    try (TestHost second2 = host(yaml)) {
      TaskScheduler scheduler = second2.runtime().service(TaskScheduler.class).orElseThrow();
      await().atMost(Duration.ofSeconds(30)).until(() -> scheduler.count() == 0);
      assertThat(scheduler.runs("after-restart", 5))
          .singleElement()
          .satisfies(
              run -> {
                assertThat(run.status()).isEqualTo(TaskRun.Status.SUCCEEDED);
                assertThat(run.due()).isEqualTo(second);
              });
    }
  }

  @Test
  void firesMayScheduleOnlyWhenTheConfigSaysSo() {
    String yaml =
        """
        scheduling:
          state_dir: %s
          fires_may_schedule: %s
        """;
    try (TestHost closed = host(yaml.formatted(dir.resolve("a"), false));
        TestHost open = host(yaml.formatted(dir.resolve("b"), true))) {
      assertThat(closed.runtime().toolSet("scheduled").names())
          .contains("list_scheduled_tasks", "cancel_scheduled_task")
          .doesNotContain("schedule_task");
      assertThat(open.runtime().toolSet("scheduled").names()).contains("schedule_task");
      assertThat(open.runtime().toolSet("subagent").names())
          .contains("schedule_task", "list_scheduled_tasks")
          .doesNotContain("cancel_scheduled_task");
    }
  }

  @Test
  void aHostWithoutASchedulingSectionHasNoSchedulingToolsOrRoutes() {
    try (TestHost host = host("")) {
      assertThat(host.runtime().registry().specs())
          .extracting(ToolSpec::source)
          .doesNotContain("builtin:scheduling");
      assertThat(host.runtime().service(TaskScheduler.class)).isEmpty();
      assertThat(host.runtime().routeNames()).noneMatch(route -> route.contains("/v1/schedules"));
    }
  }

  @Test
  void aWrongSchedulingSectionIsRefusedWithEveryProblemAtItsPlace() {
    String yaml =
        """
        scheduling:
          store: mysql://db
          zone: Mars/Olympus
          max_tasks: 0
          grace: 1s
          poll_interval: 1s
        """;
    assertThatThrownBy(() -> parse(yaml))
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            String.join(
                "\n",
                "toolhost.yaml line 2, column 10: 'scheduling.store' is 'mysql://db' (expected"
                    + " embedded, or a JDBC URL such as jdbc:postgresql://127.0.0.1:5432/toolhost)",
                "toolhost.yaml line 3, column 9: 'scheduling.zone' is 'Mars/Olympus' (expected an"
                    + " IANA zone name, such as Europe/Paris or America/New_York)",
                "toolhost.yaml line 4, column 14: 'scheduling.max_tasks' is 0 (expected 1 to"
                    + " 100000)",
                "toolhost.yaml line 5, column 10: 'scheduling.grace' is 1s, shorter than twice"
                    + " 'scheduling.poll_interval' (1s): fires would be recorded missed while they"
                    + " wait for a poll"));
  }

  @Test
  void aJdbcStoreRefusesAPasswordInItsUrlAndKeysOfTheEmbeddedStore() {
    String yaml =
        """
        scheduling:
          store: jdbc:postgresql://db:5432/toolhost?password=hunter2
          state_dir: state
          password_env: 1BAD
        """;
    assertThatThrownBy(() -> parse(yaml))
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            String.join(
                "\n",
                "toolhost.yaml line 2, column 10: 'scheduling.store' holds a password; name the"
                    + " variable that holds it in 'scheduling.password_env' instead",
                "toolhost.yaml line 3, column 14: 'scheduling.state_dir' is for the embedded store,"
                    + " and 'scheduling.store' is a JDBC URL",
                "toolhost.yaml line 4, column 17: 'scheduling.password_env' is '1BAD' (expected the"
                    + " name of an environment variable, such as SCHEDULES_DB_PASSWORD; the password"
                    + " itself never goes in the config)"));
  }

  @Test
  void aSchedulingAgentThatIsNotAnAgentIsRefusedWhenTheHostStarts() {
    String yaml =
        """
        scheduling:
          state_dir: %s
          agent: nobody
        """
            .formatted(dir.resolve("state"));
    assertThatThrownBy(() -> host(yaml))
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            "scheduling.agent names 'nobody', which is not an agent of the 'agents:' section");
  }

  /**
   * A host with the scheduling extension and one more that registers {@code whoami} (a tool that
   * says whom its call is made for) and grants it to the {@code scheduled} profile.
   */
  private static TestHost hostWithWhoAmI(String yaml) {
    StartingExtension whoami =
        new StartingExtension(
            "whoami",
            host -> {
              host.registry()
                  .register(
                      new ToolSpec(
                          "whoami",
                          "Says the user of this call.",
                          tools.jackson.databind.json.JsonMapper.shared()
                              .createObjectNode()
                              .put("type", "object"),
                          "builtin:test"),
                      (call, arguments) ->
                          ToolResult.success("user=" + call.user().orElse("(none)")));
              host.allowTools("scheduled", "whoami");
            });
    return TestHost.builder()
        .config(yaml)
        .extensions(List.of(new SchedulingExtension(), whoami))
        .start();
  }

  private static ToolResult as(
      TestHost host, String user, String profile, String tool, String args) {
    return host.call(profile, ToolCall.of(tool, args).withUser(user));
  }

  @Test
  void aProfileThatDeniesAToolCannotScheduleIt() {
    String yaml =
        """
        profiles:
          limited:
            extends: main
            deny_tools: [whoami]
        scheduling:
          state_dir: %s
          fires_may_schedule: true
        """
            .formatted(dir.resolve("state"));
    try (TestHost host = hostWithWhoAmI(yaml)) {
      String task =
          "{\"name\": \"probe\", \"cron\": \"0 9 * * *\", \"description\": \"x\","
              + " \"tool\": \"whoami\", \"arguments\": {}}";

      ToolResult limited = as(host, "mallory", "limited", "schedule_task", task);
      ToolResult main = as(host, "alice", "main", "schedule_task", task);

      assertThat(limited.isError()).isTrue();
      assertThat(limited.text())
          .isEqualTo(
              "tool 'whoami' cannot run in a scheduled task: it is not one of your tools, and a"
                  + " task does only what its owner may.");
      assertThat(main.isError()).as(main.text()).isFalse();
    }
  }

  @Test
  void oneUsersTasksAreNotAnothersToListReplaceOrCancel() {
    String yaml = "scheduling:\n  state_dir: %s\n".formatted(dir.resolve("state"));
    try (TestHost host = host(yaml)) {
      String remind =
          "{\"name\": \"remind\", \"cron\": \"0 9 * * *\", \"description\": \"%s\","
              + " \"tool\": \"list_tool_guides\", \"arguments\": {}}";
      as(host, "alice", "main", "schedule_task", remind.formatted("alice's secret plan"));

      String bobsList = as(host, "bob", "main", "list_scheduled_tasks", "{}").text();
      ToolResult bobsCancel =
          as(host, "bob", "main", "cancel_scheduled_task", "{\"name\": \"remind\"}");
      ToolResult bobsOwn = as(host, "bob", "main", "schedule_task", remind.formatted("bob's plan"));
      String alicesList = as(host, "alice", "main", "list_scheduled_tasks", "{}").text();

      assertThat(bobsList).contains("No scheduled tasks.").doesNotContain("secret plan");
      assertThat(bobsCancel.isError()).isTrue();
      assertThat(bobsCancel.text()).contains("No scheduled task named 'remind'");
      // Bob's task of the same name is his own, not a replacement of alice's.
      assertThat(bobsOwn.text()).startsWith("Scheduled task 'remind'");
      assertThat(alicesList).contains("alice's secret plan").doesNotContain("bob's plan");
      assertThat(as(host, "bob", "main", "cancel_scheduled_task", "{\"name\": \"remind\"}").text())
          .isEqualTo("Cancelled task 'remind'.");
      assertThat(as(host, "alice", "main", "list_scheduled_tasks", "{}").text())
          .contains("alice's secret plan");
    }
  }

  @Test
  void aFireActsForItsOwnerAndFailsSayingSoWhenTheOwnerHasLostTheTool() throws Exception {
    String scheduling =
        """
        scheduling:
          state_dir: %s
          zone: UTC
          poll_interval: 200ms
        """
            .formatted(dir.resolve("state"));
    String allowing = "profiles:\n  helper:\n    extends: main\n" + scheduling;
    String denying =
        "profiles:\n  helper:\n    extends: main\n    deny_tools: [whoami]\n" + scheduling;
    ScheduledTask.Owner owner;
    try (TestHost host = hostWithWhoAmI(allowing)) {
      String cron = PinnedCron.at(PinnedCron.dueSoon(), ZoneOffset.UTC);
      ToolResult scheduled =
          as(
              host,
              "alice",
              "helper",
              "schedule_task",
              "{\"name\": \"whose\", \"cron\": \""
                  + cron
                  + "\", \"description\": \"x\", \"tool\": \"whoami\", \"arguments\": {}}");
      assertThat(scheduled.isError()).as(scheduled.text()).isFalse();

      TaskRun run = HostTasks.awaitRun(host, "alice/whose", TaskRun.Status.SUCCEEDED);

      assertThat(run.output()).isEqualTo("user=alice");
      owner =
          host.runtime().service(TaskScheduler.class).orElseThrow().tasks().stream()
              .map(TaskScheduler.TaskState::task)
              .filter(task -> task.id().equals("alice/whose"))
              .findFirst()
              .orElseThrow()
              .owner();
      assertThat(owner.profile()).contains("helper");
    }
    // The host restarts with helper no longer offering the tool: the next fire fails, saying so.
    try (TestHost host = hostWithWhoAmI(denying)) {
      TaskScheduler scheduler = host.runtime().service(TaskScheduler.class).orElseThrow();
      scheduler.schedule(
          ScheduledTask.toolCall(
                  "whose",
                  CronExpression.parse(PinnedCron.at(PinnedCron.dueSoon(), ZoneOffset.UTC)),
                  ZoneOffset.UTC,
                  "x",
                  true,
                  "whoami",
                  tools.jackson.databind.json.JsonMapper.shared().createObjectNode(),
                  Instant.now())
              .withOwner(owner));

      TaskRun failed = HostTasks.awaitRun(host, "alice/whose", TaskRun.Status.FAILED);

      assertThat(failed.output())
          .isEqualTo(
              "tool_not_found: the task's tool 'whoami' is no longer one of its owner's tools"
                  + " under the 'scheduled' profile.");
    }
  }
}
