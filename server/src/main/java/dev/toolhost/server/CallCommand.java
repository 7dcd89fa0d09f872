package dev.toolhost.server;

import dev.toolhost.bus.BusOption;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * The call command calls one tool in-process, through the same dispatch path as the HTTP API, and
 * prints its content (exit 0) or {@code error [code]: message} on stderr (exit 1).
 */
@Command(
    name = "call",
    mixinStandardHelpOptions = true,
    description = "Calls a tool in-process and prints its content; no server needed.")
final class CallCommand implements Callable<Integer> {

  @Spec private CommandSpec spec;

  @Mixin private ConfigOption config;

  @Mixin private BusOption bus;

  @Parameters(index = "0", paramLabel = "NAME", description = "The tool to call.")
  private String name;

  @Parameters(
      index = "1",
      arity = "0..1",
      paramLabel = "JSON",
      defaultValue = "{}",
      description = "The arguments, a JSON object (default: ${DEFAULT-VALUE}).")
  private String arguments;

  @Option(
      names = "--profile",
      paramLabel = "P",
      defaultValue = "main",
      description = "The profile to call the tool under (default: ${DEFAULT-VALUE}).")
  private String profile;

  @Option(
      names = "--timeout",
      paramLabel = "DURATION",
      converter = DurationConverter.class,
      description =
          "How long to wait, such as 500ms, 30s or 2m (default: the tool's own timeout, or 60s).")
  private Duration timeout;

  @Override
  public Integer call() {
    try (CommandHost opened = CommandHost.open(config, file -> file, bus)) {
      Host host = opened.host();
      Optional<ToolSet> found = host.toolSet(profile, spec.commandLine().getErr());
      if (found.isEmpty()) {
        return CommandLine.ExitCode.USAGE;
      }
      ToolSet tools = found.get();
      ToolResult result =
          host.dispatcher()
              .dispatch(
                  tools,
                  ToolCall.of(name, arguments)
                      .withTimeout(timeout != null ? timeout : tools.defaultTimeout(name)));
      switch (result) {
        case ToolResult.Success success -> {
          spec.commandLine().getOut().println(success.content());
          spec.commandLine().getOut().flush();
          return CommandLine.ExitCode.OK;
        }
        case ToolResult.Failure failure -> {
          spec.commandLine()
              .getErr()
              .println(
                  "error ["
                      + failure.error().code().wireName()
                      + "]: "
                      + failure.error().message());
          spec.commandLine().getErr().flush();
          return CommandLine.ExitCode.SOFTWARE;
        }
      }
    }
  }
}
