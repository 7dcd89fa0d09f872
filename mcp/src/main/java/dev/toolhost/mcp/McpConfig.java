package dev.toolhost.mcp;

import dev.toolhost.core.spi.ConfigProblems;
import dev.toolhost.core.spi.ConfigSections;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import tools.jackson.databind.JsonNode;

/**
 * An MCP config is the {@code mcp:} section of a host config: the MCP servers whose tools the host
 * bridges into its registry, where the definition pins are kept, which changed definitions are
 * approved, and how long connecting may take.
 *
 * <p>Read by {@link McpExtension}, which owns the section. A host whose config has no {@code mcp:}
 * section has no bridge ({@link #enabled()} is false): no management tools and no MCP guide. With
 * the section, even an empty one, the host runs a bridge with the management tools: {@code
 * mcp_list_services}, {@code mcp_get_service_details} and {@code mcp_invoke_tool}, plus {@code
 * mcp_register_server} and {@code mcp_unregister_server} only when {@code allow_register} opts in
 * (registering a stdio server runs a program the model names). Immutable.
 *
 * @param enabled whether the config has an {@code mcp:} section
 * @param servers the servers, in file order; names unique ignoring case
 * @param stateDirectory the directory that keeps {@code mcp-pins.json}; pins live in memory without
 *     one
 * @param approved {@code server/tool} entries whose changed definitions are approved
 * @param connectTimeout how long connecting to and listing one server may take
 * @param startTimeout how long the host's start waits for all servers before going on without the
 *     slow ones
 * @param registration which servers a model may register at run time ({@code allow_register},
 *     {@code allow_register_private}); none by default
 */
public record McpConfig(
    boolean enabled,
    List<McpServerConfig> servers,
    Optional<Path> stateDirectory,
    Set<String> approved,
    Duration connectTimeout,
    Duration startTimeout,
    RegistrationPolicy registration) {

  /** How long connecting to one server may take when the config does not say. */
  public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(30);

  /** How long the host's start waits for all servers when the config does not say. */
  public static final Duration DEFAULT_START_TIMEOUT = Duration.ofSeconds(30);

  public McpConfig {
    servers = List.copyOf(servers);
    Objects.requireNonNull(stateDirectory, "stateDirectory");
    approved = Set.copyOf(approved);
    Objects.requireNonNull(connectTimeout, "connectTimeout");
    Objects.requireNonNull(startTimeout, "startTimeout");
    Objects.requireNonNull(registration, "registration");
  }

  /** No {@code mcp:} section: no bridge. */
  public static McpConfig none() {
    return new McpConfig(
        false,
        List.of(),
        Optional.empty(),
        Set.of(),
        DEFAULT_CONNECT_TIMEOUT,
        DEFAULT_START_TIMEOUT,
        RegistrationPolicy.none());
  }

  /**
   * Reads an {@code mcp:} section, as a config file or code holds it.
   *
   * @throws dev.toolhost.core.spi.ConfigException listing every problem of the section
   */
  public static McpConfig read(JsonNode section) {
    ConfigProblems problems = ConfigProblems.unplaced();
    ConfigSections.check(McpExtension.NAME, new McpExtension().configSchema(), section, problems);
    problems.throwIfAny();
    McpConfig config = new McpConfigReader(problems).read(section);
    problems.throwIfAny();
    return config;
  }

  /** A section with the given servers and every other key at its default. */
  public static McpConfig of(List<McpServerConfig> servers) {
    return new McpConfig(
        true,
        servers,
        Optional.empty(),
        Set.of(),
        DEFAULT_CONNECT_TIMEOUT,
        DEFAULT_START_TIMEOUT,
        RegistrationPolicy.none());
  }

  /** This section keeping its pins in the given directory. */
  public McpConfig withStateDirectory(Path stateDirectory) {
    return new McpConfig(
        enabled,
        servers,
        Optional.of(stateDirectory),
        approved,
        connectTimeout,
        startTimeout,
        registration);
  }

  /** This section letting a model register the servers the policy allows. */
  public McpConfig withRegistration(RegistrationPolicy registration) {
    return new McpConfig(
        enabled, servers, stateDirectory, approved, connectTimeout, startTimeout, registration);
  }
}
