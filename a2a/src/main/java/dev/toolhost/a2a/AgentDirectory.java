package dev.toolhost.a2a;

import dev.toolhost.search.KnownService;
import dev.toolhost.search.ServiceIndex;
import dev.toolhost.search.ServiceKind;
import dev.toolhost.search.ServiceSummaries;
import dev.toolhost.web.OutboundException;
import dev.toolhost.web.OutboundHttp;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The agent directory is every remote agent the host knows (from the config and {@code
 * well-known-agents.json}) with its card, fetched when first needed and again once older than the
 * refresh time; a card that cannot be fetched again is kept until it can. Each agent is an entry of
 * the service index (kind {@code a2a}), its skills, tags and examples the searchable text.
 *
 * <p>Credentials are read from the environment when a call is made and go only to the origin of the
 * agent's configured URL. Thread-safe.
 */
public final class AgentDirectory {

  private static final Logger LOG = LoggerFactory.getLogger(AgentDirectory.class);

  private final Map<String, A2aConfig.RemoteAgent> agents;
  private final A2aClient client;
  private final Duration refresh;
  private final Map<String, String> environment;
  private final Optional<ServiceIndex> index;
  private final Clock clock;
  private final Map<String, Fetched> cards = new ConcurrentHashMap<>();

  private record Fetched(AgentCard card, Instant at) {}

  /** A directory of the given agents. */
  public AgentDirectory(
      Map<String, A2aConfig.RemoteAgent> agents,
      A2aClient client,
      Duration refresh,
      Map<String, String> environment,
      Optional<ServiceIndex> index,
      Clock clock) {
    this.agents = Map.copyOf(new LinkedHashMap<>(agents));
    this.client = Objects.requireNonNull(client, "client");
    this.refresh = Objects.requireNonNull(refresh, "refresh");
    this.environment = Map.copyOf(environment);
    this.index = Objects.requireNonNull(index, "index");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.agents.values().forEach(this::indexUnfetched);
  }

  /** The names of every known agent, sorted. */
  public List<String> names() {
    return agents.keySet().stream().sorted().toList();
  }

  /** The configured agent of that name. */
  public Optional<A2aConfig.RemoteAgent> agent(String name) {
    return Optional.ofNullable(agents.get(name));
  }

  /** When the agent's card was last fetched, if ever. */
  public Optional<Instant> lastSeen(String name) {
    return Optional.ofNullable(cards.get(name)).map(Fetched::at);
  }

  /** The card fetched last, without fetching. */
  public Optional<AgentCard> cached(String name) {
    return Optional.ofNullable(cards.get(name)).map(Fetched::card);
  }

  /**
   * The agent's card: the cached one while fresh, else fetched again (the stale one is kept when
   * the fetch fails, and the failure thrown when there is none).
   *
   * @throws IllegalArgumentException naming the known agents when the name is unknown
   */
  public AgentCard card(String name) throws InterruptedException {
    A2aConfig.RemoteAgent agent = require(name);
    Fetched fetched = cards.get(name);
    if (fetched != null && fetched.at().plus(refresh).isAfter(clock.instant())) {
      return fetched.card();
    }
    try {
      AgentCard card = client.card(agent.cardUrl(), credentials(agent, agent.cardUrl()));
      cards.put(name, new Fetched(card, clock.instant()));
      indexCard(name, card);
      return card;
    } catch (OutboundException | A2aException e) {
      if (fetched != null) {
        LOG.warn("The card of agent {} could not be fetched again; the last one stays", name, e);
        return fetched.card();
      }
      throw e;
    }
  }

  /** Fetches every card that is not fresh, logging those that fail. */
  public void refreshAll() throws InterruptedException {
    for (String name : names()) {
      try {
        card(name);
      } catch (OutboundException | A2aException e) {
        LOG.warn("The card of agent {} could not be fetched: {}", name, e.getMessage());
      }
    }
  }

  /** Where the agent's calls go, in the version its card offers, with its credentials. */
  public A2aClient.Target target(String name) throws InterruptedException {
    A2aConfig.RemoteAgent agent = require(name);
    AgentCard card = card(name);
    return new A2aClient.Target(
        card.endpoint(), card.protocol(), credentials(agent, card.endpoint()));
  }

  private A2aConfig.RemoteAgent require(String name) {
    A2aConfig.RemoteAgent agent = agents.get(name);
    if (agent == null) {
      throw new IllegalArgumentException(
          "Unknown agent '"
              + name
              + "'. Known agents: "
              + (agents.isEmpty() ? "none" : String.join(", ", names()))
              + ".");
    }
    return agent;
  }

  // The credential goes to the configured origin only: a card may name another host.
  private Map<String, String> credentials(A2aConfig.RemoteAgent agent, URI to) {
    if (agent.authEnv().isEmpty() || !OutboundHttp.sameOrigin(agent.url(), to)) {
      return Map.of();
    }
    String value = environment.get(agent.authEnv().get());
    if (value == null || value.isBlank()) {
      return Map.of();
    }
    return Map.of(
        agent.authHeader(),
        agent.authScheme().isBlank() ? value : agent.authScheme() + " " + value);
  }

  private void indexUnfetched(A2aConfig.RemoteAgent agent) {
    index.ifPresent(
        i ->
            i.put(
                new KnownService(
                    agent.name(),
                    ServiceKind.AGENT,
                    "A2A agent " + agent.name() + " at " + agent.url().getHost(),
                    List.of())));
  }

  private void indexCard(String name, AgentCard card) {
    if (index.isEmpty()) {
      return;
    }
    List<KnownService.Capability> skills = new ArrayList<>();
    List<String> tags = new ArrayList<>();
    for (AgentCard.Skill skill : card.skills()) {
      StringBuilder text = new StringBuilder(skill.name());
      if (!skill.description().isBlank()) {
        text.append(": ").append(skill.description());
      }
      if (!skill.examples().isEmpty()) {
        text.append(" Examples: ").append(String.join("; ", skill.examples()));
      }
      skills.add(new KnownService.Capability(skill.id(), text.toString()));
      skill.tags().stream().filter(t -> !tags.contains(t)).forEach(tags::add);
    }
    // The card's own description; without one, a summary derived from its skills (which a summary
    // writer may replace with a written one), not a bare name.
    String summary =
        card.description().isBlank()
            ? ServiceSummaries.derive(ServiceKind.AGENT, name, skills)
            : card.description();
    index.get().put(new KnownService(name, ServiceKind.AGENT, summary, skills, tags));
  }
}
