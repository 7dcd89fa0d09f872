package dev.toolhost.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.agent.ChatCommand;
import dev.toolhost.host.HostConfig;
import dev.toolhost.testing.ScriptedModelServer;
import dev.toolhost.testing.ScriptedReply;
import java.io.ByteArrayInputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

@Timeout(30)
class ChatCommandTest {

  private final ScriptedModelServer server = ScriptedModelServer.start();
  private final StringWriter out = new StringWriter();
  private final StringWriter err = new StringWriter();

  @TempDir Path dir;

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

  /** A GitHub token's shape from the seed, made at run time so that no scanner flags this file. */
  private static String githubToken(long seed) {
    java.util.Random random = new java.util.Random(seed);
    StringBuilder token = new StringBuilder("ghp_");
    String alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789";
    for (int i = 0; i < 36; i++) {
      token.append(alphabet.charAt(random.nextInt(alphabet.length())));
    }
    return token.toString();
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

  @Test
  void aSecretNeitherReachesTheModelNorComesBackFromItToTheChat() {
    String token = githubToken(21);
    // Streamed a few characters per chunk: the token comes split across several deltas.
    server.enqueue(ScriptedReply.answer("Your token is " + token + ", keep it safe."));

    int exit =
        chat(
            "My token is " + token + "\n",
            "--base-url",
            server.baseUrl().toString(),
            "--model",
            "m");

    assertThat(exit).isZero();
    assertThat(out.toString())
        .contains("Your token is [REDACTED:github-pat], keep it safe.")
        .doesNotContain(token);
    String sent = server.takeRequest().json().toString();
    assertThat(sent).contains("My token is [REDACTED:github-pat]").doesNotContain(token);
  }

  @Test
  void eachTurnHasTheChannelToolsAndShowsRepliesReactionsAndSkips() {
    server.enqueue(
        ScriptedReply.toolCalls(
            ScriptedReply.call("call_1", "reply", "{\"content\":\"Looking now.\"}"),
            ScriptedReply.call("call_2", "react", "{\"emoji\":\"👀\"}")));
    server.enqueue(ScriptedReply.answer("Found it."));
    server.enqueue(
        ScriptedReply.toolCalls(
            ScriptedReply.call("call_3", "react", "{\"emoji\":\"👍\"}"),
            ScriptedReply.call("call_4", "skip", "{\"reason\":\"a thanks needs no answer\"}")));

    int exit =
        chat(
            "Find the report\nThanks!\n",
            "--base-url",
            server.baseUrl().toString(),
            "--model",
            "m");

    assertThat(exit).as(err.toString()).isZero();
    assertThat(out.toString())
        .contains("  [reply] Looking now.")
        .contains("  [reaction] 👀")
        .contains("Found it.")
        .contains("  [reaction] 👍")
        .contains("  [skip] a thanks needs no answer");
    // The skip ended the second turn: three requests in all, not four.
    assertThat(server.requestCount()).isEqualTo(3);
    assertThat(server.takeRequest().json().get("tools").toString())
        .contains("\"reply\"", "\"skip\"", "\"react\"", "\"route\"", "\"cancel\"");
  }

  @Test
  void aReplyCarryingASecretIsRefusedByTheHostsScanner() {
    String token = githubToken(7);
    server.enqueue(
        ScriptedReply.toolCalls(
            ScriptedReply.call("call_1", "reply", "{\"content\":\"Here it is: " + token + "\"}")));
    server.enqueue(ScriptedReply.answer("I cannot share that."));

    int exit =
        chat("Show me the token\n", "--base-url", server.baseUrl().toString(), "--model", "m");

    assertThat(exit).as(err.toString()).isZero();
    assertThat(out.toString())
        .doesNotContain("[reply]")
        .doesNotContain(token)
        .contains("-> reply {\"content\":\"Here it is: [REDACTED:github-pat]\"}")
        .contains(
            "<- reply error [invalid_arguments]: blocked reply content: it carries a secret"
                + " (github-pat)");
  }

  @Test
  void chatTalksToAnAgentFromTheConfig() throws Exception {
    Path config = dir.resolve("toolhost.yaml");
    Files.writeString(
        config,
        """
        agents:
          helper:
            base_url: %s
            model: helper-model
            api_key_env: NO_SUCH_KEY
            instructions: Be brief.
        """
            .formatted(server.baseUrl()));
    server.enqueue(ScriptedReply.answer("Hi!"));

    int exit = chat("Hello\n", "--config", config.toString());

    assertThat(exit).isZero();
    assertThat(out.toString()).contains("helper> Hi!");
    assertThat(server.takeRequest().json().get("model").asString()).isEqualTo("helper-model");
    assertThat(Sections.agents(HostConfig.load(config)))
        .singleElement()
        .satisfies(helper -> assertThat(helper.name()).isEqualTo("helper"));
    HostConfig loaded = HostConfig.load(config);
    assertThat(loaded.sections()).containsOnlyKeys("agents");
    assertThat(
            new HostConfig(loaded.http(), loaded.builtins(), loaded.telemetry(), loaded.profiles()))
        .isEqualTo(HostConfig.defaults());
  }

  @Test
  void aModelErrorIsShownAndTheExitCodeSaysATurnFailed() {
    server.enqueue(ScriptedReply.status(404, "{\"error\":{\"message\":\"no such model\"}}"));

    int exit = chat("Hello\n", "--base-url", server.baseUrl().toString(), "--model", "nope");

    assertThat(exit).isEqualTo(1);
    assertThat(err.toString()).contains("'nope' was not found");
  }
}
