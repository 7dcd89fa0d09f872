package dev.toolhost.server;

import dev.toolhost.core.spi.ConfigException;
import dev.toolhost.core.spi.HostCommand;
import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.core.spi.HostExtensions;
import dev.toolhost.secrets.LogRedaction;
import dev.toolhost.secrets.RedactingOutputStream;
import dev.toolhost.secrets.SecretsConfig;
import dev.toolhost.secrets.SecretsExtension;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
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
      ConfigCommand.class,
      DevCommand.class
    })
public final class Main implements Callable<Integer> {

  /** The environment variable that sets the log level when {@code --log-level} is not given. */
  static final String LOG_LEVEL_ENV = "TOOLHOST_LOG_LEVEL";

  private static final String LOG_LEVEL_PROPERTY = "org.slf4j.simpleLogger.defaultLogLevel";

  /** The levels of {@code --log-level}. */
  enum LogLevel {
    trace,
    debug,
    info,
    warn,
    error,
    off
  }

  @Spec private CommandSpec spec;

  // Read before the command line is built (see main): logging is configured when the first logger
  // is made. Declared here so that every command accepts it, shows it in its help and refuses a
  // level that is not one.
  @Option(
      names = "--log-level",
      paramLabel = "LEVEL",
      scope = CommandLine.ScopeType.INHERIT,
      description =
          "How much the host logs on stderr: trace, debug, info, warn, error or off (default: info"
              + " for serve and mcp, warn otherwise; or the TOOLHOST_LOG_LEVEL variable).")
  private LogLevel logLevel;

  /** Runs the command line and exits with its exit code. */
  public static void main(String[] args) {
    logLevel(args, System.getenv(LOG_LEVEL_ENV));
    quietUnlessServing(args);
    redactLogs();
    System.exit(commandLine().execute(args));
  }

  /**
   * Returns the command line, ready to {@link CommandLine#execute execute}; tests set its output
   * and error writers.
   */
  public static CommandLine commandLine() {
    return commandLine(HostExtensions.discovered());
  }

  /**
   * The command line with the given extensions in place of those on the class path: their commands
   * join it, and their hosts are built from them.
   */
  static CommandLine commandLine(List<HostExtension<?>> extensions) {
    CommandLine commandLine = new CommandLine(new Main());
    // The extensions' own commands (chat, mcp, search, ...), each with --config and --bus, then
    // the two that speak of the whole line.
    for (HostExtension<?> extension : extensions) {
      for (HostCommand command : extension.commands()) {
        commandLine.addSubcommand(CommandOptions.commandLine(command, extensions));
      }
    }
    commandLine.addSubcommand(new CompletionCommand());
    commandLine.addSubcommand(new CommandLine.HelpCommand());
    commandLine.setCaseInsensitiveEnumValuesAllowed(true);
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

  /** With no command, says one is missing, prints the usage and fails as bad usage. */
  @Override
  public Integer call() {
    spec.commandLine().getErr().println("toolhost: a command is missing; choose one below.");
    spec.commandLine().usage(spec.commandLine().getErr());
    return CommandLine.ExitCode.USAGE;
  }

  /**
   * Sets the log level from {@code --log-level LEVEL} (or {@code --log-level=LEVEL}) anywhere in
   * the arguments, else from the variable; an unknown level is left for the command line to refuse.
   */
  static void logLevel(String[] args, String fromEnvironment) {
    String level = fromEnvironment;
    for (int i = 0; i < args.length; i++) {
      if (args[i].equals("--log-level") && i + 1 < args.length) {
        level = args[i + 1];
      } else if (args[i].startsWith("--log-level=")) {
        level = args[i].substring("--log-level=".length());
      }
    }
    if (level == null || level.isBlank()) {
      return;
    }
    for (LogLevel known : LogLevel.values()) {
      if (known.name().equalsIgnoreCase(level.strip())) {
        System.setProperty(LOG_LEVEL_PROPERTY, known.name());
        return;
      }
    }
  }

  // The host's log lines go to standard error; none leaves with a secret in it: every secret of
  // this process's environment (by its name) and every shipped rule's match (gitleaks' and
  // Toolhost's) is redacted, line by line, and so is whatever a running host's secrets section
  // adds (LogRedaction). The shipped rules load on the first line logged.
  private static void redactLogs() {
    System.setErr(
        new PrintStream(
            new RedactingOutputStream(
                new FileOutputStream(FileDescriptor.err),
                () ->
                    LogRedaction.over(
                        SecretsExtension.scanner(
                            SecretsConfig.defaults(), System.getenv(), java.util.Map.of()))),
            true,
            StandardCharsets.UTF_8));
  }

  // One-shot commands print their answer on stdout and errors on stderr; routine log lines (a
  // profile's tool counts) would only clutter stderr. An explicit setting still wins.
  private static void quietUnlessServing(String[] args) {
    String key = LOG_LEVEL_PROPERTY;
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
