package dev.toolhost.server;

import dev.toolhost.core.spi.ConfigException;
import dev.toolhost.secrets.RedactingOutputStream;
import dev.toolhost.secrets.SecretsConfig;
import dev.toolhost.secrets.SecretsExtension;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * Main is the {@code toolhost} command line: {@code serve} runs the HTTP API, {@code tools} lists
 * the tools a profile sees, {@code call} calls one, and {@code search} searches the known services,
 * all in-process from the same config.
 *
 * <p>Exit codes: 0 success; 1 a tool call failed or the host could not start; 2 bad usage or a
 * config error, whose message (file, line, column, what was expected) is printed without a stack
 * trace.
 */
@Command(
    name = "toolhost",
    mixinStandardHelpOptions = true,
    version = "toolhost 0.1.0-SNAPSHOT",
    description = "The tool layer for LLM agents: serves tools over HTTP, lists them, calls them.",
    subcommands = {
      ServeCommand.class,
      ToolsCommand.class,
      CallCommand.class,
      SearchCommand.class,
      McpCommand.class,
      McpApproveCommand.class,
      ConfigCommand.class,
      WorkerCommand.class,
      ChatCommand.class,
      SecretsCommand.class,
      DevCommand.class,
      CommandLine.HelpCommand.class
    })
public final class Main implements Callable<Integer> {

  @Spec private CommandSpec spec;

  /** Runs the command line and exits with its exit code. */
  public static void main(String[] args) {
    quietUnlessServing(args);
    redactLogs();
    System.exit(commandLine().execute(args));
  }

  /**
   * Returns the command line, ready to {@link CommandLine#execute execute}; tests set its output
   * and error writers.
   */
  public static CommandLine commandLine() {
    CommandLine commandLine = new CommandLine(new Main());
    commandLine.setExecutionExceptionHandler(
        (exception, failed, parseResult) -> {
          if (exception instanceof ConfigException) {
            failed.getErr().println(exception.getMessage());
            failed.getErr().flush();
            return CommandLine.ExitCode.USAGE;
          }
          failed.getErr().println("error: " + exception.getMessage());
          failed.getErr().flush();
          return CommandLine.ExitCode.SOFTWARE;
        });
    return commandLine;
  }

  /** With no command, prints the usage and fails as bad usage. */
  @Override
  public Integer call() {
    spec.commandLine().usage(spec.commandLine().getErr());
    return CommandLine.ExitCode.USAGE;
  }

  // The host's log lines go to standard error; none leaves with a secret in it: every secret of
  // this process's environment (by its name) and every gitleaks rule's match is redacted, line by
  // line. The rules load on the first line logged.
  private static void redactLogs() {
    System.setErr(
        new PrintStream(
            new RedactingOutputStream(
                new FileOutputStream(FileDescriptor.err),
                () ->
                    SecretsExtension.scanner(
                        SecretsConfig.defaults(), System.getenv(), java.util.Map.of())),
            true,
            StandardCharsets.UTF_8));
  }

  // One-shot commands print their answer on stdout and errors on stderr; routine log lines (a
  // profile's tool counts) would only clutter stderr. An explicit setting still wins.
  private static void quietUnlessServing(String[] args) {
    String key = "org.slf4j.simpleLogger.defaultLogLevel";
    boolean serving = false;
    for (String arg : args) {
      if (!arg.startsWith("-")) {
        serving = arg.equals("serve") || arg.equals("mcp");
        break;
      }
    }
    if (!serving && System.getProperty(key) == null) {
      System.setProperty(key, "warn");
    }
  }
}
