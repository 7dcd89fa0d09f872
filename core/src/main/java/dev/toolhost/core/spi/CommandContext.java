package dev.toolhost.core.spi;

import java.nio.file.Path;
import java.util.Optional;

/**
 * A command context is what a {@link HostCommand} sees of the command line it runs in: the config
 * file its {@code --config} names (the embedded defaults without one), read as every command reads
 * it, and the host that config describes, on the message bus {@code --bus} names.
 */
public interface CommandContext {

  /**
   * The config file's section of the extension, read by it; empty when the file has none.
   *
   * @throws ConfigException when the file is missing or invalid
   */
  <C> Optional<C> section(HostExtension<C> extension);

  /** The config file {@code --config} names; empty for the embedded defaults. */
  Optional<Path> configFile();

  /**
   * Opens the host the config describes; the caller closes it.
   *
   * @throws ConfigException for a bad config file or bus URI
   */
  RunningHost open();

  /**
   * Opens the host the config describes with the extension given this config in place of the file's
   * section (chat's agents with the one {@code --model} names, say); the caller closes it.
   *
   * @throws ConfigException for a bad config file or bus URI
   */
  <C> RunningHost open(HostExtension<C> extension, C config);

  /**
   * Opens the host the config describes on no message bus, whatever {@code --bus} says: a host that
   * only lends its tools and its dispatch chain (a worker's); the caller closes it.
   *
   * @throws ConfigException for a bad config file, or tool services it could not call
   */
  RunningHost openAlone();
}
