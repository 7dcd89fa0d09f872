package dev.toolhost.mcp;

import dev.toolhost.core.spi.EnvironmentNames;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * An MCP server config is how the bridge reaches one MCP server: its name, its transport, the
 * prefix its tools take in the registry, and how long a call may take.
 *
 * <p>The name is what operators and the management tools call the server; names are compared
 * ignoring case. Tools enter the registry as {@code prefix + tool name}, so two servers never
 * collide; the default prefix is the name in lower case with anything but letters, digits, {@code
 * _} and {@code -} replaced by {@code _}, then {@code _} ({@code everything_echo}). Immutable.
 *
 * @param name the server's name, unique in a host
 * @param transport how to reach it
 * @param prefix the prefix of its tools' names in the registry; empty for the default
 * @param timeout how long one call may take, above zero and at most {@link #MAX_TIMEOUT}
 */
public record McpServerConfig(
    String name, Transport transport, Optional<String> prefix, Duration timeout) {

  /** The call timeout when none is configured. */
  public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(60);

  /** The longest call timeout a server may have. */
  public static final Duration MAX_TIMEOUT = Duration.ofMinutes(15);

  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_.-]{1,64}");
  private static final Pattern PREFIX = Pattern.compile("[A-Za-z0-9_.-]{0,64}");

  public McpServerConfig {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(transport, "transport");
    Objects.requireNonNull(prefix, "prefix");
    Objects.requireNonNull(timeout, "timeout");
    if (!NAME.matcher(name).matches()) {
      throw new IllegalArgumentException(
          "MCP server name '"
              + name
              + "' is invalid: 1 to 64 characters of letters, digits, '_', '-' and '.'.");
    }
    if (prefix.isPresent() && !PREFIX.matcher(prefix.get()).matches()) {
      throw new IllegalArgumentException(
          "The tool prefix '"
              + prefix.get()
              + "' of MCP server '"
              + name
              + "' is invalid: up to 64 characters of letters, digits, '_', '-' and '.'.");
    }
    if (timeout.isNegative() || timeout.isZero() || timeout.compareTo(MAX_TIMEOUT) > 0) {
      throw new IllegalArgumentException(
          "The call timeout of MCP server '"
              + name
              + "' is "
              + timeout
              + ": it must be above zero and at most 15 minutes.");
    }
  }

  /** A stdio server: the command and its arguments, default prefix and timeout. */
  public static McpServerConfig stdio(String name, String command, List<String> arguments) {
    return new McpServerConfig(
        name, new Stdio(command, arguments, Map.of()), Optional.empty(), DEFAULT_TIMEOUT);
  }

  /** A Streamable HTTP server at the URL, default prefix and timeout. */
  public static McpServerConfig http(String name, URI url) {
    return new McpServerConfig(
        name, new StreamableHttp(url, Map.of()), Optional.empty(), DEFAULT_TIMEOUT);
  }

  /** This config with another call timeout. */
  public McpServerConfig withTimeout(Duration timeout) {
    return new McpServerConfig(name, transport, prefix, timeout);
  }

  /** This config with another tool prefix (empty text for none). */
  public McpServerConfig withPrefix(String prefix) {
    return new McpServerConfig(name, transport, Optional.of(prefix), timeout);
  }

  /** The prefix this server's tools take in the registry. */
  public String toolPrefix() {
    return prefix.orElseGet(
        () -> name.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9_-]", "_") + "_");
  }

  /** The source of this server's tools in the registry: {@code mcp:{name}}. */
  public String source() {
    return "mcp:" + name;
  }

  /** How the bridge reaches a server. */
  public sealed interface Transport permits Stdio, HttpTransport {
    /**
     * Where the server is, for operators and the model: a command line or a URL, with what looks
     * like a secret in it replaced by {@code ***}.
     */
    String describe();
  }

  /**
   * A server run as a child process that speaks MCP on its standard input and output.
   *
   * <p>The child does not inherit the host's environment: it gets {@link #BASE_ENVIRONMENT} (the
   * locale's {@code LC_*} variables too), the host variables named in {@code passEnvironment}, and
   * {@code environment}, in that order, so a later one wins. The host's own secrets (its bearer
   * token, a model's API key) never reach a server unless the config names them.
   *
   * @param command the program
   * @param arguments its arguments
   * @param environment variables set for the child, whatever the host has
   * @param passEnvironment names of host variables passed to the child when the host has them
   */
  public record Stdio(
      String command,
      List<String> arguments,
      Map<String, String> environment,
      List<String> passEnvironment)
      implements Transport {

    /** The host variables every child gets when the host has them, besides {@code LC_*}. */
    public static final List<String> BASE_ENVIRONMENT = List.of("PATH", "HOME", "LANG", "TMPDIR");

    public Stdio {
      Objects.requireNonNull(command, "command");
      arguments = List.copyOf(arguments);
      environment = Map.copyOf(environment);
      passEnvironment = List.copyOf(passEnvironment);
      if (command.isBlank()) {
        throw new IllegalArgumentException("A stdio MCP server needs a command.");
      }
      for (String name : passEnvironment) {
        if (!EnvironmentNames.isName(name)) {
          throw new IllegalArgumentException(
              "'" + name + "' is not an environment variable name (letters, digits and '_').");
        }
      }
    }

    /** A stdio server that passes no host variables beyond the base ones. */
    public Stdio(String command, List<String> arguments, Map<String, String> environment) {
      this(command, arguments, environment, List.of());
    }

    /**
     * The child's environment, built from the host's: the base variables, the passed ones, then
     * {@link #environment()}.
     */
    public Map<String, String> childEnvironment(Map<String, String> host) {
      Map<String, String> child = new java.util.TreeMap<>();
      host.forEach(
          (name, value) -> {
            if (BASE_ENVIRONMENT.contains(name)
                || name.startsWith("LC_")
                || passEnvironment.contains(name)) {
              child.put(name, value);
            }
          });
      child.putAll(environment);
      return child;
    }

    /**
     * The command line with the values of secret-looking options and key-looking arguments replaced
     * by {@code ***}: safe for logs and for the model ({@link Redaction}).
     */
    @Override
    public String describe() {
      return Redaction.commandLine(command, arguments);
    }

    /** Describes the server without the environment's values, which may be secrets. */
    @Override
    public String toString() {
      return "Stdio["
          + describe()
          + ", environment="
          + environment.keySet()
          + ", passEnvironment="
          + passEnvironment
          + "]";
    }
  }

  /** A server reached over HTTP: its endpoint, and headers sent with every request. */
  public sealed interface HttpTransport extends Transport permits StreamableHttp, Sse {
    /** The endpoint. */
    URI url();

    /** The headers sent with every request. */
    Map<String, String> headers();

    @Override
    default String describe() {
      return Redaction.url(url());
    }
  }

  /**
   * A server reached over MCP Streamable HTTP.
   *
   * @param url the MCP endpoint, such as {@code http://127.0.0.1:3001/mcp}
   * @param headers headers sent with every request (an authorization header, say)
   */
  public record StreamableHttp(URI url, Map<String, String> headers) implements HttpTransport {
    public StreamableHttp {
      Objects.requireNonNull(url, "url");
      headers = Map.copyOf(headers);
    }

    /** Describes the server without the headers' values, which may be secrets. */
    @Override
    public String toString() {
      return "StreamableHttp[" + describe() + ", headers=" + headers.keySet() + "]";
    }
  }

  /**
   * A server reached over the legacy HTTP+SSE transport (MCP 2024-11-05).
   *
   * @param url the SSE endpoint, such as {@code http://127.0.0.1:3001/sse}
   * @param headers headers sent with every request
   */
  public record Sse(URI url, Map<String, String> headers) implements HttpTransport {
    public Sse {
      Objects.requireNonNull(url, "url");
      headers = Map.copyOf(headers);
    }

    /** Describes the server without the headers' values, which may be secrets. */
    @Override
    public String toString() {
      return "Sse[" + describe() + ", headers=" + headers.keySet() + "]";
    }
  }
}
