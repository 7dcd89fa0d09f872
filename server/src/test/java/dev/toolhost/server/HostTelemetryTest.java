package dev.toolhost.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.toolhost.core.MethodTools;
import dev.toolhost.core.spi.ConfigException;
import dev.toolhost.host.HostConfig;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.json.jackson3.JacksonMcpJsonMapper;
import io.modelcontextprotocol.spec.McpSchema;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.proto.metrics.v1.Metric;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.io.IOException;
import java.net.BindException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.json.JsonMapper;

/**
 * Sends a real host's spans and metrics over OTLP/HTTP to a stand-in collector that decodes them
 * with the OTLP protobuf messages, configured by the config file and by the standard {@code OTEL_*}
 * variables.
 */
class HostTelemetryTest {

  private static final HttpClient CLIENT =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private static final String TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
  private static final String PARENT_SPAN_ID = "00f067aa0ba902b7";

  private OtlpCollector collector;
  private OtlpCollector other;

  @BeforeEach
  void startCollectors() throws IOException {
    collector = new OtlpCollector();
    other = new OtlpCollector();
  }

  @AfterEach
  void stopCollectors() {
    collector.close();
    other.close();
  }

  @AfterAll
  static void closeClient() {
    CLIENT.close();
  }

  @Test
  void spansAndMetricsOfToolCallsReachTheCollectorTheConfigNames() throws Exception {
    Host host = start(config("otlp_endpoint: " + collector.endpoint()), Map.of());

    HttpResponse<String> response = echo(host, "exported");
    // Closing flushes the batched spans and the last metrics.
    host.close();

    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(collector.spans())
        .extracting(OtlpCollector.ReceivedSpan::name)
        .containsExactlyInAnyOrder("POST /v1/tools/{name}/invoke", "execute_tool echo");
    OtlpCollector.ReceivedSpan request =
        collector.spans().stream()
            .filter(span -> span.name().startsWith("POST"))
            .findFirst()
            .orElseThrow();
    OtlpCollector.ReceivedSpan tool =
        collector.spans().stream()
            .filter(span -> span.name().equals("execute_tool echo"))
            .findFirst()
            .orElseThrow();
    assertThat(tool.attribute("gen_ai.operation.name")).hasValue("execute_tool");
    assertThat(tool.attribute("gen_ai.tool.name")).hasValue("echo");
    assertThat(tool.attribute("toolhost.tool.source")).hasValue("builtin:test");
    assertThat(tool.resourceAttribute("service.name")).hasValue("toolhost");
    assertThat(hex(tool.span().getTraceId().toByteArray())).isEqualTo(TRACE_ID);
    assertThat(tool.span().getParentSpanId()).isEqualTo(request.span().getSpanId());
    assertThat(hex(request.span().getParentSpanId().toByteArray())).isEqualTo(PARENT_SPAN_ID);
    assertThat(request.attribute("http.route")).hasValue("/v1/tools/{name}/invoke");
    assertThat(collector.metrics())
        .extracting(Metric::getName)
        .contains(
            "toolhost.tool.invocations",
            "toolhost.tool.invoke.duration",
            "http.server.request.duration");
    assertThat(collector.contentTypes()).containsOnly("application/x-protobuf");
    assertThat(other.spans()).isEmpty();
  }

  @Test
  void anMcpClientsTraceInTheCallsMetaIsTheParentOfTheToolsSpanAndAnUntracedCallStartsItsOwn()
      throws Exception {
    Host host = start(config("otlp_endpoint: " + collector.endpoint()), Map.of());
    McpSyncClient client =
        McpClient.sync(
                HttpClientStreamableHttpTransport.builder("http://127.0.0.1:" + host.port())
                    .endpoint("/mcp")
                    .jsonMapper(new JacksonMcpJsonMapper(JsonMapper.shared()))
                    .build())
            .requestTimeout(Duration.ofSeconds(30))
            .build();
    try {
      client.initialize();
      client.callTool(
          McpSchema.CallToolRequest.builder("echo")
              .arguments(Map.of("text", "traced"))
              .meta(Map.of("traceparent", "00-" + TRACE_ID + "-" + PARENT_SPAN_ID + "-01"))
              .build());
      client.callTool(
          McpSchema.CallToolRequest.builder("echo").arguments(Map.of("text", "untraced")).build());
    } finally {
      client.closeGracefully();
    }
    host.close();

    List<OtlpCollector.ReceivedSpan> tools =
        collector.spans().stream().filter(span -> span.name().equals("execute_tool echo")).toList();
    assertThat(tools).hasSize(2);
    assertThat(tools)
        .filteredOn(tool -> hex(tool.span().getTraceId().toByteArray()).equals(TRACE_ID))
        .singleElement()
        .satisfies(
            tool ->
                assertThat(hex(tool.span().getParentSpanId().toByteArray()))
                    .isEqualTo(PARENT_SPAN_ID));
    assertThat(tools)
        .filteredOn(tool -> !hex(tool.span().getTraceId().toByteArray()).equals(TRACE_ID))
        .singleElement()
        .satisfies(tool -> assertThat(tool.span().getParentSpanId().isEmpty()).isTrue());
  }

  @Test
  void aSecretInARecordedCallIsRedactedOnItsWayToTheCollector() throws Exception {
    // A GitHub token's shape, made at run time so that no scanner flags this file.
    Random random = new Random(16);
    StringBuilder token = new StringBuilder("ghp_");
    String alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789";
    for (int i = 0; i < 36; i++) {
      token.append(alphabet.charAt(random.nextInt(alphabet.length())));
    }
    Host host =
        start(
            """
            http:
              port: 0
            telemetry:
              record_content: true
              otlp_endpoint: %s
            """
                .formatted(collector.endpoint()),
            Map.of());

    HttpResponse<String> response = echo(host, "use " + token);
    host.close();

    assertThat(response.body()).contains("[REDACTED:github-pat]").doesNotContain(token);
    OtlpCollector.ReceivedSpan tool =
        collector.spans().stream()
            .filter(span -> span.name().equals("execute_tool echo"))
            .findFirst()
            .orElseThrow();
    // The caller's arguments held it too: the exporter redacts what the output scan never saw.
    assertThat(tool.attribute("gen_ai.tool.call.arguments"))
        .hasValueSatisfying(
            arguments ->
                assertThat(arguments).contains("[REDACTED:github-pat]").doesNotContain(token));
    assertThat(tool.attribute("gen_ai.tool.call.result"))
        .hasValueSatisfying(result -> assertThat(result).doesNotContain(token));
  }

  @Test
  void theStandardOtelVariablesConfigureTheExportWhenTheConfigNamesNoCollector() throws Exception {
    Host host =
        start(
            config("record_content: false"),
            Map.of(
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                collector.endpoint() + "/v1/traces",
                "OTEL_SERVICE_NAME",
                "toolhost-test",
                "OTEL_RESOURCE_ATTRIBUTES",
                "deployment.environment.name=test"));

    echo(host, "exported");
    host.close();

    // The request's span and the tool's.
    assertThat(collector.spans())
        .hasSize(2)
        .allSatisfy(
            span -> {
              assertThat(span.resourceAttribute("service.name")).hasValue("toolhost-test");
              assertThat(span.resourceAttribute("deployment.environment.name")).hasValue("test");
            });
    // Only the traces have an endpoint: the metrics exporter stays off.
    assertThat(collector.metrics()).isEmpty();
  }

  @Test
  void theConfigFileWinsOverTheVariables() throws Exception {
    Host host =
        start(
            config("otlp_endpoint: " + collector.endpoint()),
            Map.of("OTEL_EXPORTER_OTLP_ENDPOINT", other.endpoint().toString()));

    echo(host, "exported");
    host.close();

    assertThat(collector.spans()).hasSize(2);
    assertThat(other.spans()).isEmpty();
    assertThat(other.metrics()).isEmpty();
  }

  @Test
  void withoutAnEndpointNothingLeavesTheHost() throws Exception {
    // The SDK's own default would export to localhost:4318: listen there and see nothing come.
    OtlpCollector defaultPort;
    try {
      defaultPort = new OtlpCollector(4318);
    } catch (BindException e) {
      Assumptions.abort("port 4318, the OTLP default, is taken on this machine");
      return;
    }
    try (defaultPort) {
      Host host = start(config("record_content: false"), Map.of("OTEL_SERVICE_NAME", "quiet"));

      HttpResponse<String> response = echo(host, "kept");
      host.close();

      assertThat(response.statusCode()).isEqualTo(200);
      assertThat(defaultPort.spans()).isEmpty();
      assertThat(defaultPort.metrics()).isEmpty();
    }
  }

  @Test
  void aHostWhoseSpansGoNowhereDoesNotRecordThem() {
    // With nowhere to send spans, the SDK hands out a tracer that makes none.
    Host quiet = Host.builder(HostConfig.defaults()).environment(Map.of()).build();
    Host processed =
        Host.builder(HostConfig.defaults())
            .environment(Map.of())
            .spanProcessor(SimpleSpanProcessor.create(InMemorySpanExporter.create()))
            .build();
    Host exported = start(config("otlp_endpoint: " + collector.endpoint()), Map.of());

    try (quiet;
        processed;
        exported) {
      assertThat(recording(quiet)).isFalse();
      assertThat(recording(processed)).isTrue();
      assertThat(recording(exported)).isTrue();
    }
  }

  private static boolean recording(Host host) {
    Span span = host.openTelemetry().getTracer("test").spanBuilder("probe").startSpan();
    try {
      return span.isRecording();
    } finally {
      span.end();
    }
  }

  @Test
  @Timeout(60)
  void aCollectorThatIsDownNeitherFailsACallNorStopsTheHostFromClosing() throws Exception {
    URI down;
    try (ServerSocket socket = new ServerSocket(0)) {
      down = URI.create("http://127.0.0.1:" + socket.getLocalPort());
    }
    // The SDK logs each failed export through java.util.logging, at SEVERE with a stack trace:
    // here the failures are what the test is about, not news. The logger is held while silenced,
    // since java.util.logging keeps only weak references to its loggers.
    java.util.logging.Logger sdk = java.util.logging.Logger.getLogger("io.opentelemetry");
    java.util.logging.Level level = sdk.getLevel();
    sdk.setLevel(java.util.logging.Level.OFF);
    HttpResponse<String> response;
    try {
      Host host = start(config("otlp_endpoint: " + down), Map.of());
      response = echo(host, "still answered");
      host.close();
    } finally {
      sdk.setLevel(level);
    }

    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.body()).contains("still answered").contains("\"is_error\":false");
  }

  @Test
  void anOtelVariableTheSdkRefusesStopsTheHostNamingIt() {
    assertThatThrownBy(
            () ->
                Host.builder(HostConfig.parse(config("record_content: false"), "telemetry.yaml"))
                    .environment(Map.of("OTEL_TRACES_EXPORTER", "carrier-pigeon"))
                    .build())
        .isInstanceOf(ConfigException.class)
        .hasMessageStartingWith("telemetry: ")
        .hasMessageContaining("carrier-pigeon");
  }

  @Test
  void anOtlpEndpointThatIsNotAnHttpUrlIsRefusedWithItsPlace() {
    assertThatThrownBy(
            () ->
                HostConfig.parse(
                    """
                    telemetry:
                      otlp_endpoint: grpc://collector:4317
                    """,
                    "telemetry.yaml"))
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            "telemetry.yaml line 2, column 18: 'telemetry.otlp_endpoint' is"
                + " 'grpc://collector:4317' (expected the http:// or https:// URL of an OTLP/HTTP"
                + " collector, with no user or query, such as http://127.0.0.1:4318; credentials"
                + " go in OTEL_EXPORTER_OTLP_HEADERS)");
  }

  @Test
  void anOtlpEndpointWithAUserIsRefusedWithoutEchoingIt() {
    assertThatThrownBy(
            () ->
                HostConfig.parse(
                    """
                    telemetry:
                      otlp_endpoint: https://me:s3cret@collector:4318
                    """,
                    "telemetry.yaml"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("'telemetry.otlp_endpoint' is '(hidden: it holds a user)'")
        .message()
        .doesNotContain("s3cret");
  }

  private static String config(String telemetryLine) {
    return """
        http:
          port: 0
        telemetry:
          %s
        """
        .formatted(telemetryLine);
  }

  private static Host start(String config, Map<String, String> environment) {
    Host host =
        Host.builder(HostConfig.parse(config, "telemetry.yaml")).environment(environment).build();
    host.registry().registerAll(MethodTools.of(new HostApiTest.TestTools(), "builtin:test"));
    host.start();
    return host;
  }

  private static HttpResponse<String> echo(Host host, String text) throws Exception {
    return CLIENT.send(
        HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + host.port() + "/v1/tools/echo/invoke"))
            .header("Content-Type", "application/json")
            .header("traceparent", "00-" + TRACE_ID + "-" + PARENT_SPAN_ID + "-01")
            .POST(
                HttpRequest.BodyPublishers.ofString(
                    "{\"arguments\": {\"text\": \"" + text + "\"}}"))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private static String hex(byte[] bytes) {
    return HexFormat.of().formatHex(bytes);
  }
}
