package dev.toolhost.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The command line's conventional edges: a missing command is named, every command takes {@code
 * --log-level} and refuses a level that is not one, completion scripts are printed, and {@code
 * serve} stopped with SIGTERM closes the host and exits 0.
 */
@Timeout(120)
class CommandLineEdgesTest {

  @Test
  void withNoCommandItSaysACommandIsMissingAndShowsThem() {
    CommandRun run = CommandRun.of();

    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.err())
        .startsWith("toolhost: a command is missing; choose one below.\nUsage: toolhost")
        .contains("serve", "completion");
  }

  @Test
  void everyCommandTakesALogLevelAndRefusesOneThatIsNot() {
    CommandRun quiet = CommandRun.of("tools", "--log-level", "ERROR");
    CommandRun loud = CommandRun.of("search", "--log-level=loud", "weather");

    assertThat(quiet.exitCode()).isZero();
    assertThat(loud.exitCode()).isEqualTo(2);
    assertThat(loud.err())
        .startsWith(
            "Invalid value for option '--log-level': expected one of [trace, debug, info, warn,"
                + " error, off] (case-insensitive) but was 'loud'");
  }

  @Test
  void theOptionWinsOverTheVariableAndAnUnknownLevelChangesNothing() {
    String key = "org.slf4j.simpleLogger.defaultLogLevel";
    String before = System.getProperty(key);
    try {
      Main.logLevel(new String[] {"tools", "--log-level=Error"}, "debug");
      assertThat(System.getProperty(key)).isEqualTo("error");
      Main.logLevel(new String[] {"tools"}, "debug");
      assertThat(System.getProperty(key)).isEqualTo("debug");
      Main.logLevel(new String[] {"tools", "--log-level", "loud"}, null);
      assertThat(System.getProperty(key)).isEqualTo("debug");
    } finally {
      if (before == null) {
        System.clearProperty(key);
      } else {
        System.setProperty(key, before);
      }
    }
  }

  @Test
  void completionPrintsAScriptThatKnowsTheCommands() {
    CommandRun bash = CommandRun.of("completion", "bash");
    CommandRun zsh = CommandRun.of("completion", "zsh");
    CommandRun fish = CommandRun.of("completion", "fish");

    assertThat(bash.exitCode()).isZero();
    assertThat(bash.out())
        .contains("complete -F _complete_toolhost", "serve", "worker", "--config");
    assertThat(zsh.out()).startsWith("autoload -U +X compinit && compinit\n").endsWith(bash.out());
    assertThat(fish.exitCode()).isEqualTo(2);
    assertThat(fish.err()).contains("expected one of [bash, zsh]");
  }

  @Test
  void serveStoppedWithSigtermClosesTheHostAndExitsZero() throws Exception {
    String java = ProcessHandle.current().info().command().orElse("java");
    Process process =
        new ProcessBuilder(
                java,
                "-cp",
                System.getProperty("java.class.path"),
                Main.class.getName(),
                "serve",
                "--port",
                "0")
            .redirectError(ProcessBuilder.Redirect.DISCARD)
            .start();
    try {
      BufferedReader out =
          new BufferedReader(
              new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
      assertThat(out.readLine()).startsWith("Toolhost listening on http://127.0.0.1:");

      // kill rather than destroy(): destroy() also closes this side's end of the output.
      assertThat(
              new ProcessBuilder("kill", "-TERM", Long.toString(process.pid())).start().waitFor())
          .isZero();

      assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
      assertThat(process.exitValue()).isZero();
      assertThat(out.readLine()).isEqualTo("Toolhost stopping.");
    } finally {
      process.destroyForcibly();
    }
  }

  @Test
  void mcpOverStdioStoppedWithSigtermExitsZero() throws Exception {
    String java = ProcessHandle.current().info().command().orElse("java");
    Process process =
        new ProcessBuilder(
                java, "-cp", System.getProperty("java.class.path"), Main.class.getName(), "mcp")
            .redirectError(ProcessBuilder.Redirect.DISCARD)
            .start();
    try {
      process
          .getOutputStream()
          .write(
              ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
                      + "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
                      + "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}\n")
                  .getBytes(StandardCharsets.UTF_8));
      process.getOutputStream().flush();
      BufferedReader out =
          new BufferedReader(
              new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
      assertThat(out.readLine()).contains("\"id\":1", "\"result\"");

      assertThat(
              new ProcessBuilder("kill", "-TERM", Long.toString(process.pid())).start().waitFor())
          .isZero();

      assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
      assertThat(process.exitValue()).isZero();
    } finally {
      process.destroyForcibly();
    }
  }
}
