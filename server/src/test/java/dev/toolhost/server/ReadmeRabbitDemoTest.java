package dev.toolhost.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.toolhost.bus.ToolWorker;
import dev.toolhost.rabbitmq.RabbitBus;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The demo "Remote tools on RabbitMQ: a host and two workers" of {@code docs/remote-tools.md}, run
 * as written: its three {@code ./toolhost} commands, each a JVM started as the launcher starts it
 * (its class path, its logging), on the RabbitMQ at 127.0.0.1:5672, for 30 s, with the page's
 * calls. Two changes: the host listens on a free port rather than 8080, which may be taken where
 * the tests run; and the three use a virtual host of their own, made with {@code rabbitmqctl} for
 * the test, since every process of a virtual host hears every announcement: a worker of another
 * test on the same broker announcing a tool named like one of the demo's would make the host warn
 * of the clash (rightly), and a test of connection faults closes every connection of its virtual
 * host. Where {@code rabbitmqctl} cannot make one, the demo runs on the broker's default virtual
 * host, as written.
 */
@Timeout(180)
class ReadmeRabbitDemoTest {

  private static final Duration RUN = Duration.ofSeconds(30);
  private static final URI BROKER = URI.create("amqp://guest:guest@127.0.0.1:5672/");
  private static final Pattern LISTENING = Pattern.compile("^Toolhost listening on (\\S+) ");

  private final List<ToolhostProcess> processes = new ArrayList<>();
  private final List<String> groups = new ArrayList<>();
  private final String vhost = "toolhost-demo-" + UUID.randomUUID().toString().substring(0, 8);
  private boolean ownVhost;

  @BeforeEach
  void makeVhost() throws Exception {
    ownVhost =
        rabbitmqctl("add_vhost", vhost)
            && rabbitmqctl("set_permissions", "-p", vhost, "guest", ".*", ".*", ".*");
  }

  @AfterEach
  void stopAll() throws Exception {
    for (ToolhostProcess process : processes) {
      process.close();
    }
    if (ownVhost) {
      assertThat(rabbitmqctl("delete_vhost", vhost)).as("vhost %s deleted", vhost).isTrue();
      return;
    }
    try (RabbitBus admin = RabbitBus.connect(BROKER)) {
      for (String group : groups) {
        admin.deleteQueue(ToolWorker.queue(group));
      }
    }
  }

  /** Runs {@code rabbitmqctl -q ARGS}; whether it ran and succeeded. */
  private static boolean rabbitmqctl(String... args) throws InterruptedException {
    List<String> command = new ArrayList<>(List.of("rabbitmqctl", "-q"));
    command.addAll(List.of(args));
    try {
      Process process =
          new ProcessBuilder(command)
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.DISCARD)
              .start();
      if (!process.waitFor(60, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        return false;
      }
      return process.exitValue() == 0;
    } catch (IOException e) {
      return false;
    }
  }

  /** The {@code ./toolhost} command lines of the section's first shell block, in order. */
  static List<List<String>> readmeCommands() throws Exception {
    String readme = Files.readString(Path.of("..", "docs", "remote-tools.md"));
    int section = readme.indexOf("\n## Remote tools on RabbitMQ: a host and two workers\n");
    assertThat(section).as("the section of docs/remote-tools.md").isPositive();
    Matcher block = Pattern.compile("(?s)```sh\\n(.*?)```").matcher(readme);
    assertThat(block.find(section)).as("a shell block in the section").isTrue();
    return block
        .group(1)
        .lines()
        .filter(line -> line.startsWith("./toolhost "))
        .map(line -> List.of(line.substring("./toolhost ".length()).strip().split("\\s+")))
        .toList();
  }

  @Test
  void theDemoWithTwoWorkersRunsForThirtySecondsAndLogsNoWarning(@TempDir Path dir)
      throws Exception {
    List<List<String>> commands = readmeCommands();
    assertThat(commands).extracting(List::getFirst).containsExactly("worker", "worker", "serve");
    assertThat(commands).allMatch(command -> command.contains(BROKER.toString()));
    String group = commands.getFirst().get(commands.getFirst().indexOf("--group") + 1);
    groups.add(group);

    Instant started = Instant.now();
    List<ToolhostProcess> workers = new ArrayList<>();
    ToolhostProcess serve = null;
    for (int i = 0; i < commands.size(); i++) {
      List<String> args = new ArrayList<>(commands.get(i));
      if (ownVhost) {
        args.replaceAll(arg -> arg.equals(BROKER.toString()) ? BROKER + vhost : arg);
      }
      if (args.getFirst().equals("serve")) {
        args.addAll(List.of("--port", "0"));
        serve = start(dir, "serve", args);
      } else {
        workers.add(start(dir, "worker" + (i + 1), args));
      }
    }
    URI base = URI.create(serve.awaitOut(LISTENING, Duration.ofSeconds(60)).group(1));
    for (ToolhostProcess worker : workers) {
      worker.awaitOut(Pattern.compile("^Toolhost worker "), Duration.ofSeconds(60));
    }

    // The page's calls: the tool list, add, and worker_info twice.
    HttpClient client = HttpClient.newHttpClient();
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () -> names(get(client, base.resolve("/v1/tools"))),
            names -> names.containsAll(List.of("add", "echo", "worker_info")));
    assertThat(names(get(client, base.resolve("/v1/tools"))))
        .doesNotHaveDuplicates()
        .contains("list_tool_guides", "get_tool_guide");
    assertThat(invoke(client, base, "add", "{\"arguments\": {\"a\": 2, \"b\": 3}}"))
        .isEqualTo("5.0");
    List<String> pids = workers.stream().map(worker -> "pid " + worker.pid()).toList();
    for (int i = 0; i < 2; i++) {
      String answer = invoke(client, base, "worker_info", "{}");
      assertThat(pids).anyMatch(answer::endsWith);
    }

    // All three run for the rest of the 30 s.
    Duration left = RUN.minus(Duration.between(started, Instant.now()));
    if (left.isPositive()) {
      await()
          .during(left)
          .atMost(left.plusSeconds(10))
          .until(() -> processes.stream().allMatch(ToolhostProcess::alive));
    }
    for (ToolhostProcess worker : workers) {
      assertThat(worker.stop(Duration.ofSeconds(30))).as(worker.err()).isZero();
    }
    assertThat(serve.stop(Duration.ofSeconds(30))).as(serve.err()).isZero();

    for (ToolhostProcess process : processes) {
      // The one warning the demo's workers give by design: they keep results in their own
      // process (no --results-redis), and say at start what that guarantees.
      assertThat(process.err().lines().filter(line -> !line.contains("in this process only")))
          .as("standard error of toolhost %s", process.pid())
          .noneMatch(line -> line.contains(" WARN ") || line.contains(" ERROR "))
          .noneMatch(line -> line.toLowerCase(java.util.Locale.ROOT).contains("warning"))
          .noneMatch(line -> line.startsWith("\tat ") || line.contains("Exception"));
    }
    // Nothing but the host logs at INFO (a worker only its start warning), and a registry change
    // is one line, not one per profile.
    for (ToolhostProcess worker : workers) {
      assertThat(worker.err().lines()).allMatch(line -> line.contains("in this process only"));
    }
    assertThat(serve.err().lines())
        .filteredOn(line -> line.contains("Registered remote tools of group '" + group + "'"))
        .hasSize(1)
        .allMatch(line -> line.endsWith(": add, echo, worker_info"));
    assertThat(serve.err()).doesNotContain("Tool profile '");
  }

  private ToolhostProcess start(Path dir, String name, List<String> args) throws Exception {
    ToolhostProcess process = ToolhostProcess.start(dir, name, args);
    processes.add(process);
    return process;
  }

  private static List<String> names(JsonNode tools) {
    List<String> names = new ArrayList<>();
    tools.path("tools").forEach(tool -> names.add(tool.path("function").path("name").asString()));
    return names;
  }

  private static JsonNode get(HttpClient client, URI uri) throws Exception {
    HttpResponse<String> response =
        client.send(
            HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10)).build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    return JsonMapper.shared().readTree(response.body());
  }

  private static String invoke(HttpClient client, URI base, String tool, String body)
      throws Exception {
    HttpResponse<String> response =
        client.send(
            HttpRequest.newBuilder(base.resolve("/v1/tools/" + tool + "/invoke"))
                .timeout(Duration.ofSeconds(20))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    JsonNode answer = JsonMapper.shared().readTree(response.body());
    assertThat(answer.path("is_error").asBoolean()).as(response.body()).isFalse();
    return answer.path("content").asString();
  }
}
