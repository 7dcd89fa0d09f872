package dev.toolhost.a2a;

import dev.toolhost.agent.Agent;
import dev.toolhost.agent.AgentDefinition;
import dev.toolhost.agent.Agents;
import dev.toolhost.agent.Conversation;
import dev.toolhost.agent.RunListener;
import dev.toolhost.agent.RunResult;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolSpec;
import dev.toolhost.core.spi.ConfigSections;
import dev.toolhost.core.spi.HostContext;
import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.core.spi.Principal;
import dev.toolhost.core.spi.ReadyHost;
import dev.toolhost.core.spi.Route;
import dev.toolhost.core.spi.SectionReading;
import dev.toolhost.memory.WorkingMemory;
import dev.toolhost.search.ServiceIndex;
import dev.toolhost.web.OutboundHttp;
import dev.toolhost.web.OutboundPolicy;
import java.time.Clock;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.JsonNode;

/**
 * The A2A extension is the host's agent-to-agent protocol, both ways (the {@code a2a:} section):
 * the client tools over the configured remote agents ({@link A2aTools}, source {@code a2a}), those
 * agents in the service index, late answers handled under the {@code a2a_synthesis} profile, and,
 * with {@code a2a.server}, the host's own agents published over A2A ({@link A2aServer}).
 *
 * <p>Off until configured. Calls to remote agents go through an {@link OutboundHttp} client under
 * the web extension's outbound policy (the defaults without it) that also opens the hosts of the
 * configured agents, which an operator chose; a card that names another host reaches it only when
 * the policy allows it, and never with the agent's credential. Found by {@link
 * java.util.ServiceLoader}; made with an {@link OutboundHttp.Lookup}, it resolves names with it.
 */
public final class A2aExtension implements HostExtension<A2aConfig> {

  /** The extension's name and config key. */
  public static final String NAME = "a2a";

  private static final Logger LOG = LoggerFactory.getLogger(A2aExtension.class);

  private final OutboundHttp.Lookup lookup;
  private A2aTools tools;
  private final AtomicReference<Agents> agents = new AtomicReference<>();
  private final AtomicReference<ReadyHost> ready = new AtomicReference<>();
  private final Map<String, Conversation> contexts =
      java.util.Collections.synchronizedMap(
          new LinkedHashMap<>(16, 0.75f, true) {
            private static final long serialVersionUID = 1L;

            @Override
            protected boolean removeEldestEntry(Map.Entry<String, Conversation> eldest) {
              return size() > 1024;
            }
          });

  /** The extension resolving names with the system's resolver. */
  public A2aExtension() {
    this(OutboundHttp.Lookup.system());
  }

  /** The extension resolving names with the given resolver (a test's fixed addresses). */
  public A2aExtension(OutboundHttp.Lookup lookup) {
    this.lookup = Objects.requireNonNull(lookup, "lookup");
  }

  @Override
  public String name() {
    return NAME;
  }

  /**
   * The web's outbound policy (the defaults without it), the service index the agents' skills join,
   * working memory for long answers; the agents are found once the host is ready.
   */
  @Override
  public Set<Class<?>> uses() {
    return Set.of(OutboundHttp.class, ServiceIndex.class, WorkingMemory.class);
  }

  @Override
  public JsonNode configSchema() {
    return ConfigSections.schema(A2aConfig.Raw.class);
  }

  @Override
  public A2aConfig read(JsonNode section, SectionReading reading) {
    return A2aConfig.read(section, reading);
  }

  @Override
  public void start(HostContext host, Optional<A2aConfig> section) {
    if (section.isEmpty()) {
      return;
    }
    A2aConfig config = section.get();
    OutboundPolicy policy =
        host.service(OutboundHttp.class)
            .map(OutboundHttp::policy)
            .orElse(OutboundPolicy.defaults());
    for (A2aConfig.RemoteAgent agent : config.agents().values()) {
      policy = policy.allowingHost(agent.url().getHost());
    }
    if (policy.timeout().compareTo(config.maxWait()) < 0) {
      // A blocking read of a remote task may last as long as a caller may wait.
      policy = policy.withCaps(policy.maxRedirects(), policy.maxBodyBytes(), config.maxWait());
    }
    OutboundHttp http = host.own(OutboundHttp.start(policy, lookup));
    A2aClient client = new A2aClient(http);
    Optional<ServiceIndex> index = host.service(ServiceIndex.class);
    AgentDirectory directory =
        new AgentDirectory(
            config.agents(),
            client,
            config.cardRefresh(),
            host.environment(),
            index,
            Clock.systemUTC());
    tools = host.own(new A2aTools(directory, client, config, host.service(WorkingMemory.class)));
    tools.onLateAnswer(this::synthesise);
    host.registry().registerAll(tools.tools());
    // Calling other agents, for helpers and tasks; synthesising an answer calls no agent.
    host.allowTools(tools.tools(), "subagent", "scheduled");
    host.guide(A2aTools.GUIDE);
    if (!config.agents().isEmpty()) {
      Thread firstFetch =
          Thread.ofVirtual()
              .name("toolhost-a2a-cards")
              .start(
                  () -> {
                    try {
                      directory.refreshAll();
                    } catch (InterruptedException e) {
                      Thread.currentThread().interrupt();
                    }
                  });
      host.own(firstFetch::interrupt);
    }
    if (config.server().isPresent()) {
      A2aServer server = host.own(new A2aServer(config.server().get(), this::published, this::run));
      for (Route route : server.routes()) {
        host.route(route);
      }
    }
  }

  @Override
  public void ready(ReadyHost host) {
    this.ready.set(host);
    host.service(Agents.class).ifPresent(agents::set);
  }

  /** The client tools, once started; for tests and embedders. */
  public Optional<A2aTools> tools() {
    return Optional.ofNullable(tools);
  }

  private Optional<A2aServer.Published> published(String name) {
    Agents all = agents.get();
    ReadyHost host = ready.get();
    if (all == null || host == null || !all.names().contains(name)) {
      return Optional.empty();
    }
    AgentDefinition definition = all.agent(name).definition();
    List<AgentCard.Skill> skills = new ArrayList<>();
    skills.add(
        new AgentCard.Skill(
            name,
            name,
            definition.description().isBlank() ? "Agent " + name : definition.description(),
            List.of("toolhost"),
            List.of()));
    for (ToolSpec spec : host.toolSet(definition.profile()).specs()) {
      skills.add(
          new AgentCard.Skill(
              spec.name(), spec.name(), spec.description(), List.of("tool"), List.of()));
    }
    return Optional.of(
        new A2aServer.Published(
            name,
            definition.description().isBlank() ? "Agent " + name : definition.description(),
            definition.profile(),
            skills));
  }

  private String run(String agentName, String context, Principal principal, String message)
      throws InterruptedException {
    Agents all = agents.get();
    if (all == null) {
      throw new IllegalStateException("The host's agents are not ready.");
    }
    Conversation conversation =
        contexts.computeIfAbsent(
            agentName + "/" + context,
            key -> {
              Conversation made = all.conversation(agentName, "a2a-" + context);
              made.actAs(principal);
              return made;
            });
    RunResult result = all.agent(agentName).run(conversation, message, RunListener.NONE);
    if (result.stop() == RunResult.Stop.CANCELLED || Thread.interrupted()) {
      throw new InterruptedException("the task was cancelled");
    }
    return result.text();
  }

  // A late answer is handled under a2a_synthesis, which cannot call invoke_agent, by the agent of
  // the session that asked; what it makes of it reaches that session's next turn as a notice.
  private void synthesise(LateAnswer answer) {
    Agents all = agents.get();
    ReadyHost host = ready.get();
    if (all == null || host == null) {
      return;
    }
    Optional<Agents.Session> session = all.session(answer.sessionId());
    if (session.isEmpty()) {
      LOG.debug("Late answer for session {} kept in working memory only", answer.sessionId());
      return;
    }
    Agent agent = all.agent(session.get().agentName());
    Conversation synthesis =
        Conversation.of(answer.sessionId(), host.toolSet(ToolProfiles.A2A_SYNTHESIS.name()));
    RunResult result =
        agent.run(
            synthesis,
            answer.notice()
                + "\n\nSay in a few sentences what this result means for the conversation.",
            RunListener.NONE);
    session.get().conversation().deliver(answer.notice() + "\n\n[a2a_synthesis] " + result.text());
  }
}
