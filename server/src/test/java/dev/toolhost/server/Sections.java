package dev.toolhost.server;

import dev.toolhost.agent.AgentDefinition;
import dev.toolhost.agent.AgentsConfig;
import dev.toolhost.agent.AgentsExtension;
import dev.toolhost.bus.ToolServicesConfig;
import dev.toolhost.bus.ToolServicesExtension;
import dev.toolhost.core.spi.ConfigProblems;
import dev.toolhost.core.spi.SectionReading;
import dev.toolhost.host.HostConfig;
import dev.toolhost.openrouter.OpenRouterConfig;
import dev.toolhost.openrouter.OpenRouterExtension;
import java.nio.file.Path;
import java.util.List;

/**
 * Sections reads the extensions' sections of a config the host read, as each extension does when it
 * starts, for tests that check what a file says.
 */
final class Sections {

  private Sections() {}

  static List<AgentDefinition> agents(HostConfig config) {
    SectionReading reading = reading(config);
    List<AgentDefinition> agents =
        AgentsConfig.read(config.sections().get(AgentsExtension.NAME), reading).agents();
    reading.problems().throwIfAny();
    return agents;
  }

  static OpenRouterConfig openRouter(HostConfig config) {
    SectionReading reading = reading(config);
    OpenRouterConfig openRouter =
        OpenRouterConfig.read(config.sections().get(OpenRouterExtension.NAME), reading);
    reading.problems().throwIfAny();
    return openRouter;
  }

  static ToolServicesConfig toolServices(HostConfig config) {
    SectionReading reading = reading(config);
    ToolServicesConfig services =
        ToolServicesConfig.read(config.sections().get(ToolServicesExtension.NAME), reading);
    reading.problems().throwIfAny();
    return services;
  }

  /** The tool services of a config file, checked with the whole file. */
  static ToolServicesConfig toolServices(Path file) {
    return toolServices(HostConfig.load(file));
  }

  /** The agents of config text, checked with the whole text. */
  static AgentsConfig agents(String yaml, String fileName) {
    return new AgentsConfig(agents(HostConfig.parse(yaml, fileName)));
  }

  private static SectionReading reading(HostConfig config) {
    return new SectionReading(
        ConfigProblems.unplaced(), config.directory(), config.toolProfiles().names());
  }
}
