package dev.toolhost.scheduling;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpServer;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.spi.ConfigException;
import dev.toolhost.testing.TestHost;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A task's {@code delivery: {webhook: URL}} on a started host: a run is posted to a local HTTP
 * server on a host the config allows, and the run says so; a host the config does not list, a URL
 * that is not http, and a host that takes no webhooks are refused when the task is scheduled; a
 * post that fails is noted on the run, whose result stands.
 */
@Timeout(60)
class WebhookDeliveryTest {

  @TempDir Path dir;

  private HttpServer hooks;
  private final BlockingQueue<String> posted = new LinkedBlockingQueue<>();

  @BeforeEach
  void startHooks() throws Exception {
    hooks = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    hooks.createContext(
        "/hook",
        exchange -> {
          posted.add(
              exchange.getRequestMethod()
                  + " "
                  + exchange.getRequestHeaders().getFirst("Content-Type")
                  + " "
                  + new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8));
          exchange.sendResponseHeaders(204, -1);
          exchange.close();
        });
    hooks.start();
  }

  @AfterEach
  void stopHooks() {
    hooks.stop(0);
  }

  private String config(String webhooks) {
    return """
        scheduling:
          state_dir: %s
          zone: UTC
          poll_interval: 200ms
          grace: 1m
        """
            .formatted(dir.resolve("state"))
        + webhooks;
  }

  private static TestHost host(String yaml) {
    return TestHost.start(yaml, List.of(new SchedulingExtension()));
  }

  private static String task(String name, Instant due, String webhook) {
    return "{\"name\": \""
        + name
        + "\", \"cron\": \""
        + PinnedCron.at(due, ZoneOffset.UTC)
        + "\", \"description\": \"List the tasks\", \"run_once\": true, \"tool\":"
        + " \"list_scheduled_tasks\", \"arguments\": {}, \"delivery\": {\"webhook\": \""
        + webhook
        + "\"}}";
  }

  private static final String ALLOW_LOOPBACK =
      """
        webhooks:
          allow: [127.0.0.1]
          timeout: 5s
      """;

  @Test
  void aRunIsPostedToAnAllowedWebhookAndTheRunSaysSoWithoutItsSecret() throws Exception {
    String origin = "http://127.0.0.1:" + hooks.getAddress().getPort();
    try (TestHost host = host(config(ALLOW_LOOPBACK))) {
      String scheduled =
          HostTasks.schedule(
              host, task("listing", PinnedCron.dueSoon(), origin + "/hook?token=s3cret"));
      assertThat(scheduled).endsWith("Each run's result is posted to " + origin + ".");

      TaskRun run = HostTasks.awaitRun(host, "listing", TaskRun.Status.SUCCEEDED);
      String post = posted.poll(20, TimeUnit.SECONDS);

      assertThat(post).startsWith("POST application/json {");
      JsonNode body = JsonMapper.shared().readTree(post.substring(post.indexOf('{')));
      assertThat(body.get("task").asString()).isEqualTo("listing");
      assertThat(body.get("status").asString()).isEqualTo("succeeded");
      assertThat(body.get("due").asString()).isEqualTo(run.due().toString());
      assertThat(body.get("result").asString()).isEqualTo(run.output()).contains("Current time");
      TaskScheduler scheduler = host.runtime().service(TaskScheduler.class).orElseThrow();
      await()
          .atMost(Duration.ofSeconds(20))
          .until(() -> scheduler.runs("listing", 1).getFirst().delivery().isPresent());
      assertThat(scheduler.runs("listing", 1).getFirst().delivery())
          .hasValue("webhook: posted to " + origin + " (HTTP 204)");
    }
  }

  @Test
  void aWebhookOnAHostTheConfigDoesNotListOrNotHttpIsRefusedWhenScheduled() throws Exception {
    int port = hooks.getAddress().getPort();
    try (TestHost host = host(config(ALLOW_LOOPBACK))) {
      ToolResult unlisted =
          host.call(
              "schedule_task",
              task("other", PinnedCron.dueSoon(), "http://localhost:" + port + "/hook"));
      ToolResult file = host.call("schedule_task", task("file", PinnedCron.dueSoon(), "file:///x"));

      assertThat(unlisted.isError()).isTrue();
      assertThat(unlisted.text())
          .contains(
              "delivery: the webhook's host 'localhost' is not one this host posts to"
                  + " (scheduling.webhooks.allow lists them).");
      assertThat(file.isError()).isTrue();
      assertThat(file.text()).contains("only http and https URLs are fetched");
      assertThat(host.runtime().service(TaskScheduler.class).orElseThrow().count()).isZero();
    }
    try (TestHost host = host(config(""))) {
      ToolResult off =
          host.call(
              "schedule_task",
              task("off", PinnedCron.dueSoon(), "http://127.0.0.1:" + port + "/hook"));

      assertThat(off.isError()).isTrue();
      assertThat(off.text())
          .contains(
              "delivery by webhook is off on this host (scheduling.webhooks is not configured)");
    }
    assertThat(posted).isEmpty();
  }

  @Test
  void aPostThatFailsIsNotedOnTheRunWhoseResultStands() throws Exception {
    int closed;
    try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      closed = socket.getLocalPort();
    }
    try (TestHost host = host(config(ALLOW_LOOPBACK))) {
      HostTasks.schedule(
          host, task("unheard", PinnedCron.dueSoon(), "http://127.0.0.1:" + closed + "/hook"));

      TaskRun run = HostTasks.awaitRun(host, "unheard", TaskRun.Status.SUCCEEDED);
      TaskScheduler scheduler = host.runtime().service(TaskScheduler.class).orElseThrow();
      await()
          .atMost(Duration.ofSeconds(20))
          .until(() -> scheduler.runs("unheard", 1).getFirst().delivery().isPresent());

      TaskRun noted = scheduler.runs("unheard", 1).getFirst();
      assertThat(noted.output()).isEqualTo(run.output()).contains("Current time");
      assertThat(noted.status()).isEqualTo(TaskRun.Status.SUCCEEDED);
      assertThat(noted.delivery().orElseThrow())
          .startsWith("webhook: not posted to http://127.0.0.1:" + closed + ": ");
    }
  }

  @Test
  void webhooksThatAllowNoHostOrABadOneAreRefusedWithTheirPlaces() {
    assertThatThrownBy(() -> host(config("  webhooks:\n    allow: []\n")).close())
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("'scheduling.webhooks' allows no host");
    assertThatThrownBy(
            () -> host(config("  webhooks:\n    allow: [\"http://x/\", 0x7f.1]\n")).close())
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("'scheduling.webhooks.allow[0]' is 'http://x/'")
        .hasMessageContaining("'scheduling.webhooks.allow[1]' is '0x7f.1'");
  }
}
