package dev.toolhost.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.toolhost.core.DispatchStage;
import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolGuide;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSpec;
import dev.toolhost.core.spi.CommandContext;
import dev.toolhost.core.spi.ConfigException;
import dev.toolhost.core.spi.HostCommand;
import dev.toolhost.core.spi.HostContext;
import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.core.spi.HostExtensionException;
import dev.toolhost.core.spi.HostExtensions;
import dev.toolhost.core.spi.ReadyHost;
import dev.toolhost.core.spi.Route;
import dev.toolhost.core.spi.RunningHost;
import dev.toolhost.core.spi.SectionReading;
import dev.toolhost.host.HostConfig;
import dev.toolhost.memory.WorkingMemory;
import dev.toolhost.testing.StartingExtension;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * A capability joins a host as one extension, with no edit to the server or core modules: its
 * config section checked by its schema, a tool, a guide, an interceptor at a stage and an HTTP
 * route; and the host starts extensions in order and closes the started ones in reverse.
 */
@Timeout(60)
class HostExtensionTest {

  private static final JsonMapper JSON = JsonMapper.builder().build();

  @TempDir Path dir;
  private Host host;

  @AfterEach
  void closeHost() {
    if (host != null) {
      host.close();
    }
  }

  /** The smallest real extension: a weather capability with its own config section. */
  static final class WeatherExtension implements HostExtension<WeatherExtension.Weather> {
    final List<String> readyWith = new ArrayList<>();

    /** The section: the city and the units. */
    record Weather(String city, String units) {}

    @Override
    public String name() {
      return "weather";
    }

    @Override
    public JsonNode configSchema() {
      return JSON.readTree(
          """
          {"type": "object", "additionalProperties": false,
           "properties": {
             "city": {"type": "string", "minLength": 1},
             "units": {"enum": ["metric", "imperial"]}}}
          """);
    }

    /** Its answers are kept in working memory, another extension's contract. */
    @Override
    public Set<Class<?>> requires() {
      return Set.of(WorkingMemory.class);
    }

    /** {@code toolhost weather}: the tool's answer, from a host of the command line's config. */
    @Override
    public List<HostCommand> commands() {
      return List.of(WeatherCommand::new);
    }

    @Override
    public Weather read(JsonNode section, SectionReading reading) {
      return new Weather(
          section.path("city").asString("Lyon"), section.path("units").asString("metric"));
    }

    @Override
    public void start(HostContext host, Optional<Weather> config) {
      String city = config.map(Weather::city).orElse("Lyon");
      String units = config.map(Weather::units).orElse("metric");
      host.registry()
          .register(
              ExecutableTool.of(
                  new ToolSpec(
                      "weather_now",
                      "Tells the weather in the configured city.",
                      (ObjectNode)
                          JSON.readTree("{\"type\": \"object\", \"additionalProperties\": false}"),
                      "builtin:weather"),
                  (call, arguments) ->
                      ToolResult.success("Sunny in " + city + ", 21 " + units + " degrees")));
      host.guide(new ToolGuide("weather", "How to read the weather.", "# Weather\n"));
      // Output scan: the word "Sunny" is this extension's secret, for the test's sake.
      host.interceptor(
          DispatchStage.OUTPUT_SCAN,
          chain -> ToolResult.success(chain.proceed(chain.call()).text().replace("Sunny", "***")));
      host.route(
          new Route(
              "GET",
              "/v1/weather",
              request ->
                  Route.Answer.json(
                      "{\"city\": \""
                          + city
                          + "\", \"asked\": \""
                          + request.parameter("q").orElse("")
                          + "\"}")));
      host.route(
          new Route(
              "GET",
              "/v1/weather/headers",
              request ->
                  Route.Answer.json(
                      "{\"authorization\": \""
                          + request.header("Authorization").orElse("none")
                          + "\", \"cookie\": \""
                          + request.header("Cookie").orElse("none")
                          + "\", \"units\": \""
                          + request.header("X-Units").orElse("none")
                          + "\"}")));
      Route forecast =
          new Route(
              "GET",
              "/v1/weather/{city}/forecast",
              request -> Route.Answer.json("{\"forecast\": \"" + request.path() + "\"}"));
      host.route(
          new Route(
              "GET",
              "/v1/weather/{city}/forecast",
              request ->
                  Route.Answer.json(
                      "{\"forecast\": \""
                          + forecast.variable(request.path()).orElseThrow()
                          + "\"}")));
      // Another extension's service, found through the context.
      host.service(WorkingMemory.class).orElseThrow();
    }

    @Override
    public void ready(ReadyHost host) {
      readyWith.add(host.dispatcher().getClass().getSimpleName());
    }
  }

  @Test
  void anExtensionAddsASectionAToolAGuideAnInterceptorAndARoute() throws Exception {
    Path file = dir.resolve("toolhost.yaml");
    Files.writeString(file, "http:\n  port: 0\nweather:\n  city: Nantes\n  units: metric\n");
    WeatherExtension weather = new WeatherExtension();
    host =
        Host.builder(HostConfig.load(file, List.of(new WeatherExtension())))
            .environment(Map.of())
            .extension(weather)
            .build();
    int port = host.start().getPort();

    ToolResult now =
        host.dispatcher().dispatch(host.toolSet("main"), ToolCall.of("weather_now", "{}"));
    ToolResult guides =
        host.dispatcher().dispatch(host.toolSet("main"), ToolCall.of("list_tool_guides", "{}"));
    RequestGuardTest.Answer route =
        RequestGuardTest.send(
            port, "GET", "/v1/weather?q=today", "127.0.0.1:" + port, List.of(), "");
    RequestGuardTest.Answer crossSite =
        RequestGuardTest.send(
            port,
            "GET",
            "/v1/weather",
            "127.0.0.1:" + port,
            List.of("Origin: http://evil.example"),
            "");

    assertThat(now.text()).isEqualTo("*** in Nantes, 21 metric degrees");
    assertThat(guides.text()).contains("weather");
    assertThat(route.status()).isEqualTo(200);
    assertThat(route.body()).isEqualTo("{\"city\": \"Nantes\", \"asked\": \"today\"}");
    RequestGuardTest.Answer unknown =
        RequestGuardTest.send(port, "GET", "/v1/weathr", "127.0.0.1:" + port, List.of(), "");

    assertThat(crossSite.status()).isEqualTo(403);
    assertThat(unknown.status()).isEqualTo(404);
    assertThat(unknown.errorMessage()).contains("GET /v1/weather");
    assertThat(weather.readyWith).containsExactly("ToolDispatcher");
  }

  /** Starts a host on a free port with the weather extension alone; answers its port. */
  private int startWithWeather() {
    host =
        Host.builder(HostConfig.parse("http:\n  port: 0\n", "t.yaml"))
            .environment(Map.of())
            .extension(new WeatherExtension())
            .build();
    return host.start().getPort();
  }

  @Test
  void aRouteSeesTheRequestsHeadersButNotTheHostsCredentials() throws Exception {
    int port = startWithWeather();

    RequestGuardTest.Answer seen =
        RequestGuardTest.send(
            port,
            "GET",
            "/v1/weather/headers",
            "127.0.0.1:" + port,
            List.of("Authorization: Bearer host-token", "Cookie: s=1", "X-Units: metric"),
            "");

    assertThat(seen.status()).isEqualTo(200);
    assertThat(seen.body())
        .isEqualTo("{\"authorization\": \"none\", \"cookie\": \"none\", \"units\": \"metric\"}");
  }

  @Test
  void aRouteWithAVariableSegmentMatchesOneSegmentBehindTheSameGuard() throws Exception {
    int port = startWithWeather();
    String hostHeader = "127.0.0.1:" + port;

    RequestGuardTest.Answer served =
        RequestGuardTest.send(port, "GET", "/v1/weather/paris/forecast", hostHeader, List.of(), "");
    RequestGuardTest.Answer twoSegments =
        RequestGuardTest.send(port, "GET", "/v1/weather/a/b/forecast", hostHeader, List.of(), "");
    RequestGuardTest.Answer wrongMethod =
        RequestGuardTest.send(
            port, "DELETE", "/v1/weather/paris/forecast", hostHeader, List.of(), "");
    RequestGuardTest.Answer crossSite =
        RequestGuardTest.send(
            port,
            "GET",
            "/v1/weather/paris/forecast",
            hostHeader,
            List.of("Origin: http://evil.example"),
            "");
    RequestGuardTest.Answer exact =
        RequestGuardTest.send(port, "GET", "/v1/weather?q=x", hostHeader, List.of(), "");

    assertThat(served.status()).isEqualTo(200);
    assertThat(served.body()).isEqualTo("{\"forecast\": \"paris\"}");
    assertThat(twoSegments.status()).isEqualTo(404);
    assertThat(twoSegments.errorMessage()).contains("GET /v1/weather/{city}/forecast");
    assertThat(wrongMethod.status()).isEqualTo(405);
    assertThat(crossSite.status()).isEqualTo(403);
    assertThat(exact.status()).isEqualTo(200);
  }

  @Test
  void aTypoInAnExtensionsSectionIsRefusedWithItsPlace() throws Exception {
    Path file = dir.resolve("toolhost.yaml");
    Files.writeString(file, "weather:\n  city: Nantes\n  unit: metric\n");
    Path misnamed = dir.resolve("misnamed.yaml");
    Files.writeString(misnamed, "wether:\n  city: Nantes\n");

    assertThatThrownBy(() -> HostConfig.load(file, List.of(new WeatherExtension())))
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            file
                + " line 3, column 3: unknown key 'unit' under 'weather' (did you mean 'units'? expected one of: city,"
                + " units)");
    assertThatThrownBy(() -> HostConfig.load(misnamed, List.of(new WeatherExtension())))
        .isInstanceOf(ConfigException.class)
        .hasMessageStartingWith(misnamed + " line 1, column 1: unknown key 'wether'")
        .hasMessageContaining("weather");
  }

  /** The weather extension's command: prints what weather_now answers. */
  @CommandLine.Command(name = "weather", description = "Tells the weather in the config's city.")
  static final class WeatherCommand implements java.util.concurrent.Callable<Integer> {
    private final CommandContext context;

    @CommandLine.Spec private CommandLine.Model.CommandSpec spec;

    WeatherCommand(CommandContext context) {
      this.context = context;
    }

    @Override
    public Integer call() {
      try (RunningHost host = context.open()) {
        spec.commandLine()
            .getOut()
            .println(
                host.dispatcher()
                    .dispatch(host.toolSet("main"), ToolCall.of("weather_now", "{}"))
                    .text());
        return 0;
      }
    }
  }

  @Test
  void anExtensionsCommandJoinsTheCommandLineAndReadsItsSectionThroughTheConfigOption()
      throws Exception {
    Path file = dir.resolve("toolhost.yaml");
    Files.writeString(file, "weather:\n  city: Brest\n");
    List<HostExtension<?>> extensions = new ArrayList<>(HostExtensions.discovered());
    extensions.add(new WeatherExtension());
    java.io.StringWriter out = new java.io.StringWriter();
    CommandLine commandLine = Main.commandLine(extensions);
    commandLine.setOut(new java.io.PrintWriter(out, true));

    int exit = commandLine.execute("weather", "--config", file.toString());
    String help = commandLine.getUsageMessage();

    assertThat(exit).isZero();
    assertThat(out.toString()).isEqualTo("*** in Brest, 21 metric degrees\n");
    assertThat(help).contains("weather").contains("Tells the weather in the config's city.");
  }

  /** An extension that opens a thread and a child process, and records its close. */
  static final class Resourceful implements HostExtension<Void> {
    private final String name;
    private final List<String> closed;
    private Thread thread;
    private Process child;

    Resourceful(String name, List<String> closed) {
      this.name = name;
      this.closed = closed;
    }

    @Override
    public String name() {
      return name;
    }

    @Override
    public Void read(JsonNode section, SectionReading reading) {
      return null;
    }

    @Override
    public void start(HostContext host, Optional<Void> config) throws Exception {
      thread =
          Thread.ofPlatform()
              .name("test-extension-" + name)
              .start(
                  () -> {
                    try {
                      Thread.sleep(Long.MAX_VALUE);
                    } catch (InterruptedException e) {
                      Thread.currentThread().interrupt();
                    }
                  });
      child = new ProcessBuilder("sleep", "600").start();
    }

    @Override
    public void close() throws Exception {
      thread.interrupt();
      thread.join(5_000);
      child.destroy();
      child.waitFor(5, TimeUnit.SECONDS);
      closed.add(name);
    }

    boolean leftRunning() {
      return thread.isAlive() || child.isAlive();
    }
  }

  @Test
  void anExtensionWhoseRequiredContractNoExtensionProvidesStopsTheHostBeforeAnythingOpens() {
    List<String> closed = new CopyOnWriteArrayList<>();
    Resourceful first = new Resourceful("first", closed);

    assertThatThrownBy(
            () ->
                Host.builder(HostConfig.defaults())
                    .environment(Map.of())
                    .extensions(List.of(first, new WeatherExtension()))
                    .build())
        .isInstanceOf(ConfigException.class)
        .hasMessageStartingWith(
            "Host extension 'weather' requires WorkingMemory, which no extension of this host"
                + " provides");
    assertThat(first.thread).isNull();
  }

  @Test
  void anExtensionThatLooksUpAContractItDidNotDeclareIsToldWhichAndWhy() {
    HostExtension<Void> undeclared =
        new StartingExtension("undeclared", host -> host.service(WorkingMemory.class));

    assertThatThrownBy(
            () ->
                Host.builder(HostConfig.defaults())
                    .environment(Map.of())
                    .extension(undeclared)
                    .build())
        .isInstanceOf(HostExtensionException.class)
        .hasMessageContaining(
            "'undeclared' looks up WorkingMemory but declares it neither in requires() nor in"
                + " uses()");
  }

  @Test
  void whenTheThirdExtensionFailsToStartTheFirstTwoAreClosedInReverseWithNothingLeftRunning() {
    List<String> closed = new CopyOnWriteArrayList<>();
    Resourceful first = new Resourceful("first", closed);
    Resourceful second = new Resourceful("second", closed);
    HostExtension<Void> third =
        new StartingExtension(
            "third",
            host -> {
              throw new IllegalStateException("port 9 is taken");
            });

    assertThatThrownBy(
            () ->
                Host.builder(HostConfig.defaults())
                    .environment(Map.of())
                    .extension(first)
                    .extension(second)
                    .extension(third)
                    .build())
        .isInstanceOf(HostExtensionException.class)
        .hasMessageContaining("'third' failed to start: port 9 is taken");

    assertThat(closed).containsExactly("second", "first");
    assertThat(first.leftRunning()).isFalse();
    assertThat(second.leftRunning()).isFalse();
    assertThat(Thread.getAllStackTraces().keySet())
        .extracting(Thread::getName)
        .noneMatch(name -> name.startsWith("test-extension-"));
  }
}
