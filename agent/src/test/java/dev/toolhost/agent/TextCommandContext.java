package dev.toolhost.agent;

import dev.toolhost.core.spi.CommandContext;
import dev.toolhost.core.spi.ConfigProblems;
import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.core.spi.RunningHost;
import dev.toolhost.core.spi.SectionReading;
import dev.toolhost.host.HostConfig;
import dev.toolhost.host.HostRuntime;
import dev.toolhost.testing.TestHost;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A text command context is what a command reads its config through when the config is text in a
 * test, not a {@code --config} file: its sections read by the given extensions, as the command line
 * reads them, and its hosts built from those extensions with an empty environment and no message
 * bus. (It belongs beside {@code TestHost} in the testing module.)
 */
final class TextCommandContext implements CommandContext {

  private final HostConfig config;
  private final List<HostExtension<?>> extensions;

  TextCommandContext(String yaml, List<HostExtension<?>> extensions) {
    this.config = TestHost.config(yaml, extensions, Path.of(""));
    this.extensions = List.copyOf(extensions);
  }

  /** The config, as the host reads it. */
  HostConfig config() {
    return config;
  }

  @Override
  public <C> Optional<C> section(HostExtension<C> extension) {
    if (!config.sections().containsKey(extension.name())) {
      return Optional.empty();
    }
    SectionReading reading =
        new SectionReading(
            ConfigProblems.unplaced(), config.directory(), config.toolProfiles().names());
    C read = extension.read(config.section(extension.name()), reading);
    reading.problems().throwIfAny();
    return Optional.ofNullable(read);
  }

  @Override
  public Optional<Path> configFile() {
    return Optional.empty();
  }

  @Override
  public RunningHost open() {
    return builder().build();
  }

  @Override
  public <C> RunningHost open(HostExtension<C> extension, C section) {
    return builder().extension(extension, section).build();
  }

  @Override
  public RunningHost openAlone() {
    return open();
  }

  private HostRuntime.Builder builder() {
    return HostRuntime.builder(config).environment(Map.of()).extensions(extensions);
  }
}
