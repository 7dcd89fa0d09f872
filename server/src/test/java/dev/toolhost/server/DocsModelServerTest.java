package dev.toolhost.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.agent.ChatCommand;
import dev.toolhost.testing.ScriptedModelServer;
import java.io.ByteArrayInputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;

/**
 * The offline example of {@code docs/agents.md}, run as written: each {@code echo '...' |
 * ./toolhost chat ...} of the section's shell block, against {@code toolhost dev model-server}'s
 * script, makes the tool call the section's transcripts show.
 */
@Timeout(60)
class DocsModelServerTest {

  private static final String SECTION = "\n## Offline, with the scripted model server\n";

  private final ScriptedModelServer server = ScriptedModelServer.start();

  @AfterEach
  void close() {
    server.close();
  }

  /**
   * A documented turn: the message piped in, the chat's arguments, the tool call it shows and the
   * start of the result line it shows (less the closing {@code ...}).
   */
  record Turn(String message, List<String> args, String call, String result) {}

  static List<Turn> documentedTurns() throws Exception {
    String page = Files.readString(Path.of("..", "docs", "agents.md"));
    int section = page.indexOf(SECTION);
    assertThat(section).as("the section on the scripted model server").isPositive();
    String text = page.substring(section, page.indexOf("\n## ", section + 1));

    Matcher shell = Pattern.compile("(?s)```sh\\n(.*?)```").matcher(text);
    assertThat(shell.find()).as("a shell block in the section").isTrue();
    Matcher echo =
        Pattern.compile("(?m)^echo '([^']*)' \\\\\\n\\s*\\| \\./toolhost chat (.*)$")
            .matcher(shell.group(1));
    List<String> messages = new ArrayList<>();
    List<List<String>> args = new ArrayList<>();
    while (echo.find()) {
      messages.add(echo.group(1));
      args.add(List.of(echo.group(2).strip().split("\\s+")));
    }
    Matcher transcript = Pattern.compile("(?s)```text\\n(.*?)```").matcher(text);
    List<String> calls = new ArrayList<>();
    List<String> results = new ArrayList<>();
    while (transcript.find()) {
      List<String> lines = transcript.group(1).lines().toList();
      lines.stream()
          .filter(line -> line.startsWith("  -> "))
          .findFirst()
          .ifPresent(line -> calls.add(line.substring("  -> ".length())));
      lines.stream()
          .filter(line -> line.startsWith("  <- "))
          .findFirst()
          .ifPresent(line -> results.add(line.replaceFirst("\\.\\.\\.$", "")));
    }
    assertThat(messages).as("the messages piped to toolhost chat").hasSizeGreaterThanOrEqualTo(2);
    assertThat(calls).as("one transcript per message").hasSameSizeAs(messages);
    assertThat(results).as("one result line per transcript").hasSameSizeAs(messages);
    List<Turn> turns = new ArrayList<>();
    for (int i = 0; i < messages.size(); i++) {
      turns.add(new Turn(messages.get(i), args.get(i), calls.get(i), results.get(i)));
    }
    return turns;
  }

  @Test
  void eachDocumentedMessageMakesTheToolCallItsTranscriptShows() throws Exception {
    server.respondWith(DevCommand.ModelServer::script);

    for (Turn turn : documentedTurns()) {
      List<String> args = new ArrayList<>(turn.args());
      args.set(args.indexOf("--base-url") + 1, server.baseUrl().toString());

      assertThat(chat(turn.message(), args))
          .as(turn.message())
          .contains("  -> " + turn.call() + "\n")
          .contains(turn.result())
          .contains("The tool answered:");
    }
  }

  @Test
  void aToolIsNamedOnlyAsAWholeNameAndAMessageThatNamesNoneListsTheGuides() {
    server.respondWith(DevCommand.ModelServer::script);
    List<String> args = List.of("--base-url", server.baseUrl().toString(), "--model", "scripted");

    assertThat(chat("Is there a my_get_tool_guide?", args)).contains("  -> list_tool_guides {}\n");
    assertThat(chat("get_tool_guide, then list_tool_guides", args))
        .contains("  -> get_tool_guide {}\n");
  }

  /** What {@code toolhost chat ARGS} prints with the message on its standard input. */
  private static String chat(String message, List<String> args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine chat =
        CommandOptions.commandLine(
            context ->
                new ChatCommand(
                    context,
                    new ByteArrayInputStream((message + "\n").getBytes(StandardCharsets.UTF_8)),
                    false));
    chat.setOut(new PrintWriter(out, true));
    chat.setErr(new PrintWriter(err, true));

    int exit = chat.execute(args.toArray(String[]::new));

    assertThat(exit).as(err.toString()).isZero();
    return out.toString();
  }
}
