package dev.toolhost.bus;

import dev.toolhost.core.spi.ConfigException;
import dev.toolhost.core.spi.ConfigSections;
import dev.toolhost.core.spi.HostContext;
import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.core.spi.SectionReading;
import java.util.Optional;
import java.util.Set;
import tools.jackson.databind.JsonNode;

/**
 * The tool services extension is a host's link to the message bus (the {@code tool_services:}
 * section): when the host has a {@link MessageBus} service (the command line's {@code --bus}, or a
 * library user's {@code Host.Builder.service}), it registers the tools that workers and tool
 * services announce on the bus while they live ({@link RemoteTools}), and the section's tool
 * services, with source {@code service:{id}}. It shares them as a {@link ToolServices} service, and
 * the remote tools as a {@link RemoteTools} service (the MCP extension's management tools list the
 * MCP servers workers bridge from it).
 *
 * <p>A host with no bus has no remote tools; a section that configures tool services then fails the
 * host's start, since its tools could not be called. The bus itself belongs to whoever made it, who
 * closes it after the host.
 */
public final class ToolServicesExtension implements HostExtension<ToolServicesConfig> {

  /** The extension's name and config key. */
  public static final String NAME = ToolServicesConfig.KEY;

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public Set<Class<?>> provides() {
    return Set.of(ToolServices.class, RemoteTools.class);
  }

  /** The bus is the host's, given to its builder: none is no error while no service is named. */
  @Override
  public Set<Class<?>> uses() {
    return Set.of(MessageBus.class);
  }

  /**
   * The section's three keys, described for editors; the section is checked against its whole
   * schema by {@link ToolServicesConfig}, with the descriptors and the files they are read from, so
   * that one reading reports every problem of the section.
   */
  @Override
  public JsonNode configSchema() {
    return ConfigSections.described(ToolServicesConfig.SCHEMA);
  }

  @Override
  public ToolServicesConfig read(JsonNode section, SectionReading reading) {
    return ToolServicesConfig.read(section, reading);
  }

  @Override
  public void start(HostContext host, Optional<ToolServicesConfig> section) {
    ToolServicesConfig config = section.orElseGet(ToolServicesConfig::none);
    Optional<MessageBus> bus = host.service(MessageBus.class);
    if (bus.isEmpty()) {
      if (!config.services().isEmpty() || !config.tools().isEmpty()) {
        throw new ConfigException(
            NAME
                + ": the config has tool services but the host has no message bus to call them"
                + " over (give --bus, or a MessageBus service to the host's builder)");
      }
      return;
    }
    ToolServices services = new ToolServices(bus.get(), host.registry());
    RemoteTools remoteTools =
        host.own(new RemoteTools(bus.get(), host.registry(), services).start());
    host.provide(ToolServices.class, services);
    // The MCP extension's management tools list and reach the MCP servers workers bridge.
    host.provide(RemoteTools.class, remoteTools);
    config.applyTo(services);
  }
}
