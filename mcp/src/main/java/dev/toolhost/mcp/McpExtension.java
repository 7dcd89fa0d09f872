package dev.toolhost.mcp;

import dev.toolhost.bus.MessageBus;
import dev.toolhost.bus.RemoteTools;
import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.spi.CommandContext;
import dev.toolhost.core.spi.ConfigSections;
import dev.toolhost.core.spi.HostCommand;
import dev.toolhost.core.spi.HostContext;
import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.core.spi.ReadyHost;
import dev.toolhost.core.spi.SectionReading;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import tools.jackson.databind.JsonNode;

/**
 * The MCP extension is a host's MCP bridge (the {@code mcp:} section): it connects the configured
 * servers in parallel, waiting at most the start timeout (a broken or slow server never stops the
 * host), publishes the {@code mcp-tool-guide} guide, and once the host is ready registers the
 * management tools, which call through the host's dispatcher; it shares the bridge as a {@link
 * McpBridge} service and disconnects every server when it closes. A host whose config has no {@code
 * mcp:} section has no bridge.
 *
 * <p>On a message bus (when the host has the {@link RemoteTools} of the tool services extension),
 * the management tools see the MCP servers that workers bridge as well: a host with no {@code mcp:}
 * section registers them when a worker first announces an MCP server. The registration tools come
 * with the bridge's own policy, or when a worker group first announces that it lets a model
 * register servers on its workers ({@code mcp_register_server} with {@code worker_group}).
 *
 * <p>It owns the profile rule about its tools: subagents and scheduled tasks may not register or
 * unregister servers. Found by {@link java.util.ServiceLoader}, it reads its section from the
 * host's config.
 */
public final class McpExtension implements HostExtension<McpConfig> {

  /** The extension's name and config key. */
  public static final String NAME = "mcp";

  /**
   * The grants of this extension's tools to the restricted built-in profiles, by profile: subagents
   * and scheduled tasks may list the servers and call their tools (each call still under the
   * caller's profile, which grants no bridged server's tool unless the operator's does), never
   * register or unregister one; synthesis has none. A bridged server's own tools enter no
   * restricted profile.
   */
  public static final Map<String, List<String>> GRANTS =
      Map.of(
          ToolProfiles.SUBAGENT.name(), McpManagementTools.LISTING,
          ToolProfiles.SCHEDULED.name(), McpManagementTools.LISTING);

  private McpBridge bridge;
  private McpGatewayServlet gateway;

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public Set<Class<?>> provides() {
    return Set.of(McpBridge.class);
  }

  @Override
  public JsonNode configSchema() {
    return ConfigSections.schema(McpConfigReader.RawMcp.class);
  }

  /**
   * {@code toolhost mcp}, a profile's tools as an MCP server over stdio; {@code toolhost worker},
   * which hosts tools (the config's MCP servers' among them) for remote callers on the bus; and
   * {@code toolhost mcp-approve}, which pins a quarantined tool's changed definition.
   */
  @Override
  public List<HostCommand> commands() {
    return List.of(
        McpCommand::new,
        // Takes its own --bus: it opens the bus itself, and the host it lends tools from has none.
        new HostCommand() {
          @Override
          public Object command(CommandContext context) {
            return new WorkerCommand(context);
          }

          @Override
          public boolean opensHost() {
            return false;
          }
        },
        new HostCommand() {
          @Override
          public Object command(CommandContext context) {
            return new McpApproveCommand(context);
          }

          @Override
          public boolean opensHost() {
            return false;
          }
        });
  }

  @Override
  public McpConfig read(JsonNode section, SectionReading reading) {
    return new McpConfigReader(reading.problems()).read(section);
  }

  @Override
  public void start(HostContext host, Optional<McpConfig> section) {
    GRANTS.forEach((profile, tools) -> host.allowTools(profile, tools.toArray(String[]::new)));
    // The host's tools over Streamable HTTP, served by the host's HTTP front when it has one.
    gateway = host.own(new McpGatewayServlet());
    host.mount(gateway.mount());
    McpConfig config = section.orElseGet(McpConfig::none);
    if (!config.enabled()) {
      return;
    }
    McpBridge.Builder builder =
        McpBridge.builder(host.registry())
            .approved(config.approved())
            .connectTimeout(config.connectTimeout())
            .startTimeout(config.startTimeout())
            .registration(config.registration());
    config.stateDirectory().ifPresent(builder::stateDirectory);
    // Disconnects every server it started when the host closes, or when a later step fails.
    bridge = host.own(builder.build());
    host.provide(McpBridge.class, bridge);
    host.guide(McpBridge.GUIDE);
    // Connects in parallel, waiting at most the start timeout.
    bridge.start(config.servers());
  }

  @Override
  public void ready(ReadyHost host) {
    gateway.ready(host);
    // Started after this extension, the tool services extension's remote tools exist only now.
    Optional<RemoteTools> remote = host.service(RemoteTools.class);
    Optional<MessageBus> bus = host.service(MessageBus.class);
    if (remote.isEmpty() || bus.isEmpty()) {
      if (bridge != null) {
        // They call through the host's dispatcher, which exists only now.
        host.registry().registerAll(bridge.managementTools(host.dispatcher()));
      }
      return;
    }
    RemoteTools workers = remote.get();
    // With no mcp: section, over a bridge of no servers of its own (it starts nothing, so it holds
    // nothing to close).
    McpBridge owner = bridge != null ? bridge : McpBridge.builder(host.registry()).build();
    List<ExecutableTool> tools =
        owner.managementTools(
            host.dispatcher(), workers::mcpServers, workers::mcpRegistration, bus.get());
    List<ExecutableTool> listing =
        tools.stream().filter(tool -> !McpManagementTools.registers(tool)).toList();
    List<ExecutableTool> registering =
        tools.stream().filter(McpManagementTools::registers).toList();
    // The listing tools come with the bridge, or with the first server or registering group a
    // worker announces; the registration tools with the bridge's policy, or the first group that
    // lets a model register.
    AtomicBoolean listed = new AtomicBoolean();
    AtomicBoolean offered = new AtomicBoolean();
    boolean ownPolicy = bridge != null && bridge.registration().offered();
    Runnable offer =
        () -> {
          boolean announced =
              !workers.mcpServers().isEmpty() || !workers.mcpRegistration().isEmpty();
          if ((bridge != null || announced) && listed.compareAndSet(false, true)) {
            listing.forEach(tool -> host.registry().registerIfAbsent(tool));
          }
          if ((ownPolicy || !workers.mcpRegistration().isEmpty())
              && offered.compareAndSet(false, true)) {
            registering.forEach(tool -> host.registry().registerIfAbsent(tool));
          }
        };
    workers.onMcpServers(offer);
    offer.run();
  }
}
