package dev.toolhost.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** Runs the command line in-process, as {@code ./toolhost} would, with captured output. */
class MainTest {

  @TempDir Path dir;

  @Test
  void toolsJsonPrintsTheListThatTheApiServes() throws Exception {
    CommandRun run = CommandRun.of("tools", "--json");

    assertThat(run.exitCode()).isZero();
    assertThat(run.err()).isEmpty();
    JsonNode list = JsonMapper.builder().build().readTree(run.out());
    assertThat(list.get("profile").asString()).isEqualTo("main");
    assertThat(list.get("tools").valueStream().map(tool -> tool.at("/function/name").asString()))
        .containsExactlyElementsOf(HostTools.NAMES);
    assertThat(list.at("/tools/1/type").asString()).isEqualTo("function");
    assertThat(list.at("/tools/1/source").asString()).isEqualTo("builtin:guides");
    assertThat(list.at("/tools/1/function/parameters/properties/name/type").asString())
        .isEqualTo("string");
  }

  @Test
  void searchPrintsWhatTheServicesSearchEndpointAnswers() throws Exception {
    // The defaults know no service: built-in tools are not services to route work to.
    CommandRun found = CommandRun.of("search", "reschedule", "meeting");
    CommandRun empty = CommandRun.of("search", " ");

    assertThat(found.exitCode()).isZero();
    assertThat(found.err()).isEmpty();
    assertThat(JsonMapper.builder().build().readTree(found.out()).toString())
        .isEqualTo("{\"results\":[]}");
    assertThat(empty.exitCode()).isEqualTo(2);
    assertThat(empty.err()).contains("The query is empty");
  }

  @Test
  void toolsPrintsATableOfNameSourceAndDescription() {
    CommandRun run = CommandRun.of("tools");

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

    CommandRun run =
        CommandRun.of("tools", "--config", config.toString(), "--profile", "readers", "--json");

    assertThat(run.exitCode()).isZero();
    assertThat(run.out()).contains("\"list_tool_guides\"").doesNotContain("\"get_tool_guide\"");
  }

  @Test
  void toolsWithEveryBuiltinOffListsNothing() throws Exception {
    Path config = dir.resolve("config.yaml");
    Files.writeString(config, "builtins:\n  guides: false\n  memory: false\n  search: false\n");

    CommandRun run = CommandRun.of("tools", "--config", config.toString());

    assertThat(run.exitCode()).isZero();
    assertThat(run.out().lines()).containsExactly("NAME  SOURCE  DESCRIPTION");
  }

  @Test
  void callPrintsTheToolsContent() {
    CommandRun list = CommandRun.of("call", "list_tool_guides", "{}");
    CommandRun guide =
        CommandRun.of("call", "get_tool_guide", "{\"name\": \"tool-calls\"}", "--timeout", "30s");

    assertThat(list.exitCode()).isZero();
    assertThat(list.out()).startsWith("Available tool guides:").contains("- tool-calls: ");
    assertThat(list.err()).isEmpty();
    assertThat(guide.exitCode()).isZero();
    assertThat(guide.out()).contains("tool_not_found");
  }

  @Test
  void callWithoutArgumentsSendsAnEmptyObject() {
    assertThat(CommandRun.of("call", "list_tool_guides").exitCode()).isZero();
  }

  @Test
  void callOfAMissingToolPrintsTheErrorAndExitsOne() {
    CommandRun run = CommandRun.of("call", "list_tool_guide", "{}");

    assertThat(run.exitCode()).isEqualTo(1);
    assertThat(run.out()).isEmpty();
    assertThat(run.err())
        .startsWith("error [tool_not_found]: Tool 'list_tool_guide' does not exist.")
        .contains("list_tool_guides");
  }

  @Test
  void callWithInvalidArgumentsPrintsEveryViolation() {
    CommandRun run = CommandRun.of("call", "get_tool_guide", "{\"nam\": 1}");

    assertThat(run.exitCode()).isEqualTo(1);
    assertThat(run.err()).startsWith("error [invalid_arguments]: ").contains("name");
  }

  @Test
  void callUnderAProfileThatHidesTheToolIsToolNotFound() throws Exception {
    Path config = dir.resolve("config.yaml");
    Files.writeString(config, "profiles:\n  nothing: {}\n");

    CommandRun run =
        CommandRun.of(
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
    CommandRun unknownOption = CommandRun.of("tools", "--bogus");
    CommandRun missingName = CommandRun.of("call");
    CommandRun badTimeout = CommandRun.of("call", "list_tool_guides", "--timeout", "soon");
    CommandRun nothing = CommandRun.of();

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
    CommandRun run = CommandRun.of("tools", "--profile", "nobody");

    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.err())
        .startsWith("Unknown tool profile 'nobody'. Known profiles: main, subagent,");
  }

  @Test
  void aConfigErrorPrintsItsMessageWithoutAStackTraceAndExitsTwo() throws Exception {
    Path config = dir.resolve("config.yaml");
    Files.writeString(config, "http:\n  prot: 8081\n");

    for (String command : new String[] {"tools", "serve"}) {
      CommandRun run = CommandRun.of(command, "--config", config.toString());

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
    CommandRun run =
        CommandRun.of("call", "list_tool_guides", "--config", dir.resolve("nope.yaml").toString());

    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.err()).contains("nope.yaml: no such config file").doesNotContain("\tat ");
  }

  @Test
  void serveRefusesANonLoopbackAddressWithoutATokenBeforeListening() throws Exception {
    Path config = dir.resolve("config.yaml");
    // A variable no one sets, so the token cannot come from this machine's environment.
    Files.writeString(config, "http:\n  token_env: TOOLHOST_TEST_UNSET_TOKEN\n");

    CommandRun run =
        CommandRun.of("serve", "--config", config.toString(), "--host", "0.0.0.0", "--port", "0");

    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.err()).startsWith("Refusing to listen on 0.0.0.0 without a bearer token");
  }

  @Test
  void serveRefusesAPortOutOfRange() {
    CommandRun run = CommandRun.of("serve", "--port", "70000");

    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.err()).contains("--port 70000 is out of range");
  }
}
