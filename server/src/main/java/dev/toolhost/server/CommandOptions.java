package dev.toolhost.server;

import dev.toolhost.bus.BusOption;
import dev.toolhost.core.spi.CommandContext;
import dev.toolhost.core.spi.HostCommand;
import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.core.spi.HostExtensions;
import dev.toolhost.core.spi.RunningHost;
import dev.toolhost.host.HostRuntime;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import picocli.CommandLine;

/**
 * The command options are the {@code --config} and {@code --bus} the command line adds to an
 * extension's {@link HostCommand}, and the context that command reads them through: sections are
 * read and hosts opened as the server's own commands do ({@link CommandHost}).
 */
final class CommandOptions implements CommandContext {

  private final ConfigOption config = new ConfigOption();
  private final BusOption bus = new BusOption();

  /** The extension's command with these options added: {@code --bus} only where it opens a host. */
  static CommandLine commandLine(HostCommand command) {
    return commandLine(command, HostExtensions.discovered());
  }

  /**
   * The extension's command with these options added, reading the config with the given extensions
   * and building its host from them.
   */
  static CommandLine commandLine(HostCommand command, List<HostExtension<?>> extensions) {
    CommandOptions options = new CommandOptions();
    options.config.extensions(extensions);
    CommandLine line = new CommandLine(command.command(options));
    addOptions(line, options, command.opensHost());
    return line;
  }

  // On the command and on each of its subcommands (secrets scan), which read them through the
  // one context.
  private static void addOptions(CommandLine line, CommandOptions options, boolean bus) {
    line.addMixin("config", options.config);
    if (bus) {
      line.addMixin("bus", options.bus);
    }
    line.getSubcommands().values().forEach(sub -> addOptions(sub, options, bus));
  }

  @Override
  public <C> Optional<C> section(HostExtension<C> extension) {
    return config.load().read(extension);
  }

  @Override
  public Optional<Path> configFile() {
    return config.file();
  }

  @Override
  public RunningHost openAlone() {
    return HostRuntime.builder(config.load()).extensions(config.extensions()).build();
  }

  @Override
  public RunningHost open() {
    return CommandHost.open(config, file -> file, bus);
  }

  @Override
  public <C> RunningHost open(HostExtension<C> extension, C section) {
    return CommandHost.open(
        config, file -> file, bus, builder -> builder.extension(extension, section));
  }
}
