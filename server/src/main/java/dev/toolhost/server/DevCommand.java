package dev.toolhost.server;

import dev.toolhost.testing.RecordedRequest;
import dev.toolhost.testing.ScriptedModelServer;
import dev.toolhost.testing.ScriptedReply;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import tools.jackson.databind.JsonNode;

/**
 * The dev command holds tools for trying Toolhost offline: {@code model-server} runs the scripted
 * OpenAI-compatible model server, scripted to call {@code list_tool_guides} when it may, then to
 * answer with what the tool returned, so that {@code toolhost chat} can be seen working with no
 * model provider.
 */
@Command(
    name = "dev",
    mixinStandardHelpOptions = true,
    description = "Tools for trying Toolhost offline.",
    subcommands = {DevCommand.ModelServer.class})
final class DevCommand implements Callable<Integer> {

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
          "Runs a scripted OpenAI-compatible model server on 127.0.0.1 that calls"
              + " list_tool_guides, then answers with its result.")
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

    /** Calls list_tool_guides on a user message when it is offered; answers a tool result. */
    static ScriptedReply script(RecordedRequest request) {
      JsonNode json = request.json();
      JsonNode messages = json.path("messages");
      JsonNode last = messages.path(messages.size() - 1);
      if (request.lastRole().equals("tool")) {
        return ScriptedReply.answer(
            "The tool answered:\n" + last.path("content").asString() + "\n(scripted model)");
      }
      boolean offered = false;
      for (JsonNode tool : json.path("tools")) {
        offered |= tool.path("function").path("name").asString().equals("list_tool_guides");
      }
      if (offered && !json.path("tool_choice").asString().equals("none")) {
        return ScriptedReply.toolCalls(
            ScriptedReply.call("call_" + messages.size(), "list_tool_guides", "{}"));
      }
      return ScriptedReply.answer(
          "You said: " + last.path("content").asString() + " (scripted model)");
    }
  }
}
