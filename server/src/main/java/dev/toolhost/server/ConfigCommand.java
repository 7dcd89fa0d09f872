package dev.toolhost.server;

import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.core.spi.HostExtensions;
import dev.toolhost.host.ConfigReader;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import tools.jackson.databind.node.ObjectNode;

/**
 * The config command works on config files without starting anything: {@code toolhost config
 * schema} prints the JSON Schema of the whole file, and {@code toolhost config check FILE} checks
 * one file as every command would read it.
 *
 * <p>The schema is composed of the built-in sections' shapes (generated from the records the file
 * binds to, so it cannot drift from what the reader accepts) and each host extension's own section
 * schema. Editors use it through the YAML language server's {@code # yaml-language-server:
 * $schema=...} comment. Checks a schema cannot express (a profile extending one that does not
 * exist, an agent naming an unknown profile) are the reader's, which {@code check} runs.
 */
@Command(
    name = "config",
    mixinStandardHelpOptions = true,
    description = "Prints the config file's JSON Schema, or checks a config file.",
    subcommands = {ConfigCommand.Schema.class, ConfigCommand.Check.class})
final class ConfigCommand implements Callable<Integer> {

  @Spec private CommandSpec spec;

  @Override
  public Integer call() {
    spec.commandLine().usage(spec.commandLine().getErr());
    return CommandLine.ExitCode.USAGE;
  }

  /** The JSON Schema of the whole config file, with the given extensions' sections. */
  static ObjectNode schema(List<HostExtension<?>> extensions) {
    return ConfigReader.schema(extensions);
  }

  /** {@code toolhost config schema}: prints the whole file's JSON Schema. */
  @Command(
      name = "schema",
      mixinStandardHelpOptions = true,
      description =
          "Prints the JSON Schema of the config file, the sections of the host extensions on the"
              + " class path included (for editors: # yaml-language-server: $schema=FILE).")
  static final class Schema implements Callable<Integer> {
    @Spec private CommandSpec spec;

    @Override
    public Integer call() {
      PrintWriter out = spec.commandLine().getOut();
      out.println(new ApiJson().prettyText(schema(HostExtensions.discovered())));
      out.flush();
      return CommandLine.ExitCode.OK;
    }
  }

  /** {@code toolhost config check FILE}: checks one file without starting anything. */
  @Command(
      name = "check",
      mixinStandardHelpOptions = true,
      description =
          "Checks a config file as every command reads it, without starting anything: prints"
              + " every problem with its line and column, or that the file is valid.")
  static final class Check implements Callable<Integer> {
    @Spec private CommandSpec spec;

    @Parameters(paramLabel = "FILE", description = "The YAML config file to check.")
    private Path file;

    @Override
    public Integer call() {
      // Every problem of the file at once, tool service files included; a ConfigException is
      // printed by Main without a stack trace, exit code 2.
      new ConfigReader(HostExtensions.discovered()).read(file);
      PrintWriter out = spec.commandLine().getOut();
      out.println(file + ": valid");
      out.flush();
      return CommandLine.ExitCode.OK;
    }
  }
}
