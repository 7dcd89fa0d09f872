package dev.toolhost.search;

import dev.toolhost.core.spi.CommandContext;
import dev.toolhost.core.spi.RunningHost;
import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import tools.jackson.databind.json.JsonMapper;

/**
 * The search command searches the services a host built in-process from the config can route work
 * to (its MCP servers, once connected, and other tool sources it registers at start) and prints
 * what {@code GET /v1/services/search} answers: {@code {"results": [...]}}, best first.
 */
@Command(
    name = "search",
    mixinStandardHelpOptions = true,
    description =
        "Searches the known services by keywords, in-process from the config; prints the JSON that"
            + " GET /v1/services/search answers.")
final class SearchCommand implements Callable<Integer> {

  private static final JsonMapper JSON = JsonMapper.shared();

  private final CommandContext context;

  @Spec private CommandSpec spec;

  @Parameters(
      arity = "1..*",
      paramLabel = "QUERY",
      description = "Keywords that describe the task, such as: reschedule meeting.")
  private List<String> words;

  SearchCommand(CommandContext context) {
    this.context = context;
  }

  @Override
  public Integer call() {
    String query = String.join(" ", words);
    if (query.isBlank()) {
      spec.commandLine()
          .getErr()
          .println("The query is empty: give keywords that describe the task.");
      return CommandLine.ExitCode.USAGE;
    }
    try (RunningHost host = context.open()) {
      PrintWriter out = spec.commandLine().getOut();
      out.println(
          JSON.writerWithDefaultPrettyPrinter()
              .writeValueAsString(
                  host.service(ServiceIndex.class).orElseThrow().searchResults(query)));
      out.flush();
      return CommandLine.ExitCode.OK;
    }
  }
}
