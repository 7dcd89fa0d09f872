package dev.toolhost.server;

import dev.toolhost.core.spi.ConfigException;
import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.core.spi.HostExtensions;
import dev.toolhost.host.HostConfig;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import picocli.CommandLine.Option;

/** The config option is the {@code --config FILE} every command takes. */
final class ConfigOption {

  @Option(
      names = "--config",
      paramLabel = "FILE",
      description = "The YAML config file. Without it, the embedded defaults apply.")
  private Optional<Path> file = Optional.empty();

  // Found once per command: the same extensions read the file's sections and run in its host.
  private List<HostExtension<?>> extensions;

  /** Sets the extensions the config is read with and the host built from, in place of discovery. */
  void extensions(List<HostExtension<?>> extensions) {
    this.extensions = List.copyOf(extensions);
  }

  /** The host extensions on the class path ({@link HostExtensions#discovered()}), found once. */
  List<HostExtension<?>> extensions() {
    if (extensions == null) {
      extensions = HostExtensions.discovered();
    }
    return extensions;
  }

  /**
   * The config from the file, or the embedded defaults without one.
   *
   * @throws ConfigException when the file is missing or invalid
   */
  HostConfig load() {
    return file.map(path -> HostConfig.load(path, extensions())).orElseGet(HostConfig::defaults);
  }

  /** The config file, when one was given. */
  Optional<Path> file() {
    return file;
  }
}
