package dev.toolhost.agent;

import dev.toolhost.core.spi.ConfigProblems;
import dev.toolhost.core.spi.Durations;
import dev.toolhost.core.spi.SectionReading;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import tools.jackson.core.JsonPointer;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The agents config is the {@code agents:} section of a config file: each agent's name (the key),
 * model, base URL, key variable, instructions, description, profile, whether it is enabled, its
 * parameters schema as a tool, and its limits.
 *
 * <p>Read by {@link AgentsExtension} in the host's one reading of the file, its problems added to
 * those of the other sections, so that every problem of the file is reported at once, each naming
 * the file, the line and column, and what was expected. Every key of an agent is checked here, key
 * by key in file order, rather than by the section's schema: so that one reading reports all of an
 * agent's problems, in order, with the wording of the messages above. Immutable.
 *
 * @param agents the agents in file order
 * @param summaryWriter the agent that writes the service summaries ({@code writes_summaries:
 *     true}), if one does
 */
public record AgentsConfig(List<AgentDefinition> agents, Optional<String> summaryWriter) {

  static final Set<String> KEYS =
      new TreeSet<>(
          List.of(
              "model",
              "base_url",
              "api_key_env",
              "instructions",
              "description",
              "profile",
              "enabled",
              "parameters",
              "max_steps",
              "max_tool_calls",
              "timeout",
              "tool_search",
              "writes_summaries"));

  public AgentsConfig {
    agents = List.copyOf(agents);
    Objects.requireNonNull(summaryWriter, "summaryWriter");
  }

  /** The agents, none of which writes the service summaries. */
  public AgentsConfig(List<AgentDefinition> agents) {
    this(agents, Optional.empty());
  }

  /**
   * Reads the section, adding its problems to the reading's; the result is only meaningful when
   * none was added. An agent's profile must be one of the reading's.
   *
   * @param section the section, or null when the file has none
   */
  public static AgentsConfig read(JsonNode section, SectionReading reading) {
    return read(section, reading.profiles(), reading.problems());
  }

  private static AgentsConfig read(
      JsonNode section, Collection<String> profiles, ConfigProblems problems) {
    if (section == null || section.isMissingNode() || section.isNull()) {
      return new AgentsConfig(List.of());
    }
    JsonPointer at = JsonPointer.empty().appendProperty("agents");
    if (!section.isObject()) {
      problems.atValue(
          at.toString(),
          "wrong type for 'agents': expected a mapping of agent names to agents, got "
              + ConfigProblems.describe(section));
      return new AgentsConfig(List.of());
    }
    List<AgentDefinition> agents = new ArrayList<>();
    List<String> writers = new ArrayList<>();
    for (Map.Entry<String, JsonNode> entry : section.properties()) {
      new Reader(entry.getKey(), at.appendProperty(entry.getKey()), problems, writers)
          .read(entry.getValue(), profiles)
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

  /** Reads one agent's entry: its name, where it is, and the reading's problems. */
  private record Reader(
      String name, JsonPointer at, ConfigProblems problems, List<String> writers) {

    Optional<AgentDefinition> read(JsonNode raw, Collection<String> profiles) {
      if (raw == null || raw.isNull()) {
        problems.atKey(
            at.toString(),
            "'agents." + name + "' is empty (expected a mapping with keys: " + keys() + ")");
        return Optional.empty();
      }
      if (!raw.isObject()) {
        problems.atValue(
            at.toString(),
            "wrong type for 'agents."
                + name
                + "': expected a mapping with keys: "
                + keys()
                + ", got "
                + ConfigProblems.describe(raw));
        return Optional.empty();
      }
      int before = problems.count();
      // A misspelt key explains a missing model better than a second message would.
      boolean unknownKeys = raw.propertyNames().stream().anyMatch(key -> !KEYS.contains(key));
      if (!raw.has("model") && !unknownKeys) {
        problems.atKey(at.toString(), "agent '" + name + "' needs a 'model' (such as gpt-4o-mini)");
      }
      String model = "";
      URI baseUrl = ModelEndpoint.DEFAULT_BASE_URL;
      String keyEnv = ModelEndpoint.DEFAULT_API_KEY_ENV;
      String instructions = "";
      String description = "Agent " + name + ".";
      String profile = "main";
      boolean enabled = true;
      Optional<ObjectNode> parameters = Optional.empty();
      RunLimits defaults = RunLimits.DEFAULT;
      int maxSteps = defaults.maxSteps();
      int maxToolCalls = defaults.maxToolCalls();
      Duration timeout = defaults.timeout();
      Optional<Integer> toolSearch = Optional.empty();
      // Key by key in file order, so that the problems come in file order too.
      for (Map.Entry<String, JsonNode> entry : raw.properties()) {
        String key = entry.getKey();
        JsonNode value = entry.getValue();
        switch (key) {
          case "model" -> {
            model = text(key, value).orElse("");
            if (model.isBlank() && (value.isNull() || value.isString())) {
              problems.atValue(
                  pointer(key),
                  "'agents."
                      + name
                      + ".model' is empty (expected a model name, such as gpt-4o-mini)");
            }
          }
          case "base_url" -> baseUrl = text(key, value).flatMap(this::baseUrl).orElse(baseUrl);
          case "api_key_env" -> keyEnv = text(key, value).orElse(keyEnv);
          case "instructions" -> instructions = text(key, value).orElse(instructions);
          case "description" -> description = text(key, value).orElse(description);
          case "profile" -> {
            profile = text(key, value).orElse(profile);
            if (!profiles.contains(profile)) {
              problems.atValue(
                  pointer(key),
                  "agent '"
                      + name
                      + "' names an unknown profile '"
                      + profile
                      + "' (known profiles: "
                      + String.join(", ", profiles)
                      + ")");
            }
          }
          case "enabled" -> {
            if (value.isBoolean()) {
              enabled = value.asBoolean();
            } else {
              problems.atValue(
                  pointer(key),
                  "wrong type for 'agents."
                      + name
                      + ".enabled': expected true or false, got "
                      + ConfigProblems.describe(value));
            }
          }
          case "parameters" -> {
            if (value instanceof ObjectNode schema) {
              parameters = Optional.of(schema);
            } else {
              problems.atValue(
                  pointer(key),
                  "wrong type for 'agents."
                      + name
                      + ".parameters': expected a JSON Schema mapping, got "
                      + ConfigProblems.describe(value));
            }
          }
          case "writes_summaries" -> {
            if (!value.isBoolean()) {
              problems.atValue(
                  pointer(key),
                  "wrong type for 'agents."
                      + name
                      + ".writes_summaries': expected true or false, got "
                      + ConfigProblems.describe(value));
            } else if (value.asBoolean()) {
              writers.add(name);
            }
          }
          case "max_steps" -> maxSteps = count(key, value, 1).orElse(maxSteps);
          case "max_tool_calls" -> maxToolCalls = count(key, value, 0).orElse(maxToolCalls);
          case "timeout" -> timeout = text(key, value).flatMap(this::timeout).orElse(timeout);
          case "tool_search" -> {
            toolSearch = count(key, value, 1);
            if (toolSearch.filter(n -> n > AgentDefinition.MAX_TOOL_SEARCH_PICKS).isPresent()) {
              problems.atValue(
                  pointer(key),
                  "'agents."
                      + name
                      + ".tool_search' is "
                      + toolSearch.get()
                      + " (expected how many tools one search adds, 1 to "
                      + AgentDefinition.MAX_TOOL_SEARCH_PICKS
                      + ")");
            }
          }
          default ->
              problems.atKey(
                  pointer(key),
                  "unknown key '"
                      + key
                      + "' under 'agents."
                      + name
                      + "'"
                      + ConfigProblems.expectedKeys(key, KEYS));
        }
      }
      if (problems.count() > before) {
        return Optional.empty();
      }
      try {
        return Optional.of(
            new AgentDefinition(
                name,
                description,
                instructions,
                new ModelEndpoint(baseUrl, model, keyEnv),
                profile,
                enabled,
                parameters,
                new RunLimits(maxSteps, maxToolCalls, timeout),
                toolSearch));
      } catch (IllegalArgumentException e) {
        problems.atKey(at.toString(), e.getMessage());
        return Optional.empty();
      }
    }

    private Optional<URI> baseUrl(String text) {
      try {
        URI url = new URI(text);
        if ("http".equals(url.getScheme()) || "https".equals(url.getScheme())) {
          return Optional.of(url);
        }
      } catch (URISyntaxException e) {
        // Reported below.
      }
      problems.atValue(
          pointer("base_url"),
          "'agents."
              + name
              + ".base_url' is '"
              + text
              + "' (expected an http or https URL, such as https://api.openai.com/v1)");
      return Optional.empty();
    }

    private Optional<Duration> timeout(String text) {
      Optional<Duration> timeout = Durations.parse(text);
      if (timeout.isEmpty()) {
        problems.atValue(
            pointer("timeout"),
            "'agents."
                + name
                + ".timeout' is '"
                + text
                + "' (expected a positive duration, such as 500ms, 30s, 2m, 1h or PT1M)");
      }
      return timeout;
    }

    /** The value as text (a number reads as its digits), or empty when null or of another type. */
    private Optional<String> text(String key, JsonNode value) {
      if (value.isNull()) {
        return Optional.empty();
      }
      if (!value.isString() && !value.isNumber()) {
        problems.atValue(
            pointer(key),
            "wrong type for 'agents."
                + name
                + "."
                + key
                + "': expected a string, got "
                + ConfigProblems.describe(value));
        return Optional.empty();
      }
      return Optional.of(value.asString());
    }

    private Optional<Integer> count(String key, JsonNode value, int min) {
      if (!value.isInt() || value.asInt() < min) {
        problems.atValue(
            pointer(key),
            "wrong value for 'agents."
                + name
                + "."
                + key
                + "': expected an integer of "
                + min
                + " or more, got "
                + ConfigProblems.describe(value));
        return Optional.empty();
      }
      return Optional.of(value.asInt());
    }

    private String pointer(String key) {
      return at.appendProperty(key).toString();
    }

    private static String keys() {
      return String.join(", ", KEYS);
    }
  }
}
