package dev.toolhost.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.toolhost.bus.MessageBus;
import dev.toolhost.bus.RemoteToolExecutor;
import dev.toolhost.bus.ToolWorker;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolResult;
import dev.toolhost.exec.ExecTools;
import dev.toolhost.host.HostConfig;
import dev.toolhost.mcp.TestProcesses;
import dev.toolhost.rabbitmq.RabbitBus;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
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

/**
 * A remote script runner ({@code toolhost worker --tools exec}, a process of its own as an operator
 * starts it) on the RabbitMQ at 127.0.0.1:5672 running scripts for a host that has no sandbox. The
 * exec extension in a host is tested in its module ({@code HostExecTest}).
 */
@Timeout(120)
class ExecWorkerTest {

  private static final URI BROKER = URI.create("amqp://guest:guest@127.0.0.1:5672/");

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

  /** The runner's config: the sandbox, its workspaces in the test's directory. */
  private String execSection() {
    return "exec:\n  workspace_root: " + base + "/workspaces\n";
  }

  /** Starts {@code toolhost worker --tools exec} as an operator does, in a process of its own. */
  private void startRunner() throws IOException {
    group = "scripts-" + UUID.randomUUID().toString().substring(0, 8);
    // Beside the workspaces, not above them: the config file's directory is protected.
    Path runnerConfig =
        Files.writeString(
            Files.createDirectories(base.resolve("runner")).resolve("runner.yaml"), execSection());
    worker =
        new ProcessBuilder(
                TestProcesses.javaMain(
                    Main.class,
                    "worker",
                    "--bus",
                    BROKER.toString(),
                    "--group",
                    group,
                    "--config",
                    runnerConfig.toString(),
                    "--tools",
                    "exec"))
            .redirectError(ProcessBuilder.Redirect.DISCARD)
            .start();
    BufferedReader out =
        new BufferedReader(new InputStreamReader(worker.getInputStream(), StandardCharsets.UTF_8));
    assertThat(out.readLine()).startsWith("Toolhost worker ").contains("of group '" + group + "'");
  }

  /** A host with no exec: section, so no sandbox of its own, on the RabbitMQ the runner uses. */
  private Host hostOnTheBus() {
    RabbitBus bus = closeLater(RabbitBus.connect(BROKER));
    return closeLater(
        Host.builder(HostConfig.parse("http:\n  port: 0\n", "no-sandbox.yaml"))
            .environment(Map.of())
            .service(MessageBus.class, bus)
            .build());
  }

  @Test
  void aRemoteRunnerOnRabbitMqRunsAScriptForAHostWithNoSandbox() throws Exception {
    startRunner();

    Host host = hostOnTheBus();
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
    Host host = hostOnTheBus();
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
