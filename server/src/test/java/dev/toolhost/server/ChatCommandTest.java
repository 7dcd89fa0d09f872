package dev.toolhost.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.agent.ChatCommand;
import dev.toolhost.testing.ScriptedModelServer;
import java.io.ByteArrayInputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;

/**
 * The chat command as the command line runs it, through the server's command options, against the
 * dev model server's script. (The chat command's own tests are in the agent module.)
 */
@Timeout(30)
class ChatCommandTest {

  private final ScriptedModelServer server = ScriptedModelServer.start();
  private final StringWriter out = new StringWriter();
  private final StringWriter err = new StringWriter();

  @AfterEach
  void close() {
    server.close();
  }

  private int chat(String input, String... args) {
    CommandLine commandLine =
        CommandOptions.commandLine(
            context ->
                new ChatCommand(
                    context,
                    new ByteArrayInputStream(input.getBytes(StandardCharsets.UTF_8)),
                    false));
    commandLine.setOut(new PrintWriter(out, true));
    commandLine.setErr(new PrintWriter(err, true));
    return commandLine.execute(args);
  }

  @Test
  void scriptedChatWithNoConfigCallsABuiltInToolAndAnswersOneLineAtATime() {
    server.respondWith(DevCommand.ModelServer::script);

    int exit =
        chat(
            "Which guides are there?\nAnd again?\n",
            "--base-url",
            server.baseUrl().toString(),
            "--model",
            "scripted",
            "--api-key-env",
            "NO_SUCH_KEY");

    assertThat(exit).isZero();
    assertThat(out.toString())
        .contains("-> list_tool_guides {}")
        .contains("<- list_tool_guides: Available tool guides:")
        .contains("The tool answered:")
        // Each turn says the tokens its two model requests took, as the server reported them.
        .containsPattern("(?m)^  \\[tokens\\] \\d+ in, \\d+ out$");
    assertThat(out.toString().lines().filter(line -> line.startsWith("  [tokens] "))).hasSize(2);
    assertThat(server.requestCount()).isEqualTo(4);
  }
}
