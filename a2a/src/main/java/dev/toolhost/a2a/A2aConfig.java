package dev.toolhost.a2a;

import dev.toolhost.core.spi.ConfigProblems;
import dev.toolhost.core.spi.ConfigSections;
import dev.toolhost.core.spi.Durations;
import dev.toolhost.core.spi.EnvironmentNames;
import dev.toolhost.core.spi.SectionReading;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * An A2A config is the {@code a2a:} section of a host config: the remote agents the client may
 * call, and whether and where the host serves its own agents over A2A.
 *
 * <pre>{@code
 * a2a:
 *   agents:                            # remote agents; their hosts are opened for outbound calls
 *     billing:
 *       url: https://billing.example.com   # base URL: the card is at /.well-known/agent-card.json
 *       auth_env: BILLING_A2A_TOKEN        # optional: sent as 'Authorization: Bearer <value>'
 *       auth_header: Authorization         # optional, the default
 *       auth_scheme: Bearer                # optional, the default; empty sends the value alone
 *   well_known_agents: well-known-agents.json  # optional: more agents, [{name, url}]
 *   card_refresh: 5m                   # how long a fetched card is used before it is fetched again
 *   default_wait: 30s                  # how long invoke_agent waits before answering a task id
 *   max_wait: 10m                      # the most a caller's timeout_seconds may ask for
 *   late_answer_ttl: 60m               # how long a late answer stays in working memory
 *   server:                            # off unless present
 *     public_url: https://toolhost.example.com  # cards name /a2a/{agent} under it
 *     max_tasks: 1000                  # tasks kept; the oldest finished ones go first
 *     send_wait: 60s                   # how long a blocking send waits for the agent
 * }</pre>
 *
 * @param agents the configured remote agents by name, in config order
 * @param cardRefresh how long a card is cached
 * @param defaultWait how long invoke_agent waits by default
 * @param maxWait the longest wait a caller may ask for
 * @param lateAnswerTtl how long late answers stay in working memory
 * @param server the server's settings, when the host serves its agents
 */
public record A2aConfig(
    Map<String, RemoteAgent> agents,
    Duration cardRefresh,
    Duration defaultWait,
    Duration maxWait,
    Duration lateAnswerTtl,
    Optional<Server> server) {

  /** The name of an agent: what invoke_agent's caller passes. */
  static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.-]{0,63}");

  public A2aConfig {
    agents = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(agents));
    Objects.requireNonNull(cardRefresh, "cardRefresh");
    Objects.requireNonNull(defaultWait, "defaultWait");
    Objects.requireNonNull(maxWait, "maxWait");
    Objects.requireNonNull(lateAnswerTtl, "lateAnswerTtl");
    Objects.requireNonNull(server, "server");
  }

  /**
   * A remote agent: its base URL and how to authenticate to it.
   *
   * @param name its name
   * @param url its base URL, where its card is at {@code /.well-known/agent-card.json}
   * @param authEnv the environment variable that holds its credential, if any
   * @param authHeader the header the credential goes in
   * @param authScheme what precedes the credential in the header ({@code Bearer}); empty for none
   */
  public record RemoteAgent(
      String name, URI url, Optional<String> authEnv, String authHeader, String authScheme) {
    public RemoteAgent {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(url, "url");
      Objects.requireNonNull(authEnv, "authEnv");
      Objects.requireNonNull(authHeader, "authHeader");
      Objects.requireNonNull(authScheme, "authScheme");
    }

    /** An agent at the URL without credentials. */
    public static RemoteAgent of(String name, URI url) {
      return new RemoteAgent(name, url, Optional.empty(), "Authorization", "Bearer");
    }

    /** Where its card is. */
    public URI cardUrl() {
      String base = url.toString();
      return URI.create(
          (base.endsWith("/") ? base.substring(0, base.length() - 1) : base)
              + "/.well-known/agent-card.json");
    }
  }

  /**
   * The server's settings.
   *
   * @param publicUrl the base URL callers reach this host at
   * @param maxTasks how many tasks are kept
   * @param sendWait how long a blocking send waits for its agent
   */
  public record Server(URI publicUrl, int maxTasks, Duration sendWait) {
    public Server {
      Objects.requireNonNull(publicUrl, "publicUrl");
      Objects.requireNonNull(sendWait, "sendWait");
      if (maxTasks < 1) {
        throw new IllegalArgumentException("maxTasks must be positive");
      }
    }
  }

  /** A config with the given agents, the default times, and no server. */
  public static A2aConfig of(Map<String, RemoteAgent> agents) {
    return new A2aConfig(
        agents,
        Duration.ofMinutes(5),
        Duration.ofSeconds(30),
        Duration.ofMinutes(10),
        Duration.ofMinutes(60),
        Optional.empty());
  }

  /** This config with the server on. */
  public A2aConfig withServer(Server settings) {
    return new A2aConfig(
        agents, cardRefresh, defaultWait, maxWait, lateAnswerTtl, Optional.of(settings));
  }

  /** This config with another default wait. */
  public A2aConfig withWait(Duration newWait) {
    return new A2aConfig(agents, cardRefresh, newWait, maxWait, lateAnswerTtl, server);
  }

  /**
   * Reads a section its schema accepts, adding its problems to the reading's; the result is only
   * meaningful when none was added.
   */
  public static A2aConfig read(JsonNode section, SectionReading reading) {
    ConfigProblems problems = reading.problems();
    Raw raw = ConfigSections.bind(A2aExtension.NAME, section, Raw.class);
    Map<String, RemoteAgent> agents = new LinkedHashMap<>();
    if (raw.agents() != null) {
      raw.agents()
          .forEach(
              (name, agent) -> {
                String at = "/a2a/agents/" + name;
                if (!NAME.matcher(name).matches()) {
                  problems.atKey(
                      at,
                      "'a2a.agents."
                          + name
                          + "' is not a valid agent name (letters, digits, '_', '.', '-')");
                }
                readAgent(name, agent, at, problems).ifPresent(a -> agents.put(name, a));
              });
    }
    if (raw.wellKnownAgents() != null) {
      Path file = reading.directory().resolve(raw.wellKnownAgents());
      for (RemoteAgent agent : wellKnown(file, problems)) {
        agents.putIfAbsent(agent.name(), agent);
      }
    }
    Duration refresh = duration(raw.cardRefresh(), Duration.ofMinutes(5), "card_refresh", problems);
    Duration wait = duration(raw.defaultWait(), Duration.ofSeconds(30), "default_wait", problems);
    Duration maxWait = duration(raw.maxWait(), Duration.ofMinutes(10), "max_wait", problems);
    Duration ttl =
        duration(raw.lateAnswerTtl(), Duration.ofMinutes(60), "late_answer_ttl", problems);
    Optional<Server> server = Optional.empty();
    if (raw.server() != null) {
      URI url = url(raw.server().publicUrl(), "/a2a/server/public_url", problems);
      int max = raw.server().maxTasks() == null ? 1000 : raw.server().maxTasks();
      if (max < 1) {
        problems.atValue("/a2a/server/max_tasks", "'a2a.server.max_tasks' must be at least 1");
        max = 1;
      }
      Duration serverWait =
          duration(raw.server().sendWait(), Duration.ofSeconds(60), "server.send_wait", problems);
      if (url != null) {
        server = Optional.of(new Server(url, max, serverWait));
      }
    }
    return new A2aConfig(agents, refresh, wait, maxWait, ttl, server);
  }

  private static Optional<RemoteAgent> readAgent(
      String name, RawAgent agent, String at, ConfigProblems problems) {
    URI url = url(agent.url(), at + "/url", problems);
    EnvironmentNames.read(
        agent.authEnv(), at + "/auth_env", Optional.empty(), "credential", problems);
    if (url == null) {
      return Optional.empty();
    }
    return Optional.of(
        new RemoteAgent(
            name,
            url,
            Optional.ofNullable(agent.authEnv()),
            agent.authHeader() == null ? "Authorization" : agent.authHeader(),
            agent.authScheme() == null ? "Bearer" : agent.authScheme()));
  }

  private static List<RemoteAgent> wellKnown(Path file, ConfigProblems problems) {
    String at = "/a2a/well_known_agents";
    JsonNode tree;
    try {
      tree = JsonMapper.shared().readTree(Files.readString(file));
    } catch (IOException | JacksonException e) {
      problems.atValue(
          at,
          "'a2a.well_known_agents' is '"
              + file
              + "', which could not be read as JSON ("
              + e.getMessage().lines().findFirst().orElse("")
              + ")");
      return List.of();
    }
    JsonNode entries = tree.isArray() ? tree : tree.path("agents");
    List<RemoteAgent> agents = new ArrayList<>();
    int index = 0;
    for (JsonNode entry : entries) {
      String name = entry.path("name").asString(entry.path("agentName").asString(""));
      String url = entry.path("url").asString("");
      String place = file.getFileName() + " entry " + index++;
      if (!NAME.matcher(name).matches()) {
        problems.atValue(at, place + " has no valid 'name' ('" + name + "')");
        continue;
      }
      URI uri = url(url, at, problems);
      if (uri == null) {
        continue;
      }
      String authEnv = entry.path("auth_env").asString("");
      agents.add(
          new RemoteAgent(
              name,
              uri,
              authEnv.isBlank() ? Optional.empty() : Optional.of(authEnv),
              "Authorization",
              "Bearer"));
    }
    return agents;
  }

  private static URI url(String text, String at, ConfigProblems problems) {
    if (text != null) {
      try {
        URI given = new URI(text.strip());
        if (given.getHost() != null
            && ("https".equalsIgnoreCase(given.getScheme())
                || "http".equalsIgnoreCase(given.getScheme()))
            && given.getRawUserInfo() == null) {
          return given;
        }
      } catch (URISyntaxException e) {
        // Reported below.
      }
    }
    problems.atValue(
        at,
        "'"
            + ConfigProblems.dotted(at)
            + "' is '"
            + text
            + "' (expected an http or https URL without a user name, such as"
            + " https://agent.example.com)");
    return null;
  }

  private static Duration duration(
      String text, Duration fallback, String key, ConfigProblems problems) {
    return Durations.read(text, fallback, "/a2a/" + key.replace('.', '/'), problems)
        .orElse(fallback);
  }

  // ---- the section's raw shape: every key optional, so every field may be null ----

  record Raw(
      Map<String, RawAgent> agents,
      String wellKnownAgents,
      @ConfigSections.DurationText String cardRefresh,
      @ConfigSections.DurationText String defaultWait,
      @ConfigSections.DurationText String maxWait,
      @ConfigSections.DurationText String lateAnswerTtl,
      RawServer server) {}

  record RawAgent(String url, String authEnv, String authHeader, String authScheme) {}

  record RawServer(
      String publicUrl, Integer maxTasks, @ConfigSections.DurationText String sendWait) {}
}
