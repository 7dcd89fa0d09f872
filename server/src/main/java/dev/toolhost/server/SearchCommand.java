package dev.toolhost.server;

import dev.toolhost.search.ServiceIndex;
import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

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

  @Spec private CommandSpec spec;

  @Mixin private ConfigOption config;

  @Mixin private BusOption bus;

  @Parameters(
      arity = "1..*",
      paramLabel = "QUERY",
      description = "Keywords that describe the task, such as: reschedule meeting.")
  private List<String> words;

  @Override
  public Integer call() {
    String query = String.join(" ", words);
    if (query.isBlank()) {
      spec.commandLine()
          .getErr()
          .println("The query is empty: give keywords that describe the task.");
      return CommandLine.ExitCode.USAGE;
    }
    try (CommandHost opened = CommandHost.open(config, file -> file, bus)) {
      Host host = opened.host();
      ApiJson api = new ApiJson();
      PrintWriter out = spec.commandLine().getOut();
      out.println(
          api.prettyText(host.service(ServiceIndex.class).orElseThrow().searchResults(query)));
      out.flush();
      return CommandLine.ExitCode.OK;
    }
  }
}
