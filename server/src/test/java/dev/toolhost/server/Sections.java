package dev.toolhost.server;

import dev.toolhost.agent.AgentDefinition;
import dev.toolhost.agent.AgentsConfig;
import dev.toolhost.agent.AgentsExtension;
import dev.toolhost.bus.ToolServicesConfig;
import dev.toolhost.bus.ToolServicesExtension;
import dev.toolhost.core.spi.ConfigProblems;
import dev.toolhost.core.spi.SectionReading;
import dev.toolhost.host.HostConfig;
import dev.toolhost.mcp.McpConfig;
import dev.toolhost.mcp.McpExtension;
import dev.toolhost.memory.MemoryConfig;
import dev.toolhost.memory.WorkingMemoryExtension;
import java.nio.file.Path;
import java.util.List;

/**
 * Sections reads the extensions' sections of a config the host read, as each extension does when it
 * starts, for tests that check what a file says.
 */
final class Sections {

  private Sections() {}

  static McpConfig mcp(HostConfig config) {
    return config.sections().containsKey(McpExtension.NAME)
        ? McpConfig.read(config.section(McpExtension.NAME))
        : McpConfig.none();
  }

  static MemoryConfig memory(HostConfig config) {
    return config.sections().containsKey(WorkingMemoryExtension.NAME)
        ? MemoryConfig.read(config.section(WorkingMemoryExtension.NAME))
        : MemoryConfig.defaults();
  }

  static List<AgentDefinition> agents(HostConfig config) {
    SectionReading reading = reading(config);
    List<AgentDefinition> agents =
        AgentsConfig.read(config.sections().get(AgentsExtension.NAME), reading).agents();
    reading.problems().throwIfAny();
    return agents;
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

  /** The tool services of config text, checked with the whole text. */
  static ToolServicesConfig toolServices(String yaml, String fileName, Path directory) {
    return toolServices(HostConfig.parse(yaml, fileName, directory));
  }

  private static SectionReading reading(HostConfig config) {
    return new SectionReading(
        ConfigProblems.unplaced(), config.directory(), config.toolProfiles().names());
  }
}
