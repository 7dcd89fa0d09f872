package dev.toolhost.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.core.spi.Route;
import dev.toolhost.memory.WorkingMemoryExtension;
import dev.toolhost.scheduling.HostTasks;
import dev.toolhost.scheduling.PinnedCron;
import dev.toolhost.scheduling.SchedulingExtension;
import dev.toolhost.scheduling.TaskRun;
import dev.toolhost.testing.RecordedRequest;
import dev.toolhost.testing.ScriptedModelServer;
import dev.toolhost.testing.ScriptedReply;
import dev.toolhost.testing.TestHost;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * An agent's turn scheduled on a started host with the scheduling extension: it runs against the
 * scripted model server under the {@code scheduled} profile and cannot call what that profile
 * denies; its run is served by the scheduling routes; a turn longer than the maximum run time is
 * recorded as timed out.
 */
@Timeout(60)
class ScheduledTurnTest {

  private static final List<HostExtension<?>> EXTENSIONS =
      List.of(new WorkingMemoryExtension(), new AgentsExtension(), new SchedulingExtension());

  private final ScriptedModelServer model = ScriptedModelServer.start();

  @TempDir Path dir;

  @AfterEach
  void close() {
    model.close();
  }

  private String config() {
    return ScriptedModelServer.agentSection(
            model.baseUrl(), "helper", "helper-model", "description: Does what it is asked later.")
        + """
        scheduling:
          state_dir: %s
          zone: UTC
          agent: helper
          poll_interval: 200ms
          grace: 1m
        """
            .formatted(dir.resolve("state"));
  }

  private static String text(Route.Answer answer) {
    return new String(answer.body(), StandardCharsets.UTF_8);
  }

  private static JsonNode get(TestHost host, String path) throws Exception {
    Route.Answer answer = host.request("GET", path, "");
    assertThat(answer.status()).as(text(answer)).isEqualTo(200);
    return JsonMapper.shared().readTree(text(answer));
  }

  @Test
  void aScheduledAgentTurnRunsUnderTheScheduledProfileAndCannotCallWhatItDenies() throws Exception {
    // The turn tries to schedule another task (denied under 'scheduled'), then answers.
    model.enqueue(
        ScriptedReply.toolCalls(
            ScriptedReply.call(
                "call_1",
                "schedule_task",
                "{\"name\": \"again\", \"cron\": \"* * * * *\", \"description\": \"Again\"}")));
    model.enqueue(ScriptedReply.answer("Reminder sent."));
    try (TestHost host = TestHost.start(config(), EXTENSIONS)) {
      Instant second = PinnedCron.dueSoon();

      String scheduled =
          HostTasks.schedule(
              host,
              "{\"name\": \"remind\", \"cron\": \""
                  + PinnedCron.at(second, ZoneOffset.UTC)
                  + "\", \"description\": \"Remind the team of the stand-up\", \"run_once\":"
                  + " true}");
      assertThat(scheduled)
          .startsWith(
              "Scheduled task 'remind' with cron '"
                  + PinnedCron.at(second, ZoneOffset.UTC)
                  + "', once. Next fire: "
                  + second.toString().replace("T", " ").replace("Z", "")
                  + " UTC (UTC+00:00). Current time: ");
      JsonNode listed = get(host, "/v1/schedules");
      assertThat(listed.get("zone").asString()).isEqualTo("UTC");
      assertThat(listed.at("/tasks/0/name").asString()).isEqualTo("remind");
      assertThat(listed.at("/tasks/0/next_fire").asString()).isEqualTo(second.toString());

      HostTasks.awaitRun(host, "remind", TaskRun.Status.SUCCEEDED);

      RecordedRequest first = model.takeRequest();
      assertThat(OfferedTools.names(first.json()))
          .contains("list_scheduled_tasks", "cancel_scheduled_task")
          .doesNotContain("schedule_task", "helper", "spawn_subagent");
      assertThat(first.json().at("/messages").toString())
          .contains("Remind the team of the stand-up");
      RecordedRequest second2 = model.takeRequest();
      JsonNode toolMessage =
          second2
              .json()
              .get("messages")
              .valueStream()
              .filter(message -> message.path("role").asString().equals("tool"))
              .findFirst()
              .orElseThrow();
      assertThat(toolMessage.get("content").asString())
          .startsWith("Tool 'schedule_task' does not exist.");

      JsonNode runs = get(host, "/v1/schedules/remind/runs");
      assertThat(runs.at("/runs/0/status").asString()).isEqualTo("succeeded");
      assertThat(runs.at("/runs/0/output").asString()).isEqualTo("Reminder sent.");
      assertThat(runs.at("/runs/0/due").asString()).isEqualTo(second.toString());
      // The one-time task is gone; the task it tried to schedule never existed.
      assertThat(get(host, "/v1/schedules").get("tasks").size()).isZero();
      Route.Answer unknown = host.request("GET", "/v1/schedules/nothing/runs", "");
      assertThat(unknown.status()).isEqualTo(404);
      assertThat(text(unknown)).contains("\"code\":\"not_found\"");
      Route.Answer badLimit =
          host.request("GET", "/v1/schedules/remind/runs", Map.of("limit", List.of("many")), "");
      assertThat(badLimit.status()).isEqualTo(400);
      // The code of docs/http-api.md, once bad_request here.
      assertThat(text(badLimit)).contains("\"code\":\"invalid_request\"");
    }
  }

  @Test
  void aTurnLongerThanTheMaximumRunTimeIsRecordedAsTimedOut() throws Exception {
    model.enqueue(
        ScriptedReply.stream().pause(Duration.ofSeconds(10)).text("Too late.").done().build());
    String yaml = config().replace("  grace: 1m\n", "  grace: 1m\n  max_run_time: 1s\n");
    try (TestHost host = TestHost.start(yaml, EXTENSIONS)) {
      Instant second = PinnedCron.dueSoon();
      HostTasks.schedule(
          host,
          "{\"name\": \"slow\", \"cron\": \""
              + PinnedCron.at(second, ZoneOffset.UTC)
              + "\", \"description\": \"Take your time\", \"run_once\": true}");
      TaskRun run = HostTasks.awaitRun(host, "slow", TaskRun.Status.FAILED);
      assertThat(run.output()).startsWith("timeout: ");
      assertThat(Duration.between(run.started().orElseThrow(), run.ended().orElseThrow()))
          .isLessThan(Duration.ofSeconds(8));
    }
  }
}
