package dev.toolhost.host;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import dev.toolhost.core.ToolProfile;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.spi.Builtins;
import dev.toolhost.core.spi.ConfigException;
import dev.toolhost.core.spi.ConfigProblems;
import dev.toolhost.core.spi.ConfigSections;
import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.core.spi.SectionReading;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.MalformedInputException;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonPointer;
import tools.jackson.core.JsonToken;
import tools.jackson.core.StreamReadFeature;
import tools.jackson.core.TokenStreamContext;
import tools.jackson.core.TokenStreamLocation;
import tools.jackson.core.exc.StreamReadException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;
import tools.jackson.dataformat.yaml.YAMLMapper;

/**
 * The config reader turns YAML text into a {@link HostConfig}, or refuses it whole with a {@link
 * ConfigException} that names the file, the line and column, and what was expected.
 *
 * <p>It reads in two passes: a token pass that checks the YAML and notes where every key and value
 * sits, then the sections, each in the one way of {@link ConfigSections}: the host's own are
 * checked against the schema generated from the file's raw shape ({@link RawConfig}), bound, and
 * checked in Java for what the schema cannot say (ranges, profile names, {@code extends}); each
 * extension's section is checked against its schema and then by the extension ({@link
 * HostExtension#read}). Every problem of the file is collected into one {@link ConfigProblems}
 * before the file is refused. Locations are the YAML parser's token locations, found by the JSON
 * pointer of the key or value at fault.
 */
public final class ConfigReader {

  private static final Pattern MARK = Pattern.compile("^ in \\S+, line (\\d+), column (\\d+):");

  /** The schema of the host's own sections. */
  private static final ObjectNode HOST_SCHEMA = hostSchema();

  // The host extensions whose sections the file may hold, by section name.
  private final Map<String, HostExtension<?>> extensions = new LinkedHashMap<>();

  /** The JSON Schema of the whole config file, with the given extensions' sections. */
  public static ObjectNode schema(List<HostExtension<?>> extensions) {
    ObjectNode schema = HOST_SCHEMA.deepCopy();
    schema.put("$schema", "https://json-schema.org/draft/2020-12/schema");
    schema.put("title", "Toolhost config");
    ObjectNode properties = (ObjectNode) schema.get("properties");
    for (HostExtension<?> extension : extensions) {
      if (!extension.configSchema().isMissingNode()) {
        properties.set(extension.name(), extension.configSchema());
      }
    }
    return schema;
  }

  private static ObjectNode hostSchema() {
    ObjectNode schema = ConfigSections.schema(RawConfig.class);
    // A profile with nothing under it ("reviewer:") is a profile with no rules of its own.
    ((ObjectNode) schema.at("/properties/profiles/additionalProperties"))
        .putArray("type")
        .add("object")
        .add("null");
    return schema;
  }

  /** A reader of the host's own sections and the given extensions'. */
  public ConfigReader(List<HostExtension<?>> extensions) {
    extensions.stream()
        .filter(extension -> !extension.configSchema().isMissingNode())
        .forEach(extension -> this.extensions.put(extension.name(), extension));
  }

  private final YAMLMapper mapper =
      YAMLMapper.builder().enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION).build();

  /** Reads and checks the given file; relative paths in it are resolved against its directory. */
  public HostConfig read(Path file) {
    String text;
    try {
      text = Files.readString(file);
    } catch (NoSuchFileException e) {
      throw new ConfigException(
          file
              + ": no such config file (expected a YAML file; without --config the embedded"
              + " defaults apply)");
    } catch (AccessDeniedException e) {
      throw new ConfigException(file + ": cannot read the config file (permission denied)");
    } catch (MalformedInputException e) {
      throw new ConfigException(file + ": the config file is not UTF-8 text");
    } catch (IOException e) {
      throw new ConfigException(file + ": cannot read the config file (" + e.getMessage() + ")");
    }
    Path directory = file.toAbsolutePath().getParent();
    return parse(text, file.toString(), directory == null ? Path.of("") : directory);
  }

  /**
   * Reads and checks the given YAML text, calling it {@code fileName} in messages and resolving
   * relative paths against {@code directory} (the working directory when it is the empty path).
   */
  public HostConfig parse(String text, String fileName, Path directory) {
    Locations locations = locate(text, fileName);
    if (locations.empty()) {
      return HostConfig.defaults();
    }
    ObjectNode tree;
    try {
      // The token pass has read the text, and found a mapping at the top.
      tree = (ObjectNode) mapper.readTree(text);
    } catch (JacksonException e) {
      throw new ConfigException(fileName + ": " + e.getOriginalMessage());
    }
    // The extensions' sections are theirs to check; the rest are the host's.
    Map<String, JsonNode> sections = ConfigSections.take(tree, extensions.keySet());
    return build(tree, sections, fileName, locations, directory);
  }

  // ---- pass 1: tokens and their locations ----

  private Locations locate(String text, String fileName) {
    Map<String, Position> keys = new HashMap<>();
    Map<String, Position> values = new HashMap<>();
    boolean empty = true;
    try (JsonParser parser = mapper.createParser(text)) {
      try {
        JsonToken token;
        while ((token = parser.nextToken()) != null) {
          String pointer = parser.streamReadContext().pathAsPointer().toString();
          Position position = Position.of(parser.currentTokenLocation(), token, parser);
          if (empty && token != JsonToken.START_OBJECT) {
            throw new ConfigException(
                at(fileName, position)
                    + "expected a mapping of keys at the top level (one of: "
                    + String.join(", ", topLevelKeys())
                    + "), got "
                    + position.describe());
          }
          empty = false;
          if (token == JsonToken.PROPERTY_NAME) {
            keys.put(pointer, position);
          } else if (token != JsonToken.END_OBJECT && token != JsonToken.END_ARRAY) {
            values.put(pointer, position);
          }
        }
      } catch (StreamReadException e) {
        throw syntaxError(e, parser, fileName);
      }
    }
    return new Locations(keys, values, empty);
  }

  private static ConfigException syntaxError(
      StreamReadException e, JsonParser parser, String fileName) {
    String problem = e.getOriginalMessage();
    if (problem.startsWith("Duplicate Object property")) {
      TokenStreamContext object = parser.streamReadContext();
      String parent =
          object.getParent() == null ? "" : object.getParent().pathAsPointer().toString();
      return new ConfigException(
          at(
              fileName,
              Position.of(parser.currentTokenLocation()),
              "duplicate key '"
                  + object.currentName()
                  + "'"
                  + (parent.isEmpty()
                      ? " at the top level"
                      : " under '" + ConfigProblems.dotted(parent) + "'")
                  + " (each key may appear once)"));
    }
    // The YAML parser's own message: what it was doing, what it found, and where ("in reader,
    // line 2, column 9:" followed by the line and a caret). The last place is where it gave up.
    String yaml =
        e.getCause() != null && e.getCause().getMessage() != null
            ? e.getCause().getMessage()
            : problem;
    List<String> said = new ArrayList<>();
    Position where = Position.of(e.getLocation());
    for (String line : yaml.lines().toList()) {
      Matcher mark = MARK.matcher(line);
      if (mark.find()) {
        where = Position.at(Integer.parseInt(mark.group(1)), Integer.parseInt(mark.group(2)));
      } else if (!line.isBlank() && !Character.isWhitespace(line.charAt(0))) {
        said.add(line.strip());
      }
    }
    return new ConfigException(
        at(
            fileName,
            where,
            "not valid YAML: " + (said.isEmpty() ? problem : String.join(", ", said))));
  }

  // ---- pass 2: the sections ----

  private HostConfig build(
      ObjectNode tree,
      Map<String, JsonNode> sections,
      String fileName,
      Locations locations,
      Path directory) {
    List<String> problems = new ArrayList<>();
    ConfigProblems placed =
        new ConfigProblems(
            problems,
            pointer -> place(fileName, locations.near(pointer, false)),
            pointer -> place(fileName, locations.near(pointer, true)));
    // The host's sections the schema refuses are reported and left out, so that the others and
    // the extensions' sections are checked too.
    ObjectNode accepted = tree.deepCopy();
    for (String key : tree.propertyNames()) {
      int before = problems.size();
      JsonNode schema = HOST_SCHEMA.path("properties").path(key);
      if (schema.isMissingNode()) {
        placed.atKey(
            JsonPointer.empty().appendProperty(key).toString(),
            "unknown key '"
                + key
                + "' at the top level"
                + ConfigProblems.expectedKeys(key, topLevelKeys()));
      } else {
        ConfigSections.check(key, schema, tree.get(key), placed);
      }
      if (problems.size() > before) {
        accepted.remove(key);
      }
    }
    RawConfig raw = ConfigSections.bind("config", accepted, RawConfig.class);
    HostConfig.Http http = http(raw.http(), placed);
    List<HostConfig.Profile> profiles = new ArrayList<>();
    if (raw.profiles() != null) {
      raw.profiles()
          .forEach((name, profile) -> profile(name, profile, placed).ifPresent(profiles::add));
      // How the profiles extend each other, once each reads well (a dropped one would look
      // unknown).
      if (profiles.size() == raw.profiles().size()) {
        profileProblems(profiles, placed);
      }
    }
    RawBuiltins rawBuiltins =
        raw.builtins() == null ? new RawBuiltins(null, null, null) : raw.builtins();
    Builtins builtins =
        new Builtins(
            !Boolean.FALSE.equals(rawBuiltins.guides()),
            !Boolean.FALSE.equals(rawBuiltins.memory()),
            !Boolean.FALSE.equals(rawBuiltins.search()));
    HostConfig.Telemetry telemetry = telemetry(raw.telemetry(), placed);
    // A key that names a profile (an agent's) must name one of the host's, the file's included.
    SectionReading reading =
        new SectionReading(placed, directory, profileNames(tree.path("profiles")));
    sections.forEach(
        (name, section) -> {
          HostExtension<?> extension = extensions.get(name);
          int before = problems.size();
          ConfigSections.check(name, extension.configSchema(), section, placed);
          // What the schema refused, the extension's own checks would only repeat.
          if (problems.size() == before) {
            extension.read(section, reading);
          }
        });
    if (!problems.isEmpty()) {
      throw new ConfigException(String.join("\n", problems));
    }
    return new HostConfig(http, builtins, telemetry, profiles, sections, directory);
  }

  private static void profileProblems(List<HostConfig.Profile> profiles, ConfigProblems problems) {
    for (HostConfig.ProfileProblem problem :
        HostConfig.defaults().withProfiles(profiles).profileProblems()) {
      JsonPointer profile = JsonPointer.empty().appendProperty("profiles");
      profile = profile.appendProperty(problem.profile());
      if (problem.inExtends()) {
        problems.atValue(profile.appendProperty("extends").toString(), problem.message());
      } else {
        problems.atKey(profile.toString(), problem.message());
      }
    }
  }

  /**
   * The names an agent's profile may take, as {@link ToolProfiles#names()} lists them: the built-in
   * profiles', then the file's in name order (one with a problem of its own included, so that an
   * agent naming it is not refused too).
   */
  private static List<String> profileNames(JsonNode profiles) {
    List<String> names =
        new ArrayList<>(ToolProfiles.BUILT_IN.stream().map(ToolProfile::name).toList());
    profiles.propertyNames().stream()
        .filter(name -> !name.isBlank() && !names.contains(name))
        .sorted()
        .forEach(names::add);
    return names;
  }

  private static HostConfig.Http http(RawHttp raw, ConfigProblems problems) {
    HostConfig.Http defaults = HostConfig.Http.defaults();
    if (raw == null) {
      return defaults;
    }
    String host = raw.host() == null ? defaults.host() : raw.host();
    if (host.isBlank()) {
      problems.atValue(
          "/http/host",
          "'http.host' is empty (expected an address or host name, such as 127.0.0.1)");
      host = defaults.host();
    }
    long port = raw.port() == null ? defaults.port() : raw.port();
    if (port < 0 || port > 65535) {
      problems.atValue(
          "/http/port",
          "'http.port' is " + port + ", out of range (expected 0 to 65535; 0 picks a free port)");
      port = defaults.port();
    }
    if (raw.token() != null && raw.tokenEnv() != null) {
      problems.atKey("/http/token", "set either 'token' or 'token_env' under 'http', not both");
    }
    if (raw.token() != null && raw.token().isBlank()) {
      problems.atValue(
          "/http/token", "'http.token' is empty (expected the bearer token, or leave it out)");
    }
    if (raw.tokenEnv() != null && raw.tokenEnv().isBlank()) {
      problems.atValue(
          "/http/token_env",
          "'http.token_env' is empty (expected the name of an environment variable)");
    }
    List<String> allowedHosts = raw.allowedHosts() == null ? List.of() : raw.allowedHosts();
    for (int i = 0; i < allowedHosts.size(); i++) {
      String name = allowedHosts.get(i);
      if (name.isBlank() || name.contains("/")) {
        problems.atValue(
            "/http/allowed_hosts/" + i,
            "'http.allowed_hosts' holds '"
                + name
                + "' (expected a host name or address, such as toolhost.internal)");
      }
    }
    List<String> allowedOrigins = raw.allowedOrigins() == null ? List.of() : raw.allowedOrigins();
    for (int i = 0; i < allowedOrigins.size(); i++) {
      String origin = allowedOrigins.get(i);
      if (!origin.matches("https?://[^/?#\\s]+")) {
        problems.atValue(
            "/http/allowed_origins/" + i,
            "'http.allowed_origins' holds '"
                + origin
                + "' (expected an origin: scheme, host and optional port, such as"
                + " https://app.example.com)");
      }
    }
    return new HostConfig.Http(
        host,
        (int) port,
        Optional.ofNullable(raw.token()),
        raw.tokenEnv() == null || raw.tokenEnv().isBlank() ? defaults.tokenEnv() : raw.tokenEnv(),
        allowedHosts.stream().filter(name -> !name.isBlank()).toList(),
        allowedOrigins);
  }

  private static Optional<HostConfig.Profile> profile(
      String name, RawProfile raw, ConfigProblems problems) {
    JsonPointer at = JsonPointer.empty().appendProperty("profiles").appendProperty(name);
    if (name.isBlank()) {
      problems.atKey(at.toString(), "a profile name is empty (expected a name)");
      return Optional.empty();
    }
    if (raw == null) {
      return Optional.of(HostConfig.Profile.of(name));
    }
    int before = problems.count();
    if (raw.extendsProfile() != null && raw.extendsProfile().isBlank()) {
      problems.atValue(
          at.appendProperty("extends").toString(),
          "'profiles." + name + ".extends' is empty (expected a profile name, or leave it out)");
    }
    List<String> allowSources = entries(raw.allowSources(), "allow_sources", at, problems);
    List<String> denySources = entries(raw.denySources(), "deny_sources", at, problems);
    List<String> allowTools = entries(raw.allowTools(), "allow_tools", at, problems);
    List<String> denyTools = entries(raw.denyTools(), "deny_tools", at, problems);
    if (problems.count() > before) {
      return Optional.empty();
    }
    return Optional.of(
        new HostConfig.Profile(
            name,
            Optional.ofNullable(raw.extendsProfile()),
            allowSources,
            denySources,
            allowTools,
            denyTools));
  }

  private static List<String> entries(
      List<String> raw, String key, JsonPointer profile, ConfigProblems problems) {
    if (raw == null) {
      return List.of();
    }
    for (int i = 0; i < raw.size(); i++) {
      if (raw.get(i).isBlank()) {
        problems.atValue(
            profile.appendProperty(key).appendIndex(i).toString(),
            "'"
                + ConfigProblems.dotted(profile.toString())
                + "."
                + key
                + "["
                + i
                + "]' is empty (expected a "
                + (key.endsWith("sources") ? "source, such as builtin:guides" : "tool name")
                + ")");
      }
    }
    return raw;
  }

  private static HostConfig.Telemetry telemetry(RawTelemetry raw, ConfigProblems problems) {
    if (raw == null) {
      return HostConfig.Telemetry.defaults();
    }
    Optional<URI> endpoint = Optional.empty();
    if (raw.otlpEndpoint() != null) {
      endpoint = otlpEndpoint(raw.otlpEndpoint());
      if (endpoint.isEmpty()) {
        // Credentials go in OTEL_EXPORTER_OTLP_HEADERS; a URL holding some is not echoed.
        String shown =
            raw.otlpEndpoint().contains("@") ? "(hidden: it holds a user)" : raw.otlpEndpoint();
        problems.atValue(
            "/telemetry/otlp_endpoint",
            "'telemetry.otlp_endpoint' is '"
                + shown.strip()
                + "' (expected the http:// or https:// URL of an OTLP/HTTP collector, with no user"
                + " or query, such as http://127.0.0.1:4318; credentials go in"
                + " OTEL_EXPORTER_OTLP_HEADERS)");
      }
    }
    return new HostConfig.Telemetry(Boolean.TRUE.equals(raw.recordContent()), endpoint);
  }

  private static Optional<URI> otlpEndpoint(String raw) {
    try {
      URI uri = new URI(raw.strip());
      String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
      if ((scheme.equals("http") || scheme.equals("https"))
          && uri.getHost() != null
          && uri.getRawUserInfo() == null
          && uri.getRawQuery() == null
          && uri.getRawFragment() == null) {
        return Optional.of(uri);
      }
    } catch (URISyntaxException e) {
      // The caller names the value.
    }
    return Optional.empty();
  }

  // ---- messages ----

  private static String at(String fileName, Position position) {
    return fileName + " line " + position.line() + ", column " + position.column() + ": ";
  }

  private static String at(String fileName, Position position, String problem) {
    return at(fileName, position) + problem;
  }

  private static String place(String fileName, Optional<Position> position) {
    return position
        .map(found -> fileName + " line " + found.line() + ", column " + found.column())
        .orElse(fileName);
  }

  /** The keys the file may hold at the top level: the host's sections and the extensions'. */
  private List<String> topLevelKeys() {
    List<String> keys = new ArrayList<>(HOST_SCHEMA.path("properties").propertyNames());
    keys.addAll(extensions.keySet());
    keys.sort(null);
    return keys;
  }

  /** Where a token sits in the text, and what it was. */
  private record Position(int line, int column, Optional<JsonToken> token, String text) {

    static Position at(int line, int column) {
      return new Position(line, column, Optional.empty(), "");
    }

    boolean isScalar() {
      return token.map(JsonToken::isScalarValue).orElse(false);
    }

    static Position of(TokenStreamLocation location) {
      return new Position(location.getLineNr(), location.getColumnNr(), Optional.empty(), "");
    }

    static Position of(TokenStreamLocation location, JsonToken token, JsonParser parser) {
      String text = token.isScalarValue() ? parser.getString() : "";
      return new Position(
          location.getLineNr(),
          location.getColumnNr(),
          Optional.of(token),
          text == null ? "" : text);
    }

    String describe() {
      return ConfigProblems.describe(token.orElse(JsonToken.NOT_AVAILABLE), text);
    }
  }

  /** Where every key and value of the text sits, by JSON pointer. */
  private record Locations(
      Map<String, Position> keys, Map<String, Position> values, boolean empty) {
    Optional<Position> key(String pointer) {
      return Optional.ofNullable(keys.get(pointer));
    }

    Optional<Position> value(String pointer) {
      return Optional.ofNullable(values.get(pointer));
    }

    /**
     * The key at the pointer, or its value (the other way round when {@code key} is false), or
     * failing both the nearest enclosing one: an entry of a list has no key, and a problem may be
     * about a key that is not there.
     */
    Optional<Position> near(String pointer, boolean key) {
      for (String at = pointer; ; at = at.substring(0, at.lastIndexOf('/'))) {
        Optional<Position> found = key ? key(at) : value(at);
        if (found.isEmpty()) {
          found = key ? value(at) : key(at);
        }
        if (found.isPresent() || at.isEmpty()) {
          return found;
        }
      }
    }
  }

  // ---- the file's raw shape: every key optional, so every field may be null ----

  record RawConfig(
      RawHttp http,
      RawBuiltins builtins,
      RawTelemetry telemetry,
      @JsonPropertyDescription("a mapping of profile names to profiles")
          Map<String, RawProfile> profiles) {}

  record RawHttp(
      String host,
      Long port,
      String token,
      String tokenEnv,
      List<String> allowedHosts,
      List<String> allowedOrigins) {}

  record RawBuiltins(Boolean guides, Boolean memory, Boolean search) {}

  record RawTelemetry(Boolean recordContent, String otlpEndpoint) {}

  record RawProfile(
      @JsonProperty("extends") String extendsProfile,
      List<String> allowSources,
      List<String> denySources,
      List<String> allowTools,
      List<String> denyTools) {}
}
