package dev.toolhost.agent;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import dev.toolhost.core.spi.ConfigProblems;
import dev.toolhost.core.spi.ConfigSections;
import dev.toolhost.core.spi.ConfigSections.DurationText;
import dev.toolhost.core.spi.ConfigSections.Problem;
import dev.toolhost.core.spi.Durations;
import dev.toolhost.core.spi.SectionReading;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import tools.jackson.core.JsonPointer;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * The agents config is the {@code agents:} section of a config file: each agent's name (the key),
 * model, base URL, key variable, instructions, description, profile, whether it is enabled, its
 * parameters schema as a tool, its limits, its context budget ({@code context_window}, {@code
 * compact_at}, {@code tool_result_turns}) and whether it reads tool calls written as text ({@code
 * text_tool_calls}).
 *
 * <p>Read by {@link AgentsExtension} in the host's one reading of the file, its problems added to
 * those of the other sections, so that every problem of the file is reported at once, each naming
 * the file, the line and column, and what was expected. The host's schema of the section is only
 * its shape (a mapping of names to agents, {@link #SCHEMA}); each agent is checked here against its
 * own schema (generated from {@link RawAgent}), bound without the keys the schema refused, and its
 * values checked in Java, and the agent's problems of both kinds are reported together in file
 * order: so that one reading reports all problems of every agent, in order. Immutable.
 *
 * @param agents the agents in file order
 * @param summaryWriter the agent that writes the service summaries ({@code writes_summaries:
 *     true}), if one does
 */
public record AgentsConfig(List<AgentDefinition> agents, Optional<String> summaryWriter) {

  /** The schema of one agent, generated from its raw shape. */
  static final ObjectNode AGENT_SCHEMA = ConfigSections.schema(RawAgent.class);

  /**
   * The section's schema as the host checks it: a mapping of names to agents, each described by
   * {@link #AGENT_SCHEMA} for editors but checked by {@link #read}, so that a refused key does not
   * hide the agent's other problems.
   */
  static final ObjectNode SCHEMA = sectionSchema();

  static final Set<String> KEYS = new TreeSet<>(AGENT_SCHEMA.path("properties").propertyNames());

  public AgentsConfig {
    agents = List.copyOf(agents);
    Objects.requireNonNull(summaryWriter, "summaryWriter");
  }

  /** The agents, none of which writes the service summaries. */
  public AgentsConfig(List<AgentDefinition> agents) {
    this(agents, Optional.empty());
  }

  private static ObjectNode sectionSchema() {
    ObjectNode schema = JsonNodeFactory.instance.objectNode();
    schema.put("type", "object");
    schema.put("description", "a mapping of agent names to agents");
    ObjectNode agent = ConfigSections.described(AGENT_SCHEMA);
    agent.remove("type");
    agent.put("description", "an agent: its model, instructions, profile and limits");
    schema.set("additionalProperties", agent);
    return schema;
  }

  /**
   * Reads the section, adding its problems to the reading's; the result is only meaningful when
   * none was added. An agent's profile must be one of the reading's.
   *
   * @param section the section, or null when the file has none
   */
  public static AgentsConfig read(JsonNode section, SectionReading reading) {
    if (section == null || section.isMissingNode() || section.isNull()) {
      return new AgentsConfig(List.of());
    }
    ConfigProblems problems = reading.problems();
    JsonPointer at = JsonPointer.empty().appendProperty(AgentsExtension.NAME);
    // The host has checked the section against SCHEMA: a mapping, whose agents are checked here.
    if (!section.isObject()) {
      return new AgentsConfig(List.of());
    }
    List<AgentDefinition> agents = new ArrayList<>();
    List<String> writers = new ArrayList<>();
    for (Map.Entry<String, JsonNode> entry : section.properties()) {
      new Reader(entry.getKey(), at.appendProperty(entry.getKey()), reading.profiles())
          .read(entry.getValue(), problems, writers)
          .ifPresent(agents::add);
    }
    if (writers.size() > 1) {
      problems.atKey(
          at.appendProperty(writers.get(1)).appendProperty("writes_summaries").toString(),
          "only one agent writes the service summaries, but "
              + String.join(" and ", writers)
              + " both set 'writes_summaries: true'");
    }
    return new AgentsConfig(agents, writers.stream().findFirst());
  }

  /** Reads one agent's entry: its name, where it is, and the profiles it may name. */
  private record Reader(String name, JsonPointer at, List<String> profiles) {

    Optional<AgentDefinition> read(JsonNode entry, ConfigProblems problems, List<String> writers) {
      if (entry == null || entry.isNull()) {
        problems.atKey(
            at.toString(),
            "'agents."
                + name
                + "' is empty (expected a mapping with keys: "
                + String.join(", ", KEYS)
                + ")");
        return Optional.empty();
      }
      List<Problem> found =
          new ArrayList<>(ConfigSections.problems(at.toString().substring(1), AGENT_SCHEMA, entry));
      if (!entry.isObject()) {
        found.forEach(problem -> problem.addTo(problems));
        return Optional.empty();
      }
      // The keys the schema refused are left out, so that the others bind and are checked too.
      ObjectNode accepted = (ObjectNode) entry.deepCopy();
      found.forEach(problem -> accepted.remove(key(problem)));
      RawAgent raw = ConfigSections.bind(AgentsExtension.NAME, accepted, RawAgent.class);
      // A misspelt key explains a missing model better than a second message would.
      if (!entry.has("model") && found.stream().noneMatch(Problem::atKey)) {
        found.add(
            new Problem(
                at.toString(), true, "agent '" + name + "' needs a 'model' (such as gpt-4o-mini)"));
      }
      String model = text(raw.model(), "");
      if (accepted.has("model") && model.isBlank()) {
        found.add(
            problem(
                "model",
                "'agents."
                    + name
                    + ".model' is empty (expected a model name, such as gpt-4o-mini)"));
      }
      URI baseUrl = raw.baseUrl() == null ? ModelEndpoint.DEFAULT_BASE_URL : baseUrl(raw, found);
      String profile = text(raw.profile(), "main");
      if (!profiles.contains(profile)) {
        found.add(
            problem(
                "profile",
                "agent '"
                    + name
                    + "' names an unknown profile '"
                    + profile
                    + "' (known profiles: "
                    + String.join(", ", profiles)
                    + ")"));
      }
      if (raw.parameters() != null && !(raw.parameters() instanceof ObjectNode)) {
        found.add(
            problem(
                "parameters",
                "wrong type for 'agents."
                    + name
                    + ".parameters': expected a JSON Schema mapping, got "
                    + ConfigProblems.describe(raw.parameters())));
      }
      RunLimits defaults = RunLimits.DEFAULT;
      int maxSteps = count("max_steps", raw.maxSteps(), 1, found).orElse(defaults.maxSteps());
      int maxToolCalls =
          count("max_tool_calls", raw.maxToolCalls(), 0, found).orElse(defaults.maxToolCalls());
      Duration timeout = defaults.timeout();
      if (raw.timeout() != null) {
        Optional<Duration> parsed = Durations.parse(raw.timeout());
        if (parsed.isEmpty()) {
          found.add(
              problem(
                  "timeout",
                  "'agents."
                      + name
                      + ".timeout' is '"
                      + raw.timeout()
                      + "' (expected a positive duration, such as 500ms, 30s, 2m, 1h or PT1M)"));
        }
        timeout = parsed.orElse(timeout);
      }
      Optional<Integer> toolSearch = count("tool_search", raw.toolSearch(), 1, found);
      if (toolSearch.filter(n -> n > AgentDefinition.MAX_TOOL_SEARCH_PICKS).isPresent()) {
        found.add(
            problem(
                "tool_search",
                "'agents."
                    + name
                    + ".tool_search' is "
                    + toolSearch.get()
                    + " (expected how many tools one search adds, 1 to "
                    + AgentDefinition.MAX_TOOL_SEARCH_PICKS
                    + ")"));
      }
      ContextBudget context = ContextBudget.DEFAULT;
      Optional<Integer> window =
          count("context_window", raw.contextWindow(), ContextBudget.MIN_WINDOW, found);
      if (window.isPresent()) {
        context = context.withWindow(window.get());
      }
      if (raw.compactAt() != null) {
        double share = raw.compactAt();
        if (share >= 0.1 && share <= 0.95) {
          context = context.withCompactAt(share);
        } else {
          found.add(
              problem(
                  "compact_at",
                  "wrong value for 'agents."
                      + name
                      + ".compact_at': expected the share of the context window past which the"
                      + " history is compacted, 0.1 to 0.95, got the number "
                      + raw.compactAt()));
        }
      }
      Optional<Integer> resultTurns = count("tool_result_turns", raw.toolResultTurns(), 0, found);
      if (resultTurns.isPresent()) {
        context = context.withToolResultTurns(resultTurns.get());
      }
      if (Boolean.TRUE.equals(raw.writesSummaries())) {
        writers.add(name);
      }
      // The schema's problems and Java's together, in the file's order of the agent's keys.
      List<String> keys = List.copyOf(entry.propertyNames());
      found.sort(Comparator.comparingInt(problem -> keys.indexOf(key(problem))));
      found.forEach(problem -> problem.addTo(problems));
      if (!found.isEmpty()) {
        return Optional.empty();
      }
      try {
        return Optional.of(
            new AgentDefinition(
                name,
                text(raw.description(), "Agent " + name + "."),
                text(raw.instructions(), ""),
                new ModelEndpoint(
                    baseUrl, model, text(raw.apiKeyEnv(), ModelEndpoint.DEFAULT_API_KEY_ENV)),
                profile,
                !Boolean.FALSE.equals(raw.enabled()),
                Optional.ofNullable((ObjectNode) raw.parameters()),
                new RunLimits(maxSteps, maxToolCalls, timeout),
                toolSearch,
                context,
                Boolean.TRUE.equals(raw.textToolCalls())));
      } catch (IllegalArgumentException e) {
        problems.atKey(at.toString(), e.getMessage());
        return Optional.empty();
      }
    }

    private URI baseUrl(RawAgent raw, List<Problem> found) {
      try {
        URI url = new URI(raw.baseUrl());
        if ("http".equals(url.getScheme()) || "https".equals(url.getScheme())) {
          return url;
        }
      } catch (URISyntaxException e) {
        // Reported below.
      }
      found.add(
          problem(
              "base_url",
              "'agents."
                  + name
                  + ".base_url' is '"
                  + raw.baseUrl()
                  + "' (expected an http or https URL, such as https://api.openai.com/v1)"));
      return ModelEndpoint.DEFAULT_BASE_URL;
    }

    private Optional<Integer> count(String key, Long raw, int min, List<Problem> found) {
      if (raw == null) {
        return Optional.empty();
      }
      if (raw < min || raw > Integer.MAX_VALUE) {
        found.add(
            problem(
                key,
                "wrong value for 'agents."
                    + name
                    + "."
                    + key
                    + "': expected an integer of "
                    + min
                    + " or more, got the number "
                    + raw));
        return Optional.empty();
      }
      return Optional.of(raw.intValue());
    }

    private Problem problem(String key, String message) {
      return new Problem(at.appendProperty(key).toString(), false, message);
    }

    /** The agent's key a problem is about; empty for the agent itself. */
    private String key(Problem problem) {
      JsonPointer below = JsonPointer.compile(problem.pointer()).tail().tail();
      return below == null || below.matches() ? "" : below.getMatchingProperty();
    }

    private static String text(String raw, String fallback) {
      return raw == null ? fallback : raw;
    }
  }

  // ---- an agent's raw shape: every key optional, so every field may be null ----

  record RawAgent(
      @JsonPropertyDescription("the model's name, such as gpt-4o-mini (required)") String model,
      @JsonPropertyDescription("the OpenAI-compatible API's base URL") String baseUrl,
      @JsonPropertyDescription("the environment variable that holds the API key") String apiKeyEnv,
      @JsonPropertyDescription("the system prompt") String instructions,
      @JsonPropertyDescription("what the agent does, as its tool describes it") String description,
      @JsonPropertyDescription("the tool profile the agent works under (main by default)")
          String profile,
      @JsonPropertyDescription("whether the agent's tool is on (true by default)") Boolean enabled,
      @JsonPropertyDescription("the JSON Schema of the agent's tool's arguments")
          JsonNode parameters,
      @JsonPropertyDescription("the most model calls one run makes") Long maxSteps,
      @JsonPropertyDescription("the most tool calls one run makes") Long maxToolCalls,
      @DurationText String timeout,
      @JsonPropertyDescription("how many tools one tool search adds to a turn") Long toolSearch,
      @JsonPropertyDescription(
              "whether this agent's model writes the service search summaries (one agent at most)")
          Boolean writesSummaries,
      @JsonPropertyDescription(
              "the model's context window in tokens (looked up by model name when left out)")
          Long contextWindow,
      @JsonPropertyDescription(
              "the share of the context window past which old turns are summarised (0.75)")
          Double compactAt,
      @JsonPropertyDescription("how many latest turns keep their tool results whole (3)")
          Long toolResultTurns,
      @JsonPropertyDescription(
              "whether tool calls the model writes as text (<tool_call> blocks and the like) run")
          Boolean textToolCalls) {}
}
