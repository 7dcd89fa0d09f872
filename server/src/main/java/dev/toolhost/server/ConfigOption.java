package dev.toolhost.server;

import java.nio.file.Path;
import java.util.Optional;
import picocli.CommandLine.Option;

/** The config option is the {@code --config FILE} every command takes. */
final class ConfigOption {

  @Option(
      names = "--config",
      paramLabel = "FILE",
      description = "The YAML config file. Without it, the embedded defaults apply.")
  private Optional<Path> file = Optional.empty();

  /**
   * The config from the file, or the embedded defaults without one.
   *
   * @throws ConfigException when the file is missing or invalid
   */
  HostConfig load() {
    return file.map(HostConfig::load).orElseGet(HostConfig::defaults);
  }

  /** The config file, when one was given. */
  Optional<Path> file() {
    return file;
  }

  /**
   * The tool services of the config file, or none without one.
   *
   * @throws ConfigException when the file's {@code tool_services} section or a file it lists is
   *     invalid
   */
  ToolServicesConfig toolServices() {
    return file.map(ToolServicesConfig::load).orElseGet(ToolServicesConfig::none);
  }
}
