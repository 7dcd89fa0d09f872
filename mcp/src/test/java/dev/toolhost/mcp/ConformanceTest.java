package dev.toolhost.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.ToolAnnotations;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import dev.toolhost.core.ToolSpec;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The MCP conformance suite ({@code @modelcontextprotocol/conformance} 0.1.16) against the bridge,
 * as the client of its client scenarios ({@link ConformanceClient}), and against the gateway, as
 * the server of the server scenarios that apply to a server of tools only. A scenario passes when
 * none of its checks fails.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class ConformanceTest {

  private static final JsonMapper JSON = JsonMapper.shared();

  @TempDir Path temp;

  @ParameterizedTest
  @ValueSource(strings = {"initialize", "tools_call", "sse-retry"})
  void theBridgePassesTheClientScenario(String scenario) throws Exception {
    Path client = temp.resolve("client.sh");
    String command =
        TestProcesses.javaMain(ConformanceClient.class).stream()
            .map(ConformanceTest::quoted)
            .collect(Collectors.joining(" "));
    Files.writeString(client, "#!/bin/sh\nexec " + command + " \"$@\"\n");
    Files.setPosixFilePermissions(client, PosixFilePermissions.fromString("rwx------"));

    List<JsonNode> checks = run("client", "--command", client.toString(), "--scenario", scenario);

    assertThat(checks).as("the checks of scenario %s", scenario).isNotEmpty();
    assertThat(failures(checks)).as("failed checks of scenario %s", scenario).isEmpty();
    if (scenario.equals("sse-retry")) {
      // Reconnected after the stream's retry, with Last-Event-ID: not merely "not failed".
      assertThat(succeeded(checks))
          .contains(
              "client-sse-graceful-reconnect",
              "client-sse-retry-timing",
              "client-sse-last-event-id");
    }
  }

  @Test
  void theGatewayPassesTheServerScenariosThatApply() throws Exception {
    ToolRegistry registry = new ToolRegistry();
    registry.register(
        ExecutableTool.of(
            new ToolSpec(
                "echo",
                "Echoes its arguments.",
                JSON.createObjectNode().put("type", "object"),
                "test",
                ToolAnnotations.READ_ONLY),
            (call, arguments) -> ToolResult.success(arguments.toString())));
    try (McpGateway gateway =
            McpGateway.http(
                registry,
                ToolSet.of(registry, ToolProfiles.MAIN),
                ToolDispatcher.create(),
                "/mcp",
                List.of("127.0.0.1:*", "localhost:*"),
                List.of("http://127.0.0.1:*", "http://localhost:*"));
        ServedGateway http = ServedGateway.serve(gateway)) {
      for (String scenario :
          List.of(
              "server-initialize",
              "ping",
              "tools-list",
              "logging-set-level",
              "server-sse-multiple-streams",
              "dns-rebinding-protection")) {
        List<JsonNode> checks =
            run("server", "--url", http.endpoint().toString(), "--scenario", scenario);

        assertThat(checks).as("the checks of scenario %s", scenario).isNotEmpty();
        assertThat(failures(checks)).as("failed checks of scenario %s", scenario).isEmpty();
      }
    }
  }

  /** Runs the suite with the arguments and returns the checks it wrote. */
  private List<JsonNode> run(String... arguments) throws IOException, InterruptedException {
    Path results = Files.createTempDirectory(temp, "results");
    List<String> command = new ArrayList<>(NpmPackages.conformance(arguments));
    command.addAll(List.of("-o", results.toString()));
    Path log = temp.resolve("conformance.log");
    Process suite =
        new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    if (!suite.waitFor(120, TimeUnit.SECONDS)) {
      suite.destroyForcibly();
      throw new AssertionError("The conformance suite ran over 120 s: " + Files.readString(log));
    }
    List<JsonNode> checks = new ArrayList<>();
    try (Stream<Path> files = Files.walk(results)) {
      for (Path file :
          files.filter(f -> f.getFileName().toString().equals("checks.json")).toList()) {
        JSON.readTree(Files.readString(file, StandardCharsets.UTF_8)).forEach(checks::add);
      }
    }
    if (checks.isEmpty()) {
      throw new AssertionError("The conformance suite wrote no checks: " + Files.readString(log));
    }
    return checks;
  }

  private static List<String> failures(List<JsonNode> checks) {
    return checks.stream()
        .filter(check -> check.path("status").asString().equals("FAILURE"))
        .map(check -> check.path("id").asString() + ": " + check.path("errorMessage").asString())
        .toList();
  }

  private static List<String> succeeded(List<JsonNode> checks) {
    return checks.stream()
        .filter(check -> check.path("status").asString().equals("SUCCESS"))
        .map(check -> check.path("id").asString())
        .toList();
  }

  private static String quoted(String word) {
    return "'" + word.replace("'", "'\\''") + "'";
  }
}
