package dev.toolhost.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.bus.InMemoryResultStore;
import dev.toolhost.bus.MessageBus;
import dev.toolhost.bus.RemoteToolExecutor;
import dev.toolhost.bus.RemoteTools;
import dev.toolhost.bus.ToolServices;
import dev.toolhost.bus.ToolWorker;
import dev.toolhost.core.MethodTools;
import dev.toolhost.core.Tool;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import dev.toolhost.host.HostConfig;
import dev.toolhost.rabbitmq.RabbitBus;
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** The worker command and a host on the RabbitMQ at 127.0.0.1:5672, as an operator runs them. */
@Timeout(90)
class WorkerCommandTest {

  private static final URI BROKER = URI.create("amqp://guest:guest@127.0.0.1:5672/");

  private final String group = "wc-" + UUID.randomUUID().toString().substring(0, 8);
  private final List<AutoCloseable> closing = new ArrayList<>();
  private Process process;

  /** A tool that says which worker answered. */
  public static final class Named {
    private final String name;

    Named(String name) {
      this.name = name;
    }

    @Tool(description = "Says which worker answered.")
    public String which() {
      return name;
    }
  }

  @AfterEach
  void stopAll() throws Exception {
    if (process != null) {
      process.destroy();
      if (!process.waitFor(20, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    }
    for (AutoCloseable each : closing.reversed()) {
      each.close();
    }
    try (RabbitBus admin = RabbitBus.connect(BROKER)) {
      admin.deleteQueue(ToolWorker.queue(group));
    }
  }

  @Test
  void aWorkerProcessHostsItsToolsForAHostAndSaysGoodbyeOnSigterm() throws Exception {
    RabbitBus listening = closeLater(RabbitBus.connect(BROKER));
    List<List<String>> announced = new CopyOnWriteArrayList<>();
    closeLater(
        listening.subscribe(
            ToolWorker.ANNOUNCE_TOPIC,
            delivery -> {
              delivery.ack();
              JsonNode body = JsonMapper.shared().readTree(delivery.message().body());
              if (body.path("group").asString("").equals(group)
                  && body.path("type").asString("").equals("announce")) {
                List<String> names = new ArrayList<>();
                body.path("tools").forEach(tool -> names.add(tool.path("name").asString()));
                announced.add(names);
              }
            }));
    String java = ProcessHandle.current().info().command().orElse("java");
    process =
        new ProcessBuilder(
                java,
                "-cp",
                System.getProperty("java.class.path"),
                Main.class.getName(),
                "worker",
                "--bus",
                BROKER.toString(),
                "--group",
                group)
            .redirectError(ProcessBuilder.Redirect.DISCARD)
            .start();
    BufferedReader out =
        new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    String banner = out.readLine();
    assertThat(banner)
        .startsWith("Toolhost worker ")
        .contains("of group '" + group + "' on amqp://guest:***@127.0.0.1:5672/");

    RabbitBus bus = closeLater(RabbitBus.connect(BROKER));
    ToolRegistry registry = new ToolRegistry();
    closeLater(new RemoteTools(bus, registry, new ToolServices(bus, registry)).start());
    waitFor(
        Duration.ofSeconds(20),
        () ->
            List.of("add", "echo", "worker_info").stream()
                .allMatch(name -> registry.find(name).isPresent()));
    assertThat(registry.find("add").orElseThrow().spec().source())
        .isEqualTo(RemoteToolExecutor.source(group));
    assertThat(registry.find("add").orElseThrow().spec().annotations().readOnly()).isTrue();
    // Only the tools it hosts for remote callers: not the guide tools every host has of its own.
    assertThat(announced).isNotEmpty().allMatch(List.of("add", "echo", "worker_info")::equals);
    ToolSet tools = ToolSet.of(registry, ToolProfiles.MAIN);
    ToolDispatcher dispatcher = ToolDispatcher.create();
    assertThat(
            dispatcher.dispatch(
                tools, ToolCall.of("add", "{\"a\":2,\"b\":3}").withTimeout(Duration.ofSeconds(10))))
        .extracting(ToolResult::text)
        .isEqualTo("5.0");
    assertThat(
            dispatcher
                .dispatch(
                    tools, ToolCall.of("worker_info", "{}").withTimeout(Duration.ofSeconds(10)))
                .text())
        .endsWith("pid " + process.pid());

    process.destroy();
    assertThat(process.waitFor(20, TimeUnit.SECONDS)).isTrue();
    assertThat(process.exitValue()).isZero();
    waitFor(Duration.ofSeconds(10), () -> registry.find("add").isEmpty());
  }

  @Test
  void theHelpSaysWhichGroupAWorkerJoinsWithoutGroup() {
    CommandRun help = CommandRun.of("worker", "--help");

    assertThat(help.exitCode()).isZero();
    assertThat(help.out().replaceAll("\\s+", " "))
        .contains("--group=NAME The worker group")
        .contains("Default: the group named 'default'.")
        .contains("--classpath=PATH");
  }

  @Test
  void aWorkerOnTheInMemoryBusWarnsOnceAtStartThatNoOtherProcessCanReachIt(@TempDir Path dir)
      throws Exception {
    try (ToolhostProcess worker = ToolhostProcess.start(dir, "worker", List.of("worker"))) {
      worker.awaitOut(
          Pattern.compile("^Toolhost worker .* on memory: hosting 3 tools"),
          Duration.ofSeconds(60));
      assertThat(worker.stop(Duration.ofSeconds(20))).isZero();

      assertThat(worker.err().lines().toList())
          .containsExactly(
              "toolhost worker: warning: on the in-memory bus (memory:) no other process can reach"
                  + " this worker; give --bus amqp://user:pass@host:5672/ (or TOOLHOST_BUS) to host"
                  + " tools for a host on RabbitMQ.");
    }
  }

  @Test
  void aWorkerHostsToolClassesFromTheJarsAndDirectoriesOfClasspath(@TempDir Path dir)
      throws Exception {
    Path classes = compile(dir, "acme.tools.Greeter", GREETER);
    Path jar = jar(compile(dir, "acme.tools.Farewell", FAREWELL), dir.resolve("farewell.jar"));
    RabbitBus bus = closeLater(RabbitBus.connect(BROKER));
    ToolRegistry registry = new ToolRegistry();
    closeLater(new RemoteTools(bus, registry, new ToolServices(bus, registry)).start());

    try (ToolhostProcess worker =
        ToolhostProcess.worker(
            dir,
            "worker",
            BROKER,
            group,
            "--classpath",
            classes.toString(),
            "--classpath",
            jar.toString(),
            "--tools",
            "acme.tools.Greeter",
            "--tools",
            "acme.tools.Farewell")) {
      worker.awaitOut(Pattern.compile("hosting 5 tools"), Duration.ofSeconds(60));
      waitFor(
          Duration.ofSeconds(20),
          () -> registry.find("greet").isPresent() && registry.find("farewell").isPresent());
      ToolSet tools = ToolSet.of(registry, ToolProfiles.MAIN);
      ToolDispatcher dispatcher = ToolDispatcher.create();

      assertThat(
              dispatcher
                  .dispatch(
                      tools,
                      ToolCall.of("greet", "{\"name\":\"Ada\"}")
                          .withTimeout(Duration.ofSeconds(10)))
                  .text())
          .isEqualTo("Hello, Ada!");
      assertThat(
              dispatcher
                  .dispatch(
                      tools,
                      ToolCall.of("farewell", "{\"name\":\"Ada\"}")
                          .withTimeout(Duration.ofSeconds(10)))
                  .text())
          .isEqualTo("Goodbye, Ada.");
      assertThat(registry.find("greet").orElseThrow().spec().source())
          .isEqualTo(RemoteToolExecutor.source(group));
      assertThat(worker.stop(Duration.ofSeconds(20))).isZero();
      // Only the start warning of a worker that keeps its results in its own process.
      assertThat(worker.err().lines())
          .singleElement(org.assertj.core.api.InstanceOfAssertFactories.STRING)
          .contains("keeps call results in this process only")
          .contains("--results-redis");
    }
  }

  @Test
  void aClasspathEntryThatIsMissingOrAClassInNoneIsNamed(@TempDir Path dir) throws Exception {
    Path classes = compile(dir, "acme.tools.Greeter", GREETER);
    Path missing = dir.resolve("missing.jar");

    CommandRun noEntry =
        CommandRun.of(
            "worker",
            "--classpath",
            classes + File.pathSeparator + missing,
            "--tools",
            "acme.tools.Greeter");
    CommandRun noClass = CommandRun.of("worker", "--tools", "acme.tools.Greeter");
    CommandRun notThere =
        CommandRun.of("worker", "--classpath", classes.toString(), "--tools", "acme.tools.Nope");

    assertThat(noEntry.exitCode()).isEqualTo(2);
    assertThat(noEntry.err()).contains("--classpath " + missing + ": no such jar or directory");
    assertThat(noClass.exitCode()).isEqualTo(2);
    assertThat(noClass.err())
        .contains(
            "--tools acme.tools.Greeter: no such class on the launcher's class path (name the jar"
                + " or directory that holds it with --classpath)");
    assertThat(notThere.exitCode()).isEqualTo(2);
    assertThat(notThere.err())
        .contains("--tools acme.tools.Nope: no such class on the class path or in --classpath");
  }

  private static final String GREETER =
      """
      package acme.tools;

      import dev.toolhost.core.Param;
      import dev.toolhost.core.Tool;

      public class Greeter {
        @Tool(description = "Greets someone.")
        public String greet(@Param(description = "Whom to greet.") String name) {
          return "Hello, " + name + "!";
        }
      }
      """;

  private static final String FAREWELL =
      """
      package acme.tools;

      import dev.toolhost.core.Param;
      import dev.toolhost.core.Tool;

      public class Farewell {
        @Tool(description = "Says goodbye.")
        public String farewell(@Param(description = "To whom.") String name) {
          return "Goodbye, " + name + ".";
        }
      }
      """;

  /**
   * Compiles one class, as a user builds their tools (with {@code -parameters}), into a directory
   * of its own under {@code dir}, and returns that directory.
   */
  private static Path compile(Path dir, String name, String source) throws Exception {
    String simple = name.substring(name.lastIndexOf('.') + 1);
    Path sources = Files.createDirectories(dir.resolve("src-" + simple));
    Path file = sources.resolve(simple + ".java");
    Files.writeString(file, source);
    Path classes = Files.createDirectories(dir.resolve("classes-" + simple));
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    StringWriter messages = new StringWriter();
    Boolean compiled;
    try (StandardJavaFileManager files = javac.getStandardFileManager(null, null, null)) {
      compiled =
          javac
              .getTask(
                  messages,
                  files,
                  null,
                  List.of(
                      "-parameters",
                      "-classpath",
                      System.getProperty("java.class.path"),
                      "-d",
                      classes.toString()),
                  null,
                  files.getJavaFileObjects(file))
              .call();
    }
    assertThat(compiled).as(messages.toString()).isTrue();
    return classes;
  }

  /** Puts the files of a directory of classes in a jar. */
  private static Path jar(Path classes, Path jar) throws Exception {
    try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar));
        Stream<Path> files = Files.walk(classes)) {
      for (Path file : files.filter(Files::isRegularFile).sorted().toList()) {
        out.putNextEntry(
            new JarEntry(classes.relativize(file).toString().replace(File.separatorChar, '/')));
        out.write(Files.readAllBytes(file));
        out.closeEntry();
      }
    }
    return jar;
  }

  @Test
  void aHostOnRabbitMqSpreadsHttpCallsOverTwoWorkersOfOneGroup() throws Exception {
    RabbitBus hostBus = closeLater(RabbitBus.connect(BROKER));
    Host host =
        closeLater(
            Host.builder(HostConfig.parse("http:\n  port: 0\n", "test.yaml"))
                .environment(Map.of())
                .service(MessageBus.class, hostBus)
                .build());
    for (String name : List.of("first", "second")) {
      RabbitBus bus = closeLater(RabbitBus.connect(BROKER));
      ToolRegistry hosted = new ToolRegistry();
      hosted.registerAll(MethodTools.of(new Named(name), "builtin:named"));
      closeLater(
          new ToolWorker(
                  bus,
                  group,
                  hosted,
                  ToolDispatcher.create(),
                  new InMemoryResultStore(),
                  8,
                  Duration.ofSeconds(5))
              .start());
    }
    URI base = host.start();
    waitFor(Duration.ofSeconds(10), () -> host.registry().find("which").isPresent());
    HttpClient client = closeLater(HttpClient.newHttpClient());

    Map<String, Integer> answered = new HashMap<>();
    for (int i = 0; i < 40; i++) {
      HttpResponse<String> response =
          client.send(
              HttpRequest.newBuilder(base.resolve("/v1/tools/which/invoke"))
                  .timeout(Duration.ofSeconds(10))
                  .header("Content-Type", "application/json")
                  .POST(HttpRequest.BodyPublishers.ofString("{}"))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
      var body = JsonMapper.shared().readTree(response.body());
      assertThat(body.get("is_error").asBoolean()).as(response.body()).isFalse();
      answered.merge(body.get("content").asString(), 1, Integer::sum);
    }

    assertThat(answered).containsOnlyKeys("first", "second");
    assertThat(host.registry().find("which").orElseThrow().spec().source())
        .isEqualTo(RemoteToolExecutor.source(group));
  }

  private <T extends AutoCloseable> T closeLater(T closeable) {
    closing.add(closeable);
    return closeable;
  }

  private static void waitFor(Duration time, BooleanSupplier condition)
      throws InterruptedException {
    Instant until = Instant.now().plus(time);
    while (!condition.getAsBoolean()) {
      assertThat(Instant.now()).as("condition met within %s", time).isBefore(until);
      Thread.sleep(20);
    }
  }

  @Test
  void aWorkerOnAnUnreachableBrokerFailsSayingWhereWithoutThePassword() {
    CommandRun run = CommandRun.of("worker", "--bus", "amqp://guest:s3cret@127.0.0.1:1/");

    assertThat(run.exitCode()).isEqualTo(CommandLine.ExitCode.SOFTWARE);
    assertThat(run.err())
        .contains("Cannot connect to the message bus at amqp://guest:***@127.0.0.1:1/")
        .doesNotContain("s3cret");
  }

  @Test
  void aWorkerWithABadUriFailsWithoutConnectingOrShowingThePassword() {
    CommandRun run = CommandRun.of("worker", "--bus", "amqp://u:pw-s3cret@127.0.0.1:notaport/");

    assertThat(run.exitCode()).isNotEqualTo(CommandLine.ExitCode.OK);
    assertThat(run.err()).contains("amqp://u:***@127.0.0.1:notaport/");
    assertThat(run.out() + run.err()).doesNotContain("pw-s3cret").doesNotContain("Toolhost worker");
  }
}
