package dev.toolhost.server;

import dev.toolhost.testing.RecordedRequest;
import dev.toolhost.testing.ScriptedModelServer;
import dev.toolhost.testing.ScriptedReply;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The dev command holds tools for trying Toolhost offline: {@code model-server} runs the scripted
 * OpenAI-compatible model server, scripted to call the offered tool a user message names (with the
 * JSON object after its name as arguments), or {@code list_tool_guides} when the message names
 * none, then to answer with what the tool returned, so that {@code toolhost chat} and agents can be
 * seen calling tools with no model provider (the script is in {@code docs/agents.md}).
 */
@Command(
    name = "dev",
    mixinStandardHelpOptions = true,
    description = "Tools for trying Toolhost offline.",
    subcommands = {DevCommand.ModelServer.class})
final class DevCommand implements Callable<Integer> {

  private static final JsonMapper JSON = JsonMapper.builder().build();

  @Spec private CommandSpec spec;

  @Override
  public Integer call() {
    spec.commandLine().usage(spec.commandLine().getErr());
    return CommandLine.ExitCode.USAGE;
  }

  /** Runs the scripted model server until the process is stopped. */
  @Command(
      name = "model-server",
      mixinStandardHelpOptions = true,
      description =
          "Runs a scripted OpenAI-compatible model server on 127.0.0.1 that calls the offered"
              + " tool a message names (with the JSON object after the name as arguments), or"
              + " list_tool_guides when it names none, then answers with its result.")
  static final class ModelServer implements Callable<Integer> {

    @Spec private CommandSpec spec;

    @Option(
        names = "--port",
        paramLabel = "PORT",
        defaultValue = "8089",
        description = "The port to listen on; 0 picks a free one (default: ${DEFAULT-VALUE}).")
    private int port;

    @Override
    public Integer call() throws InterruptedException {
      try (ScriptedModelServer server = ScriptedModelServer.start(port)) {
        server.respondWith(ModelServer::script);
        spec.commandLine()
            .getOut()
            .println(
                "Scripted model server listening on " + server.baseUrl() + " (Ctrl-C stops it)");
        spec.commandLine().getOut().flush();
        new CountDownLatch(1).await();
      }
      return CommandLine.ExitCode.OK;
    }

    /**
     * The script: after a tool result, answers with it. On a user message, calls the offered tool
     * the message names (the first named; with the JSON object that follows the name as its
     * arguments, or {@code {}}); when it names none, calls {@code list_tool_guides} if offered;
     * otherwise, or when tools are refused ({@code tool_choice: none}), echoes the message.
     */
    static ScriptedReply script(RecordedRequest request) {
      JsonNode json = request.json();
      JsonNode messages = json.path("messages");
      JsonNode last = messages.path(messages.size() - 1);
      String said = last.path("content").asString();
      if (request.lastRole().equals("tool")) {
        return ScriptedReply.answer("The tool answered:\n" + said + "\n(scripted model)");
      }
      List<String> offered = new ArrayList<>();
      if (!json.path("tool_choice").asString().equals("none")) {
        for (JsonNode tool : json.path("tools")) {
          offered.add(tool.path("function").path("name").asString());
        }
      }
      String id = "call_" + messages.size();
      Optional<ScriptedReply> named = namedCall(said, offered, id);
      if (named.isPresent()) {
        return named.get();
      }
      if (offered.contains("list_tool_guides")) {
        return ScriptedReply.toolCalls(ScriptedReply.call(id, "list_tool_guides", "{}"));
      }
      return ScriptedReply.answer("You said: " + said + " (scripted model)");
    }

    /** A call of the offered tool the text names first (the longest name at a place). */
    private static Optional<ScriptedReply> namedCall(String text, List<String> offered, String id) {
      int at = -1;
      String name = null;
      for (String tool : offered) {
        Matcher matcher =
            Pattern.compile("(?<![\\w.-])" + Pattern.quote(tool) + "(?![\\w.-])").matcher(text);
        if (matcher.find()
            && (name == null
                || matcher.start() < at
                || (matcher.start() == at && tool.length() > name.length()))) {
          at = matcher.start();
          name = tool;
        }
      }
      if (name == null) {
        return Optional.empty();
      }
      String rest = text.substring(at + name.length()).stripLeading();
      String arguments = "{}";
      if (rest.startsWith("{")) {
        try (JsonParser parser = JSON.createParser(rest)) {
          JsonNode object = JSON.readTree(parser);
          if (object.isObject()) {
            arguments = JSON.writeValueAsString(object);
          }
        } catch (JacksonException e) {
          // Not JSON after all: the tool is called with no arguments, and says what it misses.
        }
      }
      return Optional.of(ScriptedReply.toolCalls(ScriptedReply.call(id, name, arguments)));
    }
  }
}
