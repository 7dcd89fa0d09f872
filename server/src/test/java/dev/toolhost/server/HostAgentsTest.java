package dev.toolhost.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.toolhost.agent.Agents;
import dev.toolhost.core.spi.ConfigException;
import dev.toolhost.host.HostConfig;
import dev.toolhost.testing.ScriptedModelServer;
import dev.toolhost.testing.ScriptedReply;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** Configured agents on the host: tools for serve, tools and call, checked where read. */
@Timeout(60)
class HostAgentsTest {

  private final ScriptedModelServer server = ScriptedModelServer.start();

  @TempDir Path dir;

  @AfterEach
  void close() {
    server.close();
  }

  private String config(String profile) {
    return """
        profiles:
          readers:
            allow_sources: [builtin:guides]
        agents:
          helper:
            base_url: %s
            model: helper-model
            api_key_env: NO_SUCH_KEY
            description: Answers briefly.
            profile: %s
        """
        .formatted(server.baseUrl(), profile);
  }

  private Path file(String text) throws Exception {
    Path file = dir.resolve("toolhost.yaml");
    Files.writeString(file, text);
    return file;
  }

  private static String[] run(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine commandLine = Main.commandLine();
    commandLine.setOut(new PrintWriter(out, true));
    commandLine.setErr(new PrintWriter(err, true));
    int exit = commandLine.execute(args);
    return new String[] {String.valueOf(exit), out.toString(), err.toString()};
  }

  @Test
  void anAgentNamingAnUnknownProfileIsAConfigErrorWithFileAndLine() {
    assertThatThrownBy(() -> HostConfig.parse(config("writers"), "toolhost.yaml"))
        .isInstanceOf(ConfigException.class)
        .hasMessageStartingWith(
            "toolhost.yaml line 10, column 14: agent 'helper' names an unknown profile 'writers'"
                + " (known profiles: main, subagent, ")
        .hasMessageEndingWith(", readers)");
  }

  @Test
  void anAgentMayNameAUserProfileOfTheSameFile() {
    HostConfig config = HostConfig.parse(config("readers"), "toolhost.yaml");

    assertThat(Sections.agents(config))
        .singleElement()
        .satisfies(a -> assertThat(a.profile()).isEqualTo("readers"));
  }

  @Test
  void serveOffersConfiguredAgentsAsToolsAndRunsThem() throws Exception {
    HostConfig config =
        HostConfig.parse(config("readers"), "toolhost.yaml")
            .withHttp(HostConfig.Http.defaults().withPort(0));
    server.enqueue(ScriptedReply.answer("Hello from helper."));
    try (Host host = new Host(config);
        HttpClient http = HttpClient.newHttpClient()) {
      URI base = host.start();

      JsonNode tools =
          JsonMapper.shared()
              .readTree(
                  http.send(
                          HttpRequest.newBuilder(base.resolve("v1/tools")).build(),
                          HttpResponse.BodyHandlers.ofString())
                      .body());
      HttpResponse<String> invoked =
          http.send(
              HttpRequest.newBuilder(base.resolve("v1/tools/helper/invoke"))
                  .header("Content-Type", "application/json")
                  .POST(
                      HttpRequest.BodyPublishers.ofString("{\"arguments\": {\"message\": \"Hi\"}}"))
                  .build(),
              HttpResponse.BodyHandlers.ofString());

      assertThat(tools.get("tools").valueStream().map(tool -> tool.at("/function/name").asString()))
          .contains("helper", "spawn_subagent");
      assertThat(
              tools
                  .get("tools")
                  .valueStream()
                  .filter(tool -> tool.at("/function/name").asString().equals("helper"))
                  .map(tool -> tool.get("source").asString()))
          .containsExactly(Agents.SOURCE_PREFIX + "helper");
      assertThat(invoked.statusCode()).as(invoked.body()).isEqualTo(200);
      assertThat(invoked.body()).contains("Hello from helper.");
      JsonNode request = server.takeRequest().json();
      assertThat(request.get("model").asString()).isEqualTo("helper-model");
      assertThat(request.at("/messages/0/content").asString()).isEqualTo("Hi");
      // The scripted answer reports 12 prompt tokens; the host serves them as the GenAI metric.
      String metrics =
          http.send(
                  HttpRequest.newBuilder(base.resolve("metrics")).build(),
                  HttpResponse.BodyHandlers.ofString())
              .body();
      assertThat(metrics.lines())
          .anyMatch(
              line ->
                  line.startsWith("gen_ai_client_token_usage_sum{")
                      && line.contains("gen_ai_request_model=\"helper-model\"")
                      && line.contains("gen_ai_token_type=\"input\"")
                      && line.endsWith(" 12.0"));
      assertThat(metrics.lines())
          .anyMatch(
              line ->
                  line.startsWith("gen_ai_client_operation_duration_seconds_count{")
                      && line.contains("gen_ai_request_model=\"helper-model\"")
                      && line.endsWith(" 1"));
    }
  }

  @Test
  void toolsAndCallSeeConfiguredAgents() throws Exception {
    Path file = file(config("readers"));
    server.enqueue(ScriptedReply.answer("Called."));

    String[] tools = run("tools", "--config", file.toString());
    String[] call = run("call", "helper", "{\"message\": \"Hi\"}", "--config", file.toString());

    assertThat(tools[0]).isEqualTo("0");
    assertThat(tools[1]).contains("helper").contains("agent:helper").contains("Answers briefly.");
    assertThat(call[0]).as(call[2]).isEqualTo("0");
    assertThat(call[1]).contains("Called.");
    assertThat(List.of(run("tools", "--config", file(config("nope")).toString())))
        .satisfies(
            run -> {
              assertThat(run.get(0)).isEqualTo("2");
              assertThat(run.get(2)).contains("line 10, column 14").contains("'nope'");
            });
  }

  @Test
  void aHostWithAgentsShipsTheAgentsGuideAndOneWithoutDoesNot() throws Exception {
    Path file = file(config("readers"));

    String[] listed = run("call", "list_tool_guides", "{}", "--config", file.toString());
    String[] guide =
        run("call", "get_tool_guide", "{\"name\": \"agents\"}", "--config", file.toString());
    String[] without = run("call", "list_tool_guides", "{}");

    assertThat(listed[0]).as(listed[2]).isEqualTo("0");
    assertThat(listed[1]).contains("- agents: How to hand work to other agents and to subagents");
    assertThat(guide[1])
        .contains("# Agents and subagents")
        .contains("spawn_subagent(task)")
        .contains("search_tools(query)");
    assertThat(without[0]).as(without[2]).isEqualTo("0");
    assertThat(without[1]).contains("- tool-calls:").doesNotContain("- agents:");
  }
}
