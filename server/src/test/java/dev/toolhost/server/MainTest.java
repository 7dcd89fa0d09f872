package dev.toolhost.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** Runs the command line in-process, as {@code ./toolhost} would, with captured output. */
class MainTest {

  @TempDir Path dir;

  /** What one run printed and how it exited. */
  record Run(int exitCode, String out, String err) {}

  private static Run run(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine commandLine = Main.commandLine();
    commandLine.setOut(new PrintWriter(out, true));
    commandLine.setErr(new PrintWriter(err, true));
    int exitCode = commandLine.execute(args);
    return new Run(exitCode, out.toString(), err.toString());
  }

  @Test
  void toolsJsonPrintsTheListThatTheApiServes() throws Exception {
    Run run = run("tools", "--json");

    assertThat(run.exitCode()).isZero();
    assertThat(run.err()).isEmpty();
    JsonNode list = JsonMapper.builder().build().readTree(run.out());
    assertThat(list.get("profile").asString()).isEqualTo("main");
    assertThat(list.get("tools").valueStream().map(tool -> tool.at("/function/name").asString()))
        .containsExactly(
            "get_from_working_memory",
            "get_tool_guide",
            "list_tool_guides",
            "list_working_memory",
            "search_known_services",
            "search_working_memory");
    assertThat(list.at("/tools/1/type").asString()).isEqualTo("function");
    assertThat(list.at("/tools/1/source").asString()).isEqualTo("builtin:guides");
    assertThat(list.at("/tools/1/function/parameters/properties/name/type").asString())
        .isEqualTo("string");
  }

  @Test
  void searchPrintsWhatTheServicesSearchEndpointAnswers() throws Exception {
    // The defaults know no service: built-in tools are not services to route work to.
    Run found = run("search", "reschedule", "meeting");
    Run empty = run("search", " ");

    assertThat(found.exitCode()).isZero();
    assertThat(found.err()).isEmpty();
    assertThat(JsonMapper.builder().build().readTree(found.out()).toString())
        .isEqualTo("{\"results\":[]}");
    assertThat(empty.exitCode()).isEqualTo(2);
    assertThat(empty.err()).contains("The query is empty");
  }

  @Test
  void toolsPrintsATableOfNameSourceAndDescription() {
    Run run = run("tools");

    assertThat(run.exitCode()).isZero();
    assertThat(run.out().lines().toList())
        .hasSize(7)
        .first()
        .asString()
        .matches("NAME +SOURCE +DESCRIPTION");
    assertThat(run.out()).containsPattern("list_tool_guides +builtin:guides +Lists the available");
  }

  @Test
  void toolsReadsProfilesFromTheConfig() throws Exception {
    Path config = dir.resolve("config.yaml");
    Files.writeString(
        config,
        """
        profiles:
          readers:
            allow_tools: [list_tool_guides]
        """);

    Run run = run("tools", "--config", config.toString(), "--profile", "readers", "--json");

    assertThat(run.exitCode()).isZero();
    assertThat(run.out()).contains("\"list_tool_guides\"").doesNotContain("\"get_tool_guide\"");
  }

  @Test
  void toolsWithEveryBuiltinOffListsNothing() throws Exception {
    Path config = dir.resolve("config.yaml");
    Files.writeString(config, "builtins:\n  guides: false\n  memory: false\n  search: false\n");

    Run run = run("tools", "--config", config.toString());

    assertThat(run.exitCode()).isZero();
    assertThat(run.out().lines()).containsExactly("NAME  SOURCE  DESCRIPTION");
  }

  @Test
  void callPrintsTheToolsContent() {
    Run list = run("call", "list_tool_guides", "{}");
    Run guide = run("call", "get_tool_guide", "{\"name\": \"tool-calls\"}", "--timeout", "30s");

    assertThat(list.exitCode()).isZero();
    assertThat(list.out()).startsWith("Available tool guides:").contains("- tool-calls: ");
    assertThat(list.err()).isEmpty();
    assertThat(guide.exitCode()).isZero();
    assertThat(guide.out()).contains("tool_not_found");
  }

  @Test
  void callWithoutArgumentsSendsAnEmptyObject() {
    assertThat(run("call", "list_tool_guides").exitCode()).isZero();
  }

  @Test
  void callOfAMissingToolPrintsTheErrorAndExitsOne() {
    Run run = run("call", "list_tool_guide", "{}");

    assertThat(run.exitCode()).isEqualTo(1);
    assertThat(run.out()).isEmpty();
    assertThat(run.err())
        .startsWith("error [tool_not_found]: Tool 'list_tool_guide' does not exist.")
        .contains("list_tool_guides");
  }

  @Test
  void callWithInvalidArgumentsPrintsEveryViolation() {
    Run run = run("call", "get_tool_guide", "{\"nam\": 1}");

    assertThat(run.exitCode()).isEqualTo(1);
    assertThat(run.err()).startsWith("error [invalid_arguments]: ").contains("name");
  }

  @Test
  void callUnderAProfileThatHidesTheToolIsToolNotFound() throws Exception {
    Path config = dir.resolve("config.yaml");
    Files.writeString(config, "profiles:\n  nothing: {}\n");

    Run run =
        run(
            "call",
            "list_tool_guides",
            "{}",
            "--config",
            config.toString(),
            "--profile",
            "nothing");

    assertThat(run.exitCode()).isEqualTo(1);
    assertThat(run.err()).startsWith("error [tool_not_found]: ");
  }

  @Test
  void badUsagePrintsTheUsageAndExitsTwo() {
    Run unknownOption = run("tools", "--bogus");
    Run missingName = run("call");
    Run badTimeout = run("call", "list_tool_guides", "--timeout", "soon");
    Run nothing = run();

    assertThat(unknownOption.exitCode()).isEqualTo(2);
    assertThat(unknownOption.err()).contains("Unknown option: '--bogus'").contains("Usage:");
    assertThat(missingName.exitCode()).isEqualTo(2);
    assertThat(missingName.err()).contains("Missing required parameter").contains("NAME");
    assertThat(badTimeout.exitCode()).isEqualTo(2);
    assertThat(badTimeout.err()).contains("'soon' is not a positive duration");
    assertThat(nothing.exitCode()).isEqualTo(2);
    assertThat(nothing.err()).contains("Usage: toolhost").contains("serve").contains("call");
  }

  @Test
  void anUnknownProfileExitsTwoNamingTheKnownOnes() {
    Run run = run("tools", "--profile", "nobody");

    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.err())
        .startsWith("Unknown tool profile 'nobody'. Known profiles: main, subagent,");
  }

  @Test
  void aConfigErrorPrintsItsMessageWithoutAStackTraceAndExitsTwo() throws Exception {
    Path config = dir.resolve("config.yaml");
    Files.writeString(config, "http:\n  prot: 8081\n");

    for (String command : new String[] {"tools", "serve"}) {
      Run run = run(command, "--config", config.toString());

      assertThat(run.exitCode()).as(command).isEqualTo(2);
      assertThat(run.err())
          .as(command)
          .isEqualTo(
              config
                  + " line 2, column 3: unknown key 'prot' under 'http' (did you mean 'port'? expected one of:"
                  + " allowed_hosts, allowed_origins, host, port, token, token_env)"
                  + System.lineSeparator());
    }
  }

  @Test
  void aMissingConfigFileExitsTwo() {
    Run run = run("call", "list_tool_guides", "--config", dir.resolve("nope.yaml").toString());

    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.err()).contains("nope.yaml: no such config file").doesNotContain("\tat ");
  }

  @Test
  void serveRefusesANonLoopbackAddressWithoutATokenBeforeListening() throws Exception {
    Path config = dir.resolve("config.yaml");
    // A variable no one sets, so the token cannot come from this machine's environment.
    Files.writeString(config, "http:\n  token_env: TOOLHOST_TEST_UNSET_TOKEN\n");

    Run run = run("serve", "--config", config.toString(), "--host", "0.0.0.0", "--port", "0");

    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.err()).startsWith("Refusing to listen on 0.0.0.0 without a bearer token");
  }

  @Test
  void serveRefusesAPortOutOfRange() {
    Run run = run("serve", "--port", "70000");

    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.err()).contains("--port 70000 is out of range");
  }
}
