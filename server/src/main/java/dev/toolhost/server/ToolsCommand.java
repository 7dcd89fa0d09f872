package dev.toolhost.server;

import dev.toolhost.bus.BusOption;
import dev.toolhost.core.ToolSet;
import dev.toolhost.core.ToolSpec;
import java.io.PrintWriter;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * The tools command lists the tools a profile sees, built in-process from the config: a table of
 * name, source and description, or with {@code --json} the document {@code GET /v1/tools} answers.
 */
@Command(
    name = "tools",
    mixinStandardHelpOptions = true,
    description = "Lists the tools a profile sees, in-process from the config; no server needed.")
final class ToolsCommand implements Callable<Integer> {

  private static final int DESCRIPTION_WIDTH = 80;

  @Spec private CommandSpec spec;

  @Mixin private ConfigOption config;

  @Mixin private BusOption bus;

  @Option(
      names = "--profile",
      paramLabel = "P",
      defaultValue = "main",
      description = "The profile whose tools to list (default: ${DEFAULT-VALUE}).")
  private String profile;

  @Option(
      names = "--json",
      description = "Print the OpenAI function list that GET /v1/tools answers.")
  private boolean json;

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    try (CommandHost opened = CommandHost.open(config, file -> file, bus)) {
      Host host = opened.host();
      Optional<ToolSet> found = host.toolSet(profile, spec.commandLine().getErr());
      if (found.isEmpty()) {
        return CommandLine.ExitCode.USAGE;
      }
      ToolSet tools = found.get();
      List<ToolSpec> specs = tools.specs();
      if (json) {
        ApiJson api = new ApiJson();
        out.println(api.prettyText(api.tools(profile, specs)));
      } else {
        printTable(out, specs);
      }
      out.flush();
      return CommandLine.ExitCode.OK;
    }
  }

  private static void printTable(PrintWriter out, List<ToolSpec> specs) {
    int nameWidth = "NAME".length();
    int sourceWidth = "SOURCE".length();
    for (ToolSpec spec : specs) {
      nameWidth = Math.max(nameWidth, spec.name().length());
      sourceWidth = Math.max(sourceWidth, spec.source().length());
    }
    String row = "%-" + nameWidth + "s  %-" + sourceWidth + "s  %s%n";
    out.printf(row, "NAME", "SOURCE", "DESCRIPTION");
    for (ToolSpec spec : specs) {
      out.printf(row, spec.name(), spec.source(), summary(spec.description()));
    }
  }

  private static String summary(String description) {
    String line = description.lines().findFirst().orElse("").strip();
    return line.length() <= DESCRIPTION_WIDTH
        ? line
        : line.substring(0, DESCRIPTION_WIDTH - 3).stripTrailing() + "...";
  }
}
