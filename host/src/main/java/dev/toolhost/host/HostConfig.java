package dev.toolhost.host;

import dev.toolhost.core.ToolProfile;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.spi.Builtins;
import dev.toolhost.core.spi.ConfigException;
import dev.toolhost.core.spi.ConfigProblems;
import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.core.spi.HostExtensions;
import dev.toolhost.core.spi.SectionReading;
import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.JsonNodeFactory;

/**
 * A host config is everything a {@link Host} is built from: where it listens and how callers prove
 * who they are, which built-in tools it registers, what its telemetry records, the user's own tool
 * profiles, and the sections of the host extensions (the MCP bridge's {@code mcp:}, working
 * memory's {@code memory:}, the {@code agents:}, the {@code tool_services:}, and any other
 * extension's), each kept as a tree for its extension to read.
 *
 * <p>It is read from YAML by {@link #load(Path)} (see {@code docs/configuration.md} for every key
 * and its default) or built in code from {@link #defaults()}. Loading is all-or-nothing: a file
 * with any error is refused as a whole with a {@link ConfigException} naming the file, line and
 * column. Immutable and thread-safe; {@link #toString()} never shows the token.
 *
 * @param http the HTTP listener
 * @param builtins which built-in tools to register
 * @param telemetry what traces record
 * @param profiles the user's tool profiles, in file order; the built-in ones always exist besides
 * @param sections the sections of host extensions, by extension name, each checked against its
 *     extension's schema and by the extension (see {@link HostExtension#read})
 * @param directory the directory of the config file, which relative paths in sections are resolved
 *     against; the empty path (the working directory) for a config not read from a file
 */
public record HostConfig(
    Http http,
    Builtins builtins,
    Telemetry telemetry,
    List<Profile> profiles,
    Map<String, JsonNode> sections,
    Path directory) {

  public HostConfig {
    Objects.requireNonNull(http, "http");
    Objects.requireNonNull(builtins, "builtins");
    Objects.requireNonNull(telemetry, "telemetry");
    profiles = List.copyOf(profiles);
    sections = Collections.unmodifiableMap(new LinkedHashMap<>(sections));
    Objects.requireNonNull(directory, "directory");
  }

  /** A config with no extension sections. */
  public HostConfig(Http http, Builtins builtins, Telemetry telemetry, List<Profile> profiles) {
    this(http, builtins, telemetry, profiles, Map.of(), Path.of(""));
  }

  /**
   * The embedded defaults: 127.0.0.1:8080, every built-in (guides, working memory in this process,
   * service search), no content on spans, no user profiles, no extension sections.
   */
  public static HostConfig defaults() {
    return new HostConfig(Http.defaults(), Builtins.defaults(), Telemetry.defaults(), List.of());
  }

  /**
   * Reads a config file with the host extensions on the class path, checking every section (the
   * files a section lists included) and reporting every problem at once.
   *
   * @throws ConfigException naming the file, and the line and column where there is one, when the
   *     file is missing or unreadable, is not YAML, or holds anything but a valid config
   */
  public static HostConfig load(Path file) {
    return load(file, HostExtensions.discovered());
  }

  /**
   * Reads a config file as {@link #load(Path)} does, with the given extensions' sections, each
   * checked against its extension's schema and by the extension.
   *
   * @throws ConfigException as {@link #load(Path)} does
   */
  public static HostConfig load(Path file, List<HostExtension<?>> extensions) {
    return new ConfigReader(extensions).read(file);
  }

  /**
   * Reads a config from YAML text with the host extensions on the class path; relative paths are
   * resolved against the working directory.
   *
   * @param fileName what error messages call the text, such as {@code config.yaml}
   * @throws ConfigException as {@link #load(Path)} does
   */
  public static HostConfig parse(String yaml, String fileName) {
    return parse(yaml, fileName, Path.of(""));
  }

  /**
   * Reads a config from YAML text as {@link #parse(String, String)} does, resolving relative paths
   * against the given directory.
   *
   * @throws ConfigException as {@link #load(Path)} does
   */
  public static HostConfig parse(String yaml, String fileName, Path directory) {
    return new ConfigReader(HostExtensions.discovered()).parse(yaml, fileName, directory);
  }

  /**
   * The extension's section as the extension reads it when it starts, its profile names this
   * config's; empty when the file has none.
   *
   * @throws ConfigException naming the section's problems
   */
  public <C> Optional<C> read(HostExtension<C> extension) {
    if (!sections.containsKey(extension.name())) {
      return Optional.empty();
    }
    SectionReading reading =
        new SectionReading(ConfigProblems.unplaced(), directory(), toolProfiles().names());
    C read = extension.read(section(extension.name()), reading);
    reading.problems().throwIfAny();
    return Optional.ofNullable(read);
  }

  /** The section of the named extension; an empty object when the file has none. */
  public JsonNode section(String name) {
    return sections.getOrDefault(name, JsonNodeFactory.instance.objectNode());
  }

  /** This config with the named extension's section. */
  public HostConfig withSection(String name, JsonNode section) {
    Map<String, JsonNode> changed = new LinkedHashMap<>(sections);
    changed.put(name, section);
    return new HostConfig(http, builtins, telemetry, profiles, changed, directory);
  }

  /** This config with another HTTP listener. */
  public HostConfig withHttp(Http http) {
    return new HostConfig(http, builtins, telemetry, profiles, sections, directory);
  }

  /** This config with other built-ins. */
  public HostConfig withBuiltins(Builtins builtins) {
    return new HostConfig(http, builtins, telemetry, profiles, sections, directory);
  }

  /** This config with other telemetry. */
  public HostConfig withTelemetry(Telemetry telemetry) {
    return new HostConfig(http, builtins, telemetry, profiles, sections, directory);
  }

  /** This config with other user profiles. */
  public HostConfig withProfiles(List<Profile> profiles) {
    return new HostConfig(http, builtins, telemetry, profiles, sections, directory);
  }

  /**
   * Returns the built-in profiles and the user's, each user profile composed onto the profile it
   * extends.
   *
   * @throws ConfigException when a user profile takes a built-in or a repeated name, extends a
   *     profile that does not exist, or the profiles extend each other in a cycle
   */
  public ToolProfiles toolProfiles() {
    return toolProfiles(ToolProfiles.BUILT_IN);
  }

  /**
   * Returns the given built-in profiles (amended by the host's extensions, {@link
   * ToolProfiles#withAllowed}) and the user's, each user profile composed onto the profile it
   * extends.
   *
   * @throws ConfigException as {@link #toolProfiles()} does
   */
  public ToolProfiles toolProfiles(List<ToolProfile> builtIns) {
    List<ProfileProblem> problems = profileProblems();
    if (!problems.isEmpty()) {
      throw new ConfigException(
          problems.stream().map(ProfileProblem::message).collect(Collectors.joining("\n")));
    }
    Map<String, Profile> byName = new LinkedHashMap<>();
    profiles.forEach(profile -> byName.put(profile.name(), profile));
    Map<String, ToolProfile> resolved = new LinkedHashMap<>();
    builtIns.forEach(profile -> resolved.put(profile.name(), profile));
    for (Profile profile : profiles) {
      resolve(profile, byName, resolved);
    }
    List<ToolProfile> user =
        profiles.stream().map(profile -> resolved.get(profile.name())).toList();
    return ToolProfiles.of(builtIns, user);
  }

  private static ToolProfile resolve(
      Profile profile, Map<String, Profile> byName, Map<String, ToolProfile> resolved) {
    ToolProfile done = resolved.get(profile.name());
    if (done != null) {
      return done;
    }
    // profileProblems() has ruled out unknown names and cycles, so this recursion ends.
    ToolProfile base =
        profile
            .extendsProfile()
            .map(
                name ->
                    resolved.containsKey(name)
                        ? resolved.get(name)
                        : resolve(byName.get(name), byName, resolved))
            .orElseGet(() -> ToolProfile.none(profile.name()));
    ToolProfile composed = profile.composeOnto(base);
    resolved.put(profile.name(), composed);
    return composed;
  }

  /** What is wrong with the user profiles, if anything, in file order. */
  List<ProfileProblem> profileProblems() {
    List<ProfileProblem> problems = new ArrayList<>();
    List<String> builtIn = ToolProfiles.BUILT_IN.stream().map(ToolProfile::name).toList();
    Map<String, Profile> byName = new LinkedHashMap<>();
    for (Profile profile : profiles) {
      if (builtIn.contains(profile.name())) {
        problems.add(
            new ProfileProblem(
                profile.name(),
                false,
                "profile '"
                    + profile.name()
                    + "' has the name of a built-in profile (built-in profiles: "
                    + String.join(", ", builtIn)
                    + "); extend it under another name instead"));
      } else if (byName.putIfAbsent(profile.name(), profile) != null) {
        problems.add(
            new ProfileProblem(
                profile.name(), false, "profile '" + profile.name() + "' is defined twice"));
      }
    }
    List<String> known = new ArrayList<>(builtIn);
    known.addAll(byName.keySet());
    for (Profile profile : byName.values()) {
      Optional<String> parent = profile.extendsProfile();
      if (parent.isPresent() && !known.contains(parent.get())) {
        problems.add(
            new ProfileProblem(
                profile.name(),
                true,
                "profile '"
                    + profile.name()
                    + "' extends '"
                    + parent.get()
                    + "', which is not a profile (expected one of: "
                    + String.join(", ", known)
                    + ")"));
      }
    }
    Set<String> inReportedCycle = new HashSet<>();
    for (Profile profile : byName.values()) {
      if (inReportedCycle.contains(profile.name())) {
        continue;
      }
      Optional<List<String>> cycle = cycleFrom(profile, byName);
      if (cycle.isPresent()) {
        inReportedCycle.addAll(cycle.get());
        problems.add(
            new ProfileProblem(
                profile.name(),
                true,
                "profiles extend each other in a cycle: " + String.join(" -> ", cycle.get())));
      }
    }
    return problems;
  }

  /** The cycle through the given profile's extends chain that starts at it, if there is one. */
  private static Optional<List<String>> cycleFrom(Profile start, Map<String, Profile> byName) {
    Deque<String> chain = new ArrayDeque<>();
    chain.add(start.name());
    Profile current = start;
    while (current.extendsProfile().isPresent()) {
      String next = current.extendsProfile().get();
      if (next.equals(start.name())) {
        chain.add(next);
        return Optional.of(List.copyOf(chain));
      }
      current = byName.get(next);
      if (current == null || chain.contains(next)) {
        // A built-in, an unknown name, or a cycle that does not pass through start.
        return Optional.empty();
      }
      chain.add(next);
    }
    return Optional.empty();
  }

  /**
   * A profile problem is one thing wrong with a user profile.
   *
   * @param profile the profile's name
   * @param inExtends whether the problem is its {@code extends} value rather than the profile
   * @param message what is wrong, for the operator
   */
  record ProfileProblem(String profile, boolean inExtends, String message) {}

  /**
   * The HTTP listener: where it binds, and the bearer token callers must send.
   *
   * <p>The token is the literal {@code token} when set, otherwise the value of the environment
   * variable named by {@code tokenEnv} when that is set and not blank; with neither, requests need
   * no token and the host refuses to bind anything but a loopback address.
   *
   * @param host the address or host name to bind
   * @param port the port to bind, 0 for a free one
   * @param token a literal bearer token
   * @param tokenEnv the environment variable that holds the bearer token
   * @param allowedHosts host names, besides loopback and the bound host, that requests may name in
   *     their {@code Host} header (the name a reverse proxy or a remote caller uses)
   * @param allowedOrigins browser origins, such as {@code https://app.example.com}, whose pages may
   *     call the host; every other cross-origin request is refused
   */
  public record Http(
      String host,
      int port,
      Optional<String> token,
      String tokenEnv,
      List<String> allowedHosts,
      List<String> allowedOrigins) {

    /** The address bound by default: loopback only. */
    public static final String DEFAULT_HOST = "127.0.0.1";

    /** The port bound by default. */
    public static final int DEFAULT_PORT = 8080;

    /** The environment variable read for the token by default. */
    public static final String DEFAULT_TOKEN_ENV = "TOOLHOST_TOKEN";

    public Http {
      Objects.requireNonNull(host, "host");
      Objects.requireNonNull(token, "token");
      Objects.requireNonNull(tokenEnv, "tokenEnv");
      allowedHosts = List.copyOf(allowedHosts);
      allowedOrigins = List.copyOf(allowedOrigins);
      if (host.isBlank()) {
        throw new IllegalArgumentException("The HTTP host is blank.");
      }
      if (port < 0 || port > 65535) {
        throw new IllegalArgumentException(
            "The HTTP port " + port + " is out of range (0 to 65535; 0 picks a free port).");
      }
    }

    /** A listener that allows no host or origin beyond loopback and the bound host. */
    public Http(String host, int port, Optional<String> token, String tokenEnv) {
      this(host, port, token, tokenEnv, List.of(), List.of());
    }

    /** 127.0.0.1:8080, the token from {@code TOOLHOST_TOKEN}. */
    public static Http defaults() {
      return new Http(DEFAULT_HOST, DEFAULT_PORT, Optional.empty(), DEFAULT_TOKEN_ENV);
    }

    /** This listener on another host. */
    public Http withHost(String host) {
      return new Http(host, port, token, tokenEnv, allowedHosts, allowedOrigins);
    }

    /** This listener on another port. */
    public Http withPort(int port) {
      return new Http(host, port, token, tokenEnv, allowedHosts, allowedOrigins);
    }

    /** This listener with a literal token. */
    public Http withToken(String token) {
      return new Http(host, port, Optional.of(token), tokenEnv, allowedHosts, allowedOrigins);
    }

    /** This listener, also answering requests whose {@code Host} names one of these. */
    public Http withAllowedHosts(List<String> allowedHosts) {
      return new Http(host, port, token, tokenEnv, allowedHosts, allowedOrigins);
    }

    /** This listener, also answering browser pages of these origins. */
    public Http withAllowedOrigins(List<String> allowedOrigins) {
      return new Http(host, port, token, tokenEnv, allowedHosts, allowedOrigins);
    }

    /** The bearer token callers must send, read from the given environment where configured so. */
    public Optional<String> bearerToken(Map<String, String> environment) {
      if (token.isPresent()) {
        return token.filter(value -> !value.isBlank());
      }
      return Optional.ofNullable(environment.get(tokenEnv)).filter(value -> !value.isBlank());
    }

    /** Describes the listener without the token. */
    @Override
    public String toString() {
      return "Http[host="
          + host
          + ", port="
          + port
          + ", token="
          + (token.isPresent() ? "(set)" : "(none)")
          + ", tokenEnv="
          + tokenEnv
          + ", allowedHosts="
          + allowedHosts
          + ", allowedOrigins="
          + allowedOrigins
          + "]";
    }
  }

  /**
   * What the host's telemetry records, and where it sends it.
   *
   * @param recordContent whether tool spans record arguments and results, which may hold secrets
   * @param otlpEndpoint the OTLP/HTTP collector spans and metrics are sent to, such as {@code
   *     http://127.0.0.1:4318}; when empty, the standard {@code OTEL_*} variables decide, and
   *     without them nothing leaves the host
   */
  public record Telemetry(boolean recordContent, Optional<URI> otlpEndpoint) {
    public Telemetry {
      Objects.requireNonNull(otlpEndpoint, "otlpEndpoint");
    }

    /** Content on spans or not, sent nowhere unless the {@code OTEL_*} variables say so. */
    public Telemetry(boolean recordContent) {
      this(recordContent, Optional.empty());
    }

    /** No content on spans, sent nowhere unless the {@code OTEL_*} variables say so. */
    public static Telemetry defaults() {
      return new Telemetry(false);
    }
  }

  /**
   * A user profile: a named tool profile composed onto the profile it extends.
   *
   * <p>A profile that extends none starts from nothing allowed. The lists add to what the extended
   * profile allows and denies; as in every profile, a deny by name or source always wins.
   *
   * @param name the profile's name, unique and not a built-in one
   * @param extendsProfile the built-in or user profile this one starts from
   * @param allowSources sources whose tools are allowed ({@code *} for every source)
   * @param denySources sources whose tools are denied
   * @param allowTools tools allowed by name
   * @param denyTools tools denied by name
   */
  public record Profile(
      String name,
      Optional<String> extendsProfile,
      List<String> allowSources,
      List<String> denySources,
      List<String> allowTools,
      List<String> denyTools) {

    public Profile {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(extendsProfile, "extendsProfile");
      allowSources = List.copyOf(allowSources);
      denySources = List.copyOf(denySources);
      allowTools = List.copyOf(allowTools);
      denyTools = List.copyOf(denyTools);
      if (name.isBlank()) {
        throw new IllegalArgumentException("A profile name is blank.");
      }
    }

    /** A profile of the given name that extends none and allows nothing. */
    public static Profile of(String name) {
      return new Profile(name, Optional.empty(), List.of(), List.of(), List.of(), List.of());
    }

    /** This profile extending another. */
    public Profile extending(String profile) {
      return new Profile(
          name, Optional.of(profile), allowSources, denySources, allowTools, denyTools);
    }

    /** This profile also allowing the given sources. */
    public Profile allowingSources(String... sources) {
      return new Profile(
          name, extendsProfile, concat(allowSources, sources), denySources, allowTools, denyTools);
    }

    /** This profile also denying the given sources. */
    public Profile denyingSources(String... sources) {
      return new Profile(
          name, extendsProfile, allowSources, concat(denySources, sources), allowTools, denyTools);
    }

    /** This profile also allowing the given tools. */
    public Profile allowingTools(String... tools) {
      return new Profile(
          name, extendsProfile, allowSources, denySources, concat(allowTools, tools), denyTools);
    }

    /** This profile also denying the given tools. */
    public Profile denyingTools(String... tools) {
      return new Profile(
          name, extendsProfile, allowSources, denySources, allowTools, concat(denyTools, tools));
    }

    /** This profile's lists composed onto the given base, under this profile's name. */
    ToolProfile composeOnto(ToolProfile base) {
      return base.named(name)
          .withSources(allowSources)
          .withoutSources(denySources)
          .withNames(allowTools)
          .withoutNames(denyTools);
    }

    private static List<String> concat(List<String> list, String... more) {
      List<String> all = new ArrayList<>(list);
      all.addAll(List.of(more));
      return all;
    }
  }
}
