package dev.toolhost.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.toolhost.bus.MessageBus;
import dev.toolhost.bus.RemoteToolExecutor;
import dev.toolhost.bus.ToolWorker;
import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolResult;
import dev.toolhost.exec.ExecTools;
import dev.toolhost.host.HostConfig;
import dev.toolhost.rabbitmq.RabbitBus;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The exec extension in a host: off without its section, scoped by profile, keeping the host's
 * secrets from sandboxed processes; and a remote script runner ({@code toolhost worker --tools
 * exec}) on the RabbitMQ at 127.0.0.1:5672 running scripts for a host that has no sandbox.
 */
@Timeout(120)
class HostExecTest {

  private static final URI BROKER = URI.create("amqp://guest:guest@127.0.0.1:5672/");
  private static final String TOKEN = "th-Exec9vQ2mL7xR4tN8wK1pB5cY3dF6gH0j";

  private final List<AutoCloseable> closing = new ArrayList<>();
  private Path base;
  private Process worker;
  private String group;

  @BeforeEach
  void makeRoot() throws IOException {
    base = Files.createTempDirectory(Path.of("/tmp"), "host-exec");
    Files.setPosixFilePermissions(base, PosixFilePermissions.fromString("rwxr-xr-x"));
  }

  @AfterEach
  void closeAll() throws Exception {
    if (worker != null) {
      worker.destroy();
      if (!worker.waitFor(20, TimeUnit.SECONDS)) {
        worker.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
      try (RabbitBus admin = RabbitBus.connect(BROKER)) {
        admin.deleteQueue(ToolWorker.queue(group));
      }
    }
    for (AutoCloseable each : closing.reversed()) {
      each.close();
    }
    try (Stream<Path> walk = Files.walk(base)) {
      walk.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
    }
  }

  private String execSection() {
    return """
        exec:
          workspace_root: %s/workspaces
          pass_env: [TOOLHOST_TOKEN, TZ]
        """
        .formatted(base);
  }

  @Test
  void aHostWithNoExecSectionRegistersNoneOfTheSandboxTools() {
    Host host =
        closeLater(
            Host.builder(HostConfig.parse("http:\n  port: 0\n", "plain.yaml"))
                .environment(Map.of())
                .build());

    for (String name : ExecTools.NAMES) {
      assertThat(host.registry().find(name)).as(name).isEmpty();
    }
  }

  @Test
  void aVariableTheSecretsSectionCallsSecretIsNotPassedThroughThoughTheExecSectionNamesIt()
      throws Exception {
    String url = "postgres://app:pw-" + UUID.randomUUID() + "@db.internal/app";
    Host host =
        closeLater(
            Host.builder(
                    HostConfig.parse(
                        "http:\n  port: 0\nsecrets:\n  secret_env: [DB_URL]\n"
                            + execSection().replace("pass_env: [", "pass_env: [DB_URL, "),
                        "exec.yaml"))
                .environment(Map.of("TOOLHOST_TOKEN", TOKEN, "TZ", "UTC", "DB_URL", url))
                .build());
    host.start();

    ToolResult result =
        host.dispatcher()
            .dispatch(
                host.toolSet("main"),
                ToolCall.of("shell", "{\"command\": \"env\"}").withSessionId("db-1"));

    assertThat(result.isError()).as(result.text()).isFalse();
    assertThat(result.text()).contains("TZ=UTC").doesNotContain("DB_URL").doesNotContain("pw-");
  }

  @Test
  void theToolsServeTheMainProfileNeitherSubagentsNorScheduledTasksAndNoHostSecretReachesThem()
      throws Exception {
    Host host =
        closeLater(
            Host.builder(HostConfig.parse("http:\n  port: 0\n" + execSection(), "exec.yaml"))
                .environment(Map.of("TOOLHOST_TOKEN", TOKEN, "TZ", "UTC"))
                .build());
    URI base = host.start();

    assertThat(host.toolSet("main").specs())
        .extracting(spec -> spec.name() + " " + spec.source())
        .contains(
            "shell builtin:exec",
            "exec builtin:exec",
            "file builtin:exec",
            "execute_python_script builtin:exec");
    for (String profile : List.of("subagent", "scheduled")) {
      assertThat(host.toolSet(profile).specs())
          .extracting(spec -> spec.name())
          .as(profile)
          .doesNotContainAnyElementsOf(ExecTools.NAMES);
    }
    HttpClient http = closeLater(HttpClient.newHttpClient());
    HttpResponse<String> response =
        http.send(
            HttpRequest.newBuilder(base.resolve("/v1/tools/shell/invoke"))
                .header("Content-Type", "application/json")
                .header("Authorization", "Bearer " + TOKEN)
                .POST(
                    HttpRequest.BodyPublishers.ofString(
                        "{\"arguments\": {\"command\": \"env | sort\"}, \"session_id\": \"web-1\"}"))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    JsonNode body = JsonMapper.shared().readTree(response.body());
    assertThat(body.get("is_error").asBoolean()).as(response.body()).isFalse();
    // The config passes TOOLHOST_TOKEN through by name, but a secret never passes.
    assertThat(body.get("content").asString())
        .contains("TZ=UTC\n", "HOME=" + this.base.toRealPath() + "/workspaces/web-1\n")
        .doesNotContain(TOKEN)
        .doesNotContain("TOOLHOST_TOKEN");
    HttpResponse<String> asSubagent =
        http.send(
            HttpRequest.newBuilder(base.resolve("/v1/tools/shell/invoke?profile=subagent"))
                .header("Content-Type", "application/json")
                .header("Authorization", "Bearer " + TOKEN)
                .POST(HttpRequest.BodyPublishers.ofString("{\"arguments\": {\"command\": \"id\"}}"))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(
            JsonMapper.shared().readTree(asSubagent.body()).path("error").path("code").asString())
        .as(asSubagent.body())
        .isEqualTo(ErrorCode.TOOL_NOT_FOUND.wireName());
  }

  /** Starts {@code toolhost worker --tools exec} as an operator does, in a process of its own. */
  private void startRunner() throws IOException {
    group = "scripts-" + UUID.randomUUID().toString().substring(0, 8);
    // Beside the workspaces, not above them: the config file's directory is protected.
    Path runnerConfig =
        Files.writeString(
            Files.createDirectories(base.resolve("runner")).resolve("runner.yaml"), execSection());
    String java = ProcessHandle.current().info().command().orElse("java");
    worker =
        new ProcessBuilder(
                java,
                "-cp",
                System.getProperty("java.class.path"),
                Main.class.getName(),
                "worker",
                "--bus",
                BROKER.toString(),
                "--group",
                group,
                "--config",
                runnerConfig.toString(),
                "--tools",
                "exec")
            .redirectError(ProcessBuilder.Redirect.DISCARD)
            .start();
    BufferedReader out =
        new BufferedReader(new InputStreamReader(worker.getInputStream(), StandardCharsets.UTF_8));
    assertThat(out.readLine()).startsWith("Toolhost worker ").contains("of group '" + group + "'");
  }

  @Test
  void aRemoteRunnerOnRabbitMqRunsAScriptForAHostWithNoSandbox() throws Exception {
    startRunner();

    // The host has no exec: section, so no sandbox of its own.
    RabbitBus bus = closeLater(RabbitBus.connect(BROKER));
    Host host =
        closeLater(
            Host.builder(HostConfig.parse("http:\n  port: 0\n", "no-sandbox.yaml"))
                .environment(Map.of())
                .service(MessageBus.class, bus)
                .build());
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> host.registry().find(ExecTools.PYTHON).isPresent());
    assertThat(host.registry().find(ExecTools.PYTHON).orElseThrow().spec().source())
        .isEqualTo(RemoteToolExecutor.source(group));

    ToolResult result =
        host.dispatcher()
            .dispatch(
                host.toolSet("main"),
                ToolCall.of(
                        ExecTools.PYTHON,
                        "{\"script\": \"import json, os\\nprint(json.dumps({'sum': 40 + 2,"
                            + " 'input': os.environ['ROCKBOT_INPUT']}))\", \"input_data\": \"hi\"}")
                    .withSessionId("remote-1")
                    .withTimeout(Duration.ofSeconds(30)));

    assertThat(result.isError()).as(result.text()).isFalse();
    assertThat(result.text()).isEqualTo("{\"sum\": 42, \"input\": \"hi\"}\n");
    JsonNode structured = ((ToolResult.Success) result).structured().orElseThrow();
    assertThat(structured.get("sandboxed").asBoolean()).isTrue();
    assertThat(structured.get("exit_code").asInt()).isZero();
    assertThat(base.resolve("workspaces/remote-1")).isDirectory();
    // The remote tools, being named as the sandbox tools, are denied to subagents all the same.
    assertThat(host.toolSet("subagent").specs())
        .extracting(spec -> spec.name())
        .doesNotContain(ExecTools.PYTHON);
  }

  @Test
  void whenTheRunnerIsKilledItsSandboxedProcessesDieWithIt() throws Exception {
    startRunner();
    RabbitBus bus = closeLater(RabbitBus.connect(BROKER));
    Host host =
        closeLater(
            Host.builder(HostConfig.parse("http:\n  port: 0\n", "no-sandbox.yaml"))
                .environment(Map.of())
                .service(MessageBus.class, bus)
                .build());
    await().atMost(Duration.ofSeconds(30)).until(() -> host.registry().find("shell").isPresent());
    Thread caller =
        Thread.ofVirtual()
            .start(
                () ->
                    host.dispatcher()
                        .dispatch(
                            host.toolSet("main"),
                            ToolCall.of("shell", "{\"command\": \"sleep 987501 & sleep 987502\"}")
                                .withTimeout(Duration.ofSeconds(60))));
    await().atMost(Duration.ofSeconds(20)).until(() -> commandLinesHolding("98750") >= 2);

    // kill -9: the runner's JVM ends with no chance to clean up; bwrap dies with it, and so does
    // every process of its PID namespace.
    worker.destroyForcibly().waitFor(10, TimeUnit.SECONDS);

    await()
        .pollDelay(Duration.ofSeconds(1))
        .atMost(Duration.ofSeconds(2))
        .until(() -> commandLinesHolding("98750") == 0);
    caller.interrupt();
    caller.join(Duration.ofSeconds(10));
  }

  /** How many of the machine's processes have the text in their command line. */
  private static long commandLinesHolding(String text) throws IOException {
    try (Stream<Path> entries = Files.list(Path.of("/proc"))) {
      return entries
          .filter(entry -> entry.getFileName().toString().chars().allMatch(Character::isDigit))
          .filter(
              entry -> {
                try {
                  return new String(
                          Files.readAllBytes(entry.resolve("cmdline")), StandardCharsets.UTF_8)
                      .contains(text);
                } catch (IOException e) {
                  return false;
                }
              })
          .count();
    }
  }

  @Test
  void aWorkerAskedForTheExecToolsOfAConfigWithoutThemSaysWhatIsMissing() {
    CommandRun run =
        CommandRun.of("worker", "--bus", "memory:", "--group", "scripts", "--tools", "exec");

    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.err())
        .contains(
            "--tools exec: the host of the default config has no builtin:exec tools (does --config"
                + " name a file with an 'exec:' section?)");
  }

  private <T extends AutoCloseable> T closeLater(T closeable) {
    closing.add(closeable);
    return closeable;
  }
}
