package dev.toolhost.agent;

import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.ParametersSchema;
import dev.toolhost.core.Redactor;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolCaller;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolGuide;
import dev.toolhost.core.ToolGuides;
import dev.toolhost.core.ToolProfile;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import dev.toolhost.core.ToolSpec;
import dev.toolhost.core.spi.AgentCatalog;
import dev.toolhost.memory.WorkingMemory;
import dev.toolhost.search.ServiceIndex;
import dev.toolhost.search.ToolSearch;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Agents are the configured agents of one host, each a tool to the others: every agent is
 * registered as a tool named after it (source {@code agent:{name}}) that takes {@code {message}} or
 * its own parameters schema, runs the agent's own loop over its own tool set, and answers with the
 * agent's final text. The subagent tools ({@link Subagents}) are registered too.
 *
 * <p>A disabled agent is not offered to any model, and a call to it answers {@code unavailable}
 * saying it is disabled. An agent never sees itself as a tool, and sees another agent's tools only
 * when its profile grants them. An agent called as a tool runs with at most what its caller may
 * use: the tools both its own profile allows and its caller's tool set shows ({@link
 * ToolSet#within}), so that calling an agent never widens a profile. A call that would revisit an
 * agent already in the chain of agents calling each other ({@link AgentChain}), or make that chain
 * longer than the maximum depth (3 by default), is refused with {@code execution_failed} saying so.
 * A run that passes its deadline answers {@code timeout}. Thread-safe; {@link #close()} cancels
 * running subagents, unregisters the tools and closes the model clients.
 */
public final class Agents implements AgentCatalog, AutoCloseable {

  /** The source prefix of agent tools: {@code agent:{name}}. */
  public static final String SOURCE_PREFIX = "agent:";

  /**
   * The guide to agents as tools, subagents, {@code search_tools} and the reply tool: how to hand
   * work on, follow it, and read what comes back.
   */
  public static final ToolGuide GUIDE =
      ToolGuide.fromResource(
          "agents",
          "How to hand work to other agents and to subagents, follow them, and read what comes back.",
          Agents.class,
          "guides/agents.md");

  /**
   * The longest chain of agents calling agents, by default: an agent, one it calls, and one more.
   */
  public static final int DEFAULT_MAX_DEPTH = 3;

  private final ToolRegistry registry;
  private final ToolProfiles profiles;
  private final int maxDepth;
  private final Map<String, Agent> agents = new LinkedHashMap<>();
  private final Map<String, Boolean> enabled = new ConcurrentHashMap<>();
  private final List<ModelClient> clients = new ArrayList<>();
  private final List<String> registered = new ArrayList<>();
  private final Subagents subagents;
  private final Redactor redactor;
  // Over the registry when some agent finds its tools by searching; follows the registry's changes.
  private final Optional<ToolSearch> search;
  private volatile Function<String, Optional<String>> hints = message -> Optional.empty();
  // The most recent conversations by session, for what reaches a session later (an A2A late
  // answer); held weakly, so that a conversation its owner dropped is still collected.
  private final Map<String, WeakSession> sessions =
      java.util.Collections.synchronizedMap(
          new LinkedHashMap<>(16, 0.75f, true) {
            private static final long serialVersionUID = 1L;

            @Override
            protected boolean removeEldestEntry(Map.Entry<String, WeakSession> eldest) {
              return size() > SESSIONS_KEPT;
            }
          });

  /** How many sessions {@link #session} remembers; the least recently made go first. */
  public static final int SESSIONS_KEPT = 1024;

  private record WeakSession(
      String agentName, java.lang.ref.WeakReference<Conversation> conversation) {}

  /**
   * A session is a conversation this host made and the agent it is with.
   *
   * @param agentName the agent
   * @param conversation the conversation
   */
  public record Session(String agentName, Conversation conversation) {
    public Session {
      Objects.requireNonNull(agentName, "agentName");
      Objects.requireNonNull(conversation, "conversation");
    }
  }

  private Agents(
      List<AgentDefinition> definitions,
      ToolRegistry registry,
      ToolProfiles profiles,
      ToolDispatcher dispatcher,
      Map<String, String> environment,
      int maxDepth,
      Redactor redactor) {
    this.registry = Objects.requireNonNull(registry, "registry");
    this.profiles = Objects.requireNonNull(profiles, "profiles");
    if (maxDepth < 1) {
      throw new IllegalArgumentException("The agent chain's maximum depth must be at least 1.");
    }
    this.maxDepth = maxDepth;
    this.redactor = Objects.requireNonNull(redactor, "redactor");
    for (AgentDefinition definition : definitions) {
      profiles.get(definition.profile());
      if (agents.containsKey(definition.name())) {
        throw new IllegalArgumentException("Agent '" + definition.name() + "' is defined twice.");
      }
      ModelClient client =
          ModelClient.builder(definition.endpoint())
              .environment(environment)
              .redactor(redactor)
              .build();
      clients.add(client);
      agents.put(
          definition.name(),
          new Agent(definition, client, dispatcher, this::offered).withContextHints(this::hint));
      enabled.put(definition.name(), definition.enabled());
    }
    this.subagents = new Subagents(this);
    this.search =
        definitions.stream().anyMatch(definition -> definition.toolSearch().isPresent())
            ? Optional.of(ToolSearch.over(registry))
            : Optional.empty();
    try {
      for (Agent agent : agents.values()) {
        registry.register(agentTool(agent.definition()));
        registered.add(agent.definition().name());
      }
      for (ExecutableTool tool : subagents.tools()) {
        registry.register(tool);
        registered.add(tool.name());
      }
    } catch (RuntimeException e) {
      close();
      throw e;
    }
  }

  /**
   * Agents from the definitions, their tools registered on the registry.
   *
   * @param environment where the models' keys are read from
   * @throws IllegalArgumentException when an agent names an unknown profile, two agents share a
   *     name, or a tool of an agent's name is already registered
   */
  public static Agents create(
      List<AgentDefinition> definitions,
      ToolRegistry registry,
      ToolProfiles profiles,
      ToolDispatcher dispatcher,
      Map<String, String> environment) {
    return create(definitions, registry, profiles, dispatcher, environment, DEFAULT_MAX_DEPTH);
  }

  /**
   * Agents from the definitions, as {@link #create(List, ToolRegistry, ToolProfiles,
   * ToolDispatcher, Map)}, with the longest chain of agents calling agents that may run.
   *
   * @param maxDepth how many agents a chain may hold, the outermost included (at least 1)
   */
  public static Agents create(
      List<AgentDefinition> definitions,
      ToolRegistry registry,
      ToolProfiles profiles,
      ToolDispatcher dispatcher,
      Map<String, String> environment,
      int maxDepth) {
    return create(
        definitions, registry, profiles, dispatcher, environment, maxDepth, Redactor.NONE);
  }

  /**
   * Agents from the definitions, as {@link #create(List, ToolRegistry, ToolProfiles,
   * ToolDispatcher, Map, int)}, whose model clients redact with the given redactor what they send
   * to the models and what the models stream back (the host's secret scanner).
   */
  public static Agents create(
      List<AgentDefinition> definitions,
      ToolRegistry registry,
      ToolProfiles profiles,
      ToolDispatcher dispatcher,
      Map<String, String> environment,
      int maxDepth,
      Redactor redactor) {
    return new Agents(definitions, registry, profiles, dispatcher, environment, maxDepth, redactor);
  }

  /**
   * The agent of the given name.
   *
   * @throws IllegalArgumentException naming the known agents
   */
  public Agent agent(String name) {
    Agent agent = agents.get(name);
    if (agent == null) {
      throw new IllegalArgumentException(
          "Unknown agent '" + name + "'. Known agents: " + String.join(", ", agents.keySet()));
    }
    return agent;
  }

  /** The names of every agent, in definition order. */
  public List<String> names() {
    return List.copyOf(agents.keySet());
  }

  /** The subagents spawned by this host's conversations. */
  public Subagents subagents() {
    return subagents;
  }

  /** The redactor the agents' model clients use: the host's secret scanner, when it runs one. */
  Redactor redactor() {
    return redactor;
  }

  /** A new conversation with the named agent, in a new session, over the agent's tool set. */
  public Conversation conversation(String agentName) {
    return conversation(agentName, UUID.randomUUID().toString());
  }

  /** A new conversation with the named agent in the given session. */
  public Conversation conversation(String agentName, String sessionId) {
    AgentDefinition definition = agent(agentName).definition();
    Conversation conversation =
        Conversation.of(sessionId, toolSet(definition, definition.profile()));
    subagents.track(agentName, conversation);
    sessions.put(
        sessionId, new WeakSession(agentName, new java.lang.ref.WeakReference<>(conversation)));
    return conversation;
  }

  /**
   * The conversation of a session made by {@link #conversation(String, String)}, with its agent,
   * while it is among the {@link #SESSIONS_KEPT} most recent and its owner still holds it.
   */
  public Optional<Session> session(String sessionId) {
    WeakSession held = sessions.get(sessionId);
    Conversation conversation = held == null ? null : held.conversation().get();
    return conversation == null
        ? Optional.empty()
        : Optional.of(new Session(held.agentName(), conversation));
  }

  /**
   * Sets the context hint provider of every agent, subagent and agent called as a tool: given a
   * turn's message, the text it returns joins that turn's system prompt (see {@link Agent}).
   */
  public void setContextHints(Function<String, Optional<String>> hints) {
    this.hints = Objects.requireNonNull(hints, "hints");
  }

  /**
   * Keeps in the given working memory the tool results the agents move out of their requests to fit
   * their models' windows (see {@link Agent#withWorkingMemory}). Called once, before the agents
   * serve.
   */
  public void setWorkingMemory(WorkingMemory memory) {
    agents.replaceAll((name, agent) -> agent.withWorkingMemory(memory));
  }

  private Optional<String> hint(String message) {
    return hints.apply(message);
  }

  /** Enables or disables an agent's tool at run time. */
  public void setEnabled(String agentName, boolean on) {
    agent(agentName);
    enabled.put(agentName, on);
  }

  /** Whether a spec is offered to models: everything but a disabled agent's tool. */
  boolean offered(ToolSpec spec) {
    if (!spec.source().startsWith(SOURCE_PREFIX)) {
      return true;
    }
    return enabled.getOrDefault(spec.source().substring(SOURCE_PREFIX.length()), true);
  }

  /**
   * The tool set an agent runs with under the named profile: never itself. An agent that searches
   * for its tools starts with the host's own tools its profile allows and {@code search_tools},
   * which finds the rest of what the profile allows.
   */
  ToolSet toolSet(AgentDefinition definition, String profileName) {
    return toolSet(definition, profileName, Optional.empty());
  }

  /** The tool set as {@link #toolSet(AgentDefinition, String)}, bounded by a caller's set. */
  private ToolSet toolSet(
      AgentDefinition definition, String profileName, Optional<ToolSet> ceiling) {
    ToolProfile profile = profiles.get(profileName);
    ToolProfile scoped = profile.withoutNames(definition.name()).named(profile.name());
    if (definition.toolSearch().isEmpty()) {
      return ceiling
          .map(caller -> ToolSet.within(registry, scoped, caller))
          .orElseGet(() -> ToolSet.of(registry, scoped));
    }
    ToolProfile starting = startingProfile(scoped);
    ToolSet set =
        ceiling
            .map(caller -> ToolSet.within(registry, starting, caller))
            .orElseGet(() -> ToolSet.of(registry, starting));
    search.orElseThrow().bind(set, scoped, definition.toolSearch().get());
    return set;
  }

  /** The sources of the host's own tools: what an agent that searches for its tools starts with. */
  static final List<String> STARTING_SOURCES =
      List.of(
          ToolGuides.SOURCE,
          // WorkingMemoryTools.SOURCE: the memory module is not a dependency of this one.
          "builtin:memory",
          ServiceIndex.SOURCE,
          Subagents.SOURCE,
          Whiteboard.SOURCE,
          Wisps.SOURCE);

  /**
   * The profile's rule narrowed to the host's own sources and the tools it names: never more than
   * the profile allows. A tool the profile names is one its operator chose, so it is there from the
   * start.
   */
  static ToolProfile startingProfile(ToolProfile profile) {
    Set<String> sources = new LinkedHashSet<>();
    for (String source : STARTING_SOURCES) {
      boolean allowed =
          profile.allowedSources().contains(ToolProfile.ANY_SOURCE)
              || profile.allowedSources().contains(source);
      if (allowed && !profile.deniedSources().contains(source)) {
        sources.add(source);
      }
    }
    return new ToolProfile(
        profile.name(),
        sources,
        profile.deniedSources(),
        profile.allowedNames(),
        profile.deniedNames());
  }

  /** How much longer than its run an agent called as a tool may take to answer. */
  static final Duration ANSWER_MARGIN = Duration.ofSeconds(5);

  private ExecutableTool agentTool(AgentDefinition definition) {
    ObjectNode parameters = definition.parameters().orElseGet(Agents::messageSchema);
    ToolSpec spec =
        new ToolSpec(
            definition.name(),
            definition.description(),
            parameters,
            SOURCE_PREFIX + definition.name());
    // A caller that names no deadline gives the agent its whole run, and a little more, so that
    // the run's own timeout, which says what happened, answers before the caller's deadline.
    return ExecutableTool.of(spec, (call, arguments) -> callAgent(definition, call, arguments))
        .withTimeout(definition.limits().timeout().plus(ANSWER_MARGIN));
  }

  private ToolResult callAgent(AgentDefinition definition, ToolCall call, JsonNode arguments) {
    String name = definition.name();
    if (!enabled.getOrDefault(name, false)) {
      return ToolResult.failure(
          ErrorCode.UNAVAILABLE,
          "Agent '" + name + "' is disabled and cannot take requests. Do without it.");
    }
    List<String> chain = AgentChain.current();
    if (chain.contains(name)) {
      return ToolResult.failure(
          ErrorCode.EXECUTION_FAILED,
          "Agent '"
              + name
              + "' is already working on this request ("
              + String.join(" -> ", chain)
              + " -> "
              + name
              + "): agents may not call each other in a cycle. Do this part yourself.");
    }
    if (chain.size() + 1 > maxDepth) {
      return ToolResult.failure(
          ErrorCode.EXECUTION_FAILED,
          "Agent '"
              + name
              + "' cannot be called here: the chain of agents calling agents ("
              + String.join(" -> ", chain)
              + ") is already "
              + chain.size()
              + " deep, and at most "
              + maxDepth
              + " may run. Do this part yourself.");
    }
    String message =
        definition.parameters().isEmpty()
            ? arguments.path("message").asString()
            : "Your task's arguments:\n" + arguments;
    Duration left = Duration.between(Instant.now(), call.deadline());
    Duration timeout =
        left.compareTo(definition.limits().timeout()) < 0 ? left : definition.limits().timeout();
    if (timeout.isNegative() || timeout.isZero()) {
      return timedOut(name, timeout);
    }
    Agent agent =
        new Agent(
                definition.withLimits(definition.limits().withTimeout(timeout)),
                agents.get(name).client(),
                agents.get(name).dispatcher(),
                this::offered)
            .withContextHints(this::hint);
    Conversation conversation =
        Conversation.of(
                // A session of its own per call: the caller's call id (call_0 in every turn, for
                // every user) would give two calls one session, and so one working memory and one
                // workspace.
                call.sessionId().orElse("agent") + "/" + name + "/" + UUID.randomUUID(),
                // Never more than the caller may use: its own tool set bounds the agent's.
                toolSet(definition, definition.profile(), ToolCaller.toolSet()))
            .madeFor(call.user(), call.principal());
    RunResult result = agent.run(conversation, message, RunListener.NONE);
    return switch (result.stop()) {
      case COMPLETED -> ToolResult.success(result.text());
      // Only a turn with channel tools can skip; an agent called as a tool has none.
      case SKIPPED -> ToolResult.success("Agent '" + name + "' chose not to answer.");
      case MAX_STEPS ->
          ToolResult.failure(
              ErrorCode.EXECUTION_FAILED,
              "Agent '"
                  + name
                  + "' stopped after "
                  + result.steps()
                  + " steps without a final answer."
                  + (result.text().isBlank() ? "" : " Its last words: " + result.text()));
      case TIMEOUT -> timedOut(name, timeout);
      case CANCELLED ->
          ToolResult.failure(
              ErrorCode.CANCELLED, "The call to agent '" + name + "' was cancelled.");
    };
  }

  private static ToolResult timedOut(String name, Duration timeout) {
    return ToolResult.failure(
        ErrorCode.TIMEOUT,
        "Agent '"
            + name
            + "' did not answer within "
            + Math.max(0, timeout.toMillis())
            + " ms and was stopped. You may retry with a smaller request.");
  }

  private static ObjectNode messageSchema() {
    return ParametersSchema.oneString("message", "The message to send to the agent.");
  }

  @Override
  public void close() {
    subagents.close();
    search.ifPresent(ToolSearch::close);
    registered.forEach(registry::unregister);
    registered.clear();
    clients.forEach(ModelClient::close);
  }
}
