package dev.toolhost.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.testing.ScriptedModelServer;
import dev.toolhost.testing.ScriptedReply;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** Configured agents on the command line: the tools and call commands see them. */
@Timeout(60)
class HostAgentsTest {

  private final ScriptedModelServer server = ScriptedModelServer.start();

  @TempDir Path dir;

  @AfterEach
  void close() {
    server.close();
  }

  private String config(String profile) {
    return ScriptedModelServer.agentSection(
        server.baseUrl(),
        "helper",
        "helper-model",
        "description: Answers briefly.",
        "profile: " + profile);
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
  void toolsAndCallSeeConfiguredAgents() throws Exception {
    Path file = file(config("main"));
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
              assertThat(run.get(2)).contains("line 7, column 14").contains("'nope'");
            });
  }
}
