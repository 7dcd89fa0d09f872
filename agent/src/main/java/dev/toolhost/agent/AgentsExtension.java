package dev.toolhost.agent;

import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.Redactor;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.spi.AgentCatalog;
import dev.toolhost.core.spi.ConfigException;
import dev.toolhost.core.spi.ConversationInbox;
import dev.toolhost.core.spi.HostCommand;
import dev.toolhost.core.spi.HostContext;
import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.core.spi.ReadyHost;
import dev.toolhost.core.spi.SectionReading;
import dev.toolhost.memory.WorkingMemory;
import dev.toolhost.search.ServiceIndex;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import tools.jackson.databind.JsonNode;

/**
 * The agents extension is a host's configured agents (the {@code agents:} section): once the host
 * is ready, every agent is a tool on its registry (source {@code agent:{name}}), with the subagent
 * tools, the whiteboard ({@link Whiteboard}, when the host has working memory), {@code spawn_wisps}
 * ({@link Wisps}) and the agents' guide; each turn's system prompt names the services most relevant
 * to the request (from the {@link ServiceIndex} service, when the host has one). The models' keys
 * are read from the host's environment. It shares the agents as an {@link Agents} service, and
 * serves the conversation API, {@code POST /v1/agents/{name}/turns}, {@code GET
 * /v1/agents/{name}/sessions/{id}} and {@code GET /v1/agents/{name}/sessions/{id}/events} ({@link
 * TurnsRoute}), whose turns have the channel tools and whose conversations are kept in the {@link
 * ConversationStore} when the host has one (the {@code conversations:} section), and is the host's
 * {@link ConversationInbox}, where a scheduled task's result reaches the conversation that
 * scheduled it.
 *
 * <p>Found by {@link java.util.ServiceLoader}; a host made in code gives it an {@link AgentsConfig}
 * of definitions through its builder.
 */
public final class AgentsExtension implements HostExtension<AgentsConfig> {

  /** The extension's name and config key. */
  public static final String NAME = "agents";

  private List<AgentDefinition> definitions = List.of();
  private Optional<String> summaryWriter = Optional.empty();
  private SummaryWriter summaries;
  private Map<String, String> environment = Map.of();
  private volatile Agents agents;
  private final List<ExecutableTool> kit = new ArrayList<>();
  private ToolRegistry registry;

  @Override
  public String name() {
    return NAME;
  }

  /**
   * The agents and their catalogue, shared once the host is ready, when the agents' dispatcher
   * exists; the conversation API's inbox, shared as it starts.
   */
  @Override
  public Set<Class<?>> provides() {
    return Set.of(Agents.class, AgentCatalog.class, ConversationInbox.class);
  }

  /**
   * The secret scanner on what goes to and comes from models, the service index for context hints
   * and summaries, working memory for the whiteboard and for the tool results moved out of a
   * request to fit a model's window, and the store the conversation API keeps conversations in.
   */
  @Override
  public Set<Class<?>> uses() {
    return Set.of(Redactor.class, ServiceIndex.class, WorkingMemory.class, ConversationStore.class);
  }

  /**
   * A mapping of agent names to agents; each agent is checked against its own schema by {@link
   * AgentsConfig}, so that every problem of an agent is reported in file order.
   */
  @Override
  public JsonNode configSchema() {
    return AgentsConfig.SCHEMA.deepCopy();
  }

  /** {@code toolhost chat}: a conversation with an agent in the terminal. */
  @Override
  public List<HostCommand> commands() {
    return List.of(context -> new ChatCommand(context, System.in, System.console() != null));
  }

  @Override
  public AgentsConfig read(JsonNode section, SectionReading reading) {
    return AgentsConfig.read(section, reading);
  }

  @Override
  public void start(HostContext host, Optional<AgentsConfig> section) {
    AgentsConfig config = section.orElseGet(() -> new AgentsConfig(List.of()));
    definitions = config.agents();
    summaryWriter = config.summaryWriter();
    environment = host.environment();
    if (!definitions.isEmpty()) {
      host.guide(Agents.GUIDE);
      // Where the conversation API's conversations outlive the host, when the host keeps them.
      TurnsRoute turns =
          host.own(
              new TurnsRoute(
                  () -> Optional.ofNullable(agents),
                  TurnsRoute.KEEP_ALIVE,
                  host.service(ConversationStore.class)));
      turns.routes().forEach(host::route);
      // A scheduled task's result goes to the conversation of the API that scheduled it.
      host.provide(ConversationInbox.class, turns);
      // Helpers and tasks may ask the other agents; synthesising an outside agent's answer asks
      // none. The board: synthesis reads it and writes nothing; a subagent shares its parent's
      // board but runs no batches of its own; a task may run batches. The subagent tools are
      // granted to no restricted profile (no recursion).
      String[] agentTools = definitions.stream().map(AgentDefinition::name).toArray(String[]::new);
      host.allowTools("subagent", agentTools);
      host.allowTools("scheduled", agentTools);
      host.allowTools("subagent", "whiteboard_read", "whiteboard_write", "whiteboard_clear");
      host.allowTools(
          "scheduled", "whiteboard_read", "whiteboard_write", "whiteboard_clear", "spawn_wisps");
      host.allowTools("a2a_synthesis", "whiteboard_read");
    }
  }

  @Override
  public void ready(ReadyHost host) {
    if (definitions.isEmpty()) {
      return;
    }
    try {
      agents =
          Agents.create(
              definitions,
              host.registry(),
              host.service(ToolProfiles.class).orElseThrow(),
              host.dispatcher(),
              environment,
              Agents.DEFAULT_MAX_DEPTH,
              // The host's secret scanner, when it runs one, on what goes to and comes from models.
              host.service(Redactor.class).orElse(Redactor.NONE));
    } catch (IllegalArgumentException e) {
      // An agent named like a built-in tool, say.
      throw new ConfigException("agents: " + e.getMessage());
    }
    // A result moved out of a request to fit the model's window is kept there, by key.
    host.service(WorkingMemory.class).ifPresent(agents::setWorkingMemory);
    // Each turn, the agents' system prompts name the services most relevant to the request.
    host.service(ServiceIndex.class).ifPresent(index -> agents.setContextHints(index::contextHint));
    // One agent's model may write the services' summaries, once per set of tools.
    summaryWriter.ifPresent(
        name ->
            host.service(ServiceIndex.class)
                .ifPresent(
                    index ->
                        summaries =
                            SummaryWriter.start(
                                index, host.registry(), agents.agent(name).client())));
    host.provide(Agents.class, agents);
    host.provide(AgentCatalog.class, agents);
    // The whiteboard (where the host has working memory) and wisps: agent tools, gone with them.
    List<ExecutableTool> tools = new ArrayList<>();
    host.service(WorkingMemory.class)
        .ifPresent(
            memory ->
                tools.addAll(new Whiteboard(memory, agents.subagents()::parentSessionOf).tools()));
    tools.add(new Wisps(agents, host.registry(), Wisps.Limits.DEFAULT).tool());
    registry = host.registry();
    for (ExecutableTool tool : tools) {
      try {
        registry.register(tool);
      } catch (IllegalArgumentException e) {
        // A tool of the host's own (an MCP server's, say) holds the name.
        throw new ConfigException("agents: " + e.getMessage());
      }
      kit.add(tool);
    }
  }

  @Override
  public void close() {
    try {
      if (summaries != null) {
        summaries.close();
      }
    } finally {
      if (registry != null) {
        kit.forEach(tool -> registry.unregister(tool.name()));
        kit.clear();
      }
      if (agents != null) {
        agents.close();
      }
    }
  }
}
