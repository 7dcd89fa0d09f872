package dev.toolhost.server;

import dev.toolhost.bus.ToolServicesConfig;
import dev.toolhost.bus.ToolServicesExtension;
import dev.toolhost.host.HostConfig;
import java.nio.file.Path;

/**
 * Sections reads the extensions' sections of a config the host read, as each extension does when it
 * starts, for tests that check what a file says.
 */
final class Sections {

  private Sections() {}

  static ToolServicesConfig toolServices(HostConfig config) {
    return config.read(new ToolServicesExtension()).orElseGet(ToolServicesConfig::none);
  }

  /** The tool services of a config file, checked with the whole file. */
  static ToolServicesConfig toolServices(Path file) {
    return toolServices(HostConfig.load(file));
  }
}
