package dev.toolhost.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.host.HostConfig;
import dev.toolhost.memory.WorkingMemoryExtension;
import dev.toolhost.secrets.SecretsExtension;
import dev.toolhost.testing.ScriptedModelServer;
import dev.toolhost.testing.ScriptedReply;
import dev.toolhost.testing.TextCommandContext;
import java.io.ByteArrayInputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;

/**
 * The chat command over a scripted model server, its config given as text in place of {@code
 * --config}, on a host with working memory, secrets and agents: each turn's text, tool calls,
 * channel tools and token counts are shown; a secret neither reaches the model nor comes back; a
 * failed turn sets the exit code.
 */
@Timeout(30)
class ChatCommandTest {

  private static final List<HostExtension<?>> EXTENSIONS =
      List.of(new WorkingMemoryExtension(), new SecretsExtension(), new AgentsExtension());

  private final ScriptedModelServer server = ScriptedModelServer.start();
  private final StringWriter out = new StringWriter();
  private final StringWriter err = new StringWriter();

  @AfterEach
  void close() {
    server.close();
  }

  /** Chats with the model the arguments name, with no config. */
  private int chat(String input, String... args) {
    return chat(new TextCommandContext("", EXTENSIONS), input, args);
  }

  private int chat(TextCommandContext context, String input, String... args) {
    CommandLine commandLine =
        new CommandLine(
            new ChatCommand(
                context, new ByteArrayInputStream(input.getBytes(StandardCharsets.UTF_8)), false));
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
  void chatTalksToAnAgentFromTheConfig() {
    TextCommandContext context =
        new TextCommandContext(
            ScriptedModelServer.agentSection(
                server.baseUrl(), "helper", "helper-model", "instructions: Be brief."),
            EXTENSIONS);
    server.enqueue(ScriptedReply.answer("Hi!"));

    int exit = chat(context, "Hello\n");

    assertThat(exit).isZero();
    assertThat(out.toString()).contains("helper> Hi!");
    assertThat(server.takeRequest().json().get("model").asString()).isEqualTo("helper-model");
    assertThat(context.section(new AgentsExtension()).orElseThrow().agents())
        .singleElement()
        .satisfies(helper -> assertThat(helper.name()).isEqualTo("helper"));
    HostConfig loaded = context.config();
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
