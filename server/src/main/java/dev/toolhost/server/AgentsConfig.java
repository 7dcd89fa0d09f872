package dev.toolhost.server;

import dev.toolhost.agent.AgentDefinition;
import dev.toolhost.agent.ModelEndpoint;
import dev.toolhost.agent.RunLimits;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import picocli.CommandLine;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.core.TokenStreamLocation;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;
import tools.jackson.dataformat.yaml.YAMLMapper;

/**
 * The agents config is the {@code agents:} section of a config file: each agent's name (the key),
 * model, base URL, key variable, instructions, description, profile, whether it is enabled, its
 * parameters schema as a tool, and its limits.
 *
 * <p>Read apart from the rest of the file, so that the host's reader only has to tolerate the key;
 * errors name the file, the line and column, and what was expected, as the host's reader does.
 * Immutable.
 *
 * @param agents the agents in file order
 */
record AgentsConfig(List<AgentDefinition> agents) {

  private static final Set<String> KEYS =
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
              "timeout"));

  AgentsConfig {
    agents = List.copyOf(agents);
  }

  /** Reads the agents section of the file; an absent file or section gives no agents. */
  static AgentsConfig load(Path file) {
    try {
      return parse(Files.readString(file), file.toString());
    } catch (IOException e) {
      throw new ConfigException(file + ": cannot read the config file (" + e.getMessage() + ")");
    }
  }

  /** Reads the agents section of YAML text, calling it {@code fileName} in messages. */
  static AgentsConfig parse(String yaml, String fileName) {
    return parse(yaml, fileName, List.of());
  }

  /**
   * Reads the agents section of YAML text, refusing an agent whose profile is not one of {@code
   * profiles} (unless that is empty: then any name passes, to be checked where the agents are
   * made).
   */
  static AgentsConfig parse(String yaml, String fileName, Collection<String> profiles) {
    YAMLMapper mapper = new YAMLMapper();
    Map<String, TokenStreamLocation> at = new HashMap<>();
    JsonNode root;
    try (JsonParser parser = mapper.createParser(yaml)) {
      JsonToken token;
      while ((token = parser.nextToken()) != null) {
        at.putIfAbsent(
            parser.streamReadContext().pathAsPointer().toString()
                + (token == JsonToken.PROPERTY_NAME ? "#key" : ""),
            parser.currentTokenLocation());
      }
      root = mapper.readTree(yaml);
    } catch (JacksonException e) {
      throw new ConfigException(fileName + ": not valid YAML: " + e.getOriginalMessage());
    }
    JsonNode section = root == null ? null : root.get("agents");
    if (section == null || section.isNull()) {
      return new AgentsConfig(List.of());
    }
    Problems problems = new Problems(fileName, at);
    if (!section.isObject()) {
      problems.add("/agents", "'agents' must be a mapping of agent names to agents");
      problems.throwIfAny();
    }
    List<AgentDefinition> agents = new ArrayList<>();
    for (Map.Entry<String, JsonNode> entry : section.properties()) {
      agent(entry.getKey(), entry.getValue(), profiles, problems).ifPresent(agents::add);
    }
    problems.throwIfAny();
    return new AgentsConfig(agents);
  }

  private static Optional<AgentDefinition> agent(
      String name, JsonNode raw, Collection<String> profiles, Problems problems) {
    String at = "/agents/" + name;
    if (raw == null || !raw.isObject()) {
      problems.add(
          at, "agent '" + name + "' must be a mapping with keys: " + String.join(", ", KEYS));
      return Optional.empty();
    }
    int before = problems.count();
    for (String key : raw.propertyNames()) {
      if (!KEYS.contains(key)) {
        problems.addKey(
            at + "/" + key,
            "unknown key '"
                + key
                + "' under 'agents."
                + name
                + "' (expected one of: "
                + String.join(", ", KEYS)
                + ")");
      }
    }
    String model = text(raw, "model", name, problems).orElse("");
    if (model.isBlank() && problems.count() == before) {
      problems.addKey(at, "agent '" + name + "' needs a 'model' (such as gpt-4o-mini)");
    }
    URI baseUrl = ModelEndpoint.DEFAULT_BASE_URL;
    Optional<String> base = text(raw, "base_url", name, problems);
    if (base.isPresent()) {
      try {
        baseUrl = new URI(base.get());
        if (!"http".equals(baseUrl.getScheme()) && !"https".equals(baseUrl.getScheme())) {
          throw new URISyntaxException(base.get(), "not http or https");
        }
      } catch (URISyntaxException e) {
        problems.add(
            at + "/base_url",
            "'agents."
                + name
                + ".base_url' is not an http(s) URL (such as https://api.openai.com/v1)");
      }
    }
    String keyEnv =
        text(raw, "api_key_env", name, problems).orElse(ModelEndpoint.DEFAULT_API_KEY_ENV);
    String instructions = text(raw, "instructions", name, problems).orElse("");
    String description = text(raw, "description", name, problems).orElse("Agent " + name + ".");
    String profile = text(raw, "profile", name, problems).orElse("main");
    if (!profiles.isEmpty() && !profiles.contains(profile)) {
      problems.add(
          at + (raw.has("profile") ? "/profile" : ""),
          "agent '"
              + name
              + "' names an unknown profile '"
              + profile
              + "' (known profiles: "
              + String.join(", ", profiles)
              + ")");
    }
    boolean enabled = true;
    if (raw.has("enabled")) {
      if (raw.get("enabled").isBoolean()) {
        enabled = raw.get("enabled").asBoolean();
      } else {
        problems.add(
            at + "/enabled",
            "wrong type for 'agents." + name + ".enabled': expected true or false");
      }
    }
    Optional<ObjectNode> parameters = Optional.empty();
    if (raw.has("parameters")) {
      if (raw.get("parameters") instanceof ObjectNode schema) {
        parameters = Optional.of(schema);
      } else {
        problems.add(
            at + "/parameters",
            "wrong type for 'agents." + name + ".parameters': expected a JSON Schema mapping");
      }
    }
    RunLimits defaults = RunLimits.DEFAULT;
    int maxSteps = count(raw, "max_steps", name, 1, defaults.maxSteps(), problems);
    int maxToolCalls = count(raw, "max_tool_calls", name, 0, defaults.maxToolCalls(), problems);
    Duration timeout = defaults.timeout();
    Optional<String> timeoutText = text(raw, "timeout", name, problems);
    if (timeoutText.isPresent()) {
      try {
        timeout = new DurationConverter().convert(timeoutText.get());
      } catch (CommandLine.TypeConversionException e) {
        problems.add(at + "/timeout", "'agents." + name + ".timeout': " + e.getMessage());
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
              new RunLimits(maxSteps, maxToolCalls, timeout)));
    } catch (IllegalArgumentException e) {
      problems.addKey(at, e.getMessage());
      return Optional.empty();
    }
  }

  private static Optional<String> text(JsonNode raw, String key, String name, Problems problems) {
    JsonNode value = raw.get(key);
    if (value == null || value.isNull()) {
      return Optional.empty();
    }
    if (!value.isString() && !value.isNumber()) {
      problems.add(
          "/agents/" + name + "/" + key,
          "wrong type for 'agents." + name + "." + key + "': expected a string");
      return Optional.empty();
    }
    return Optional.of(value.asString());
  }

  private static int count(
      JsonNode raw, String key, String name, int min, int fallback, Problems problems) {
    JsonNode value = raw.get(key);
    if (value == null) {
      return fallback;
    }
    if (!value.isInt() || value.asInt() < min) {
      problems.add(
          "/agents/" + name + "/" + key,
          "wrong value for 'agents."
              + name
              + "."
              + key
              + "': expected an integer of "
              + min
              + " or more");
      return fallback;
    }
    return value.asInt();
  }

  /** Problems found so far, each with its place in the file. */
  private static final class Problems {
    private final String fileName;
    private final Map<String, TokenStreamLocation> at;
    private final List<String> found = new ArrayList<>();

    Problems(String fileName, Map<String, TokenStreamLocation> at) {
      this.fileName = fileName;
      this.at = at;
    }

    void add(String pointer, String problem) {
      found.add(where(at.getOrDefault(pointer, at.get(pointer + "#key"))) + problem);
    }

    void addKey(String pointer, String problem) {
      found.add(where(at.getOrDefault(pointer + "#key", at.get(pointer))) + problem);
    }

    int count() {
      return found.size();
    }

    void throwIfAny() {
      if (!found.isEmpty()) {
        throw new ConfigException(String.join("\n", found));
      }
    }

    private String where(TokenStreamLocation location) {
      return location == null
          ? fileName + ": "
          : fileName
              + " line "
              + location.getLineNr()
              + ", column "
              + location.getColumnNr()
              + ": ";
    }
  }
}
