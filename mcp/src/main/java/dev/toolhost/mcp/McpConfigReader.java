package dev.toolhost.mcp;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import dev.toolhost.core.spi.ConfigProblems;
import dev.toolhost.core.spi.ConfigSections;
import dev.toolhost.core.spi.ConfigSections.DurationText;
import dev.toolhost.core.spi.Durations;
import dev.toolhost.core.spi.EnvironmentNames;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import tools.jackson.core.JsonPointer;
import tools.jackson.databind.JsonNode;

/**
 * The MCP config reader checks the {@code mcp:} section of a config file once it is bound: what
 * binding cannot see (which transport a server has, URLs, durations and their limits, approval
 * entries), each problem naming the file, line and column and what was expected.
 *
 * <p>Problems are added to the caller's list, so that one reading reports every problem of the
 * file; the returned config is only meaningful when none was added.
 */
final class McpConfigReader {

  private static final List<String> TRANSPORTS = List.of("stdio", "http", "sse");
  private static final List<String> REGISTRATIONS = List.of("none", "http", "stdio");

  private final ConfigProblems problems;

  McpConfigReader(ConfigProblems problems) {
    this.problems = problems;
  }

  /**
   * Reads a section its schema accepts; the result is only meaningful when no problem was added.
   */
  McpConfig read(JsonNode section) {
    return read(ConfigSections.bind("mcp", section, RawMcp.class));
  }

  private McpConfig read(RawMcp raw) {
    JsonPointer mcp = JsonPointer.empty().appendProperty("mcp");
    Optional<Path> stateDirectory = Optional.empty();
    if (raw.stateDir() != null) {
      String at = mcp.appendProperty("state_dir").toString();
      if (raw.stateDir().isBlank()) {
        problem(at, "'mcp.state_dir' is empty (expected a directory, or leave it out)");
      } else {
        try {
          stateDirectory = Optional.of(Path.of(raw.stateDir()));
        } catch (InvalidPathException e) {
          problem(at, "'mcp.state_dir' is not a path: " + e.getReason());
        }
      }
    }
    Set<String> approved = new LinkedHashSet<>();
    if (raw.approved() != null) {
      for (int i = 0; i < raw.approved().size(); i++) {
        String entry = raw.approved().get(i);
        int slash = entry == null ? -1 : entry.indexOf('/');
        if (slash <= 0 || slash == entry.length() - 1) {
          problem(
              mcp.appendProperty("approved").appendIndex(i).toString(),
              "'mcp.approved["
                  + i
                  + "]' is "
                  + (entry == null ? "empty" : "'" + entry + "'")
                  + " (expected SERVER/TOOL, such as everything/echo)");
        } else {
          approved.add(entry);
        }
      }
    }
    Duration connectTimeout =
        duration(
                raw.connectTimeout(),
                mcp.appendProperty("connect_timeout"),
                "mcp.connect_timeout",
                Optional.empty())
            .orElse(McpConfig.DEFAULT_CONNECT_TIMEOUT);
    Duration startTimeout =
        duration(
                raw.startTimeout(),
                mcp.appendProperty("start_timeout"),
                "mcp.start_timeout",
                Optional.empty())
            .orElse(McpConfig.DEFAULT_START_TIMEOUT);
    List<McpServerConfig> servers = new ArrayList<>();
    Set<String> names = new HashSet<>();
    if (raw.servers() != null) {
      JsonPointer all = mcp.appendProperty("servers");
      raw.servers()
          .forEach(
              (name, server) -> {
                JsonPointer at = all.appendProperty(name);
                if (!names.add(name.toLowerCase(Locale.ROOT))) {
                  problemAtKey(
                      at.toString(),
                      "MCP server '"
                          + name
                          + "' is defined twice (server names are compared ignoring case)");
                  return;
                }
                server(name, server, at).ifPresent(servers::add);
              });
    }
    RegistrationPolicy.Allowed allowed = RegistrationPolicy.Allowed.NONE;
    if (raw.allowRegister() != null) {
      String value = raw.allowRegister().strip().toLowerCase(Locale.ROOT);
      if (REGISTRATIONS.contains(value)) {
        allowed = RegistrationPolicy.Allowed.valueOf(value.toUpperCase(Locale.ROOT));
      } else {
        problem(
            mcp.appendProperty("allow_register").toString(),
            "'mcp.allow_register' is '"
                + raw.allowRegister()
                + "' (expected one of: none, http, stdio; stdio lets a model run programs on this"
                + " host)");
      }
    }
    boolean allowPrivate = Boolean.TRUE.equals(raw.allowRegisterPrivate());
    return new McpConfig(
        true,
        servers,
        stateDirectory,
        approved,
        connectTimeout,
        startTimeout,
        new RegistrationPolicy(allowed, allowPrivate));
  }

  private Optional<McpServerConfig> server(String name, RawServer raw, JsonPointer at) {
    String where = "'mcp.servers." + name;
    if (raw == null) {
      problemAtKey(
          at.toString(),
          where + "' is empty (expected 'command' for a stdio server or 'url' for an HTTP server)");
      return Optional.empty();
    }
    int before = problems.count();
    String transport;
    if (raw.transport() != null) {
      transport = raw.transport().toLowerCase(Locale.ROOT);
      if (!TRANSPORTS.contains(transport)) {
        problem(
            at.appendProperty("transport").toString(),
            where
                + ".transport' is '"
                + raw.transport()
                + "' (expected one of: "
                + String.join(", ", TRANSPORTS)
                + ")");
        return Optional.empty();
      }
    } else {
      transport = raw.command() != null ? "stdio" : "http";
    }
    if (raw.command() != null && raw.url() != null) {
      problemAtKey(
          at.appendProperty("url").toString(),
          "set either 'command' (a stdio server) or 'url' (an HTTP server) under "
              + where.substring(1)
              + "', not both");
      return Optional.empty();
    }
    McpServerConfig.Transport built = null;
    if (transport.equals("stdio")) {
      if (raw.command() == null || raw.command().isBlank()) {
        problemAtKey(
            at.toString(),
            where + "' has no 'command' (expected the program that runs the server, such as npx)");
      }
      onlyFor(raw.headers() != null, at, "headers", where, "an HTTP server");
      List<String> passEnv = raw.passEnv() == null ? List.of() : raw.passEnv();
      for (int i = 0; i < passEnv.size(); i++) {
        String variable = passEnv.get(i);
        if (!EnvironmentNames.isName(variable)) {
          problem(
              at.appendProperty("pass_env").appendIndex(i).toString(),
              where
                  + ".pass_env["
                  + i
                  + "]' is "
                  + (variable == null ? "empty" : "'" + variable + "'")
                  + " (expected the name of an environment variable of the host, such as"
                  + " GITHUB_TOKEN)");
        }
      }
      if (problems.count() == before) {
        built =
            new McpServerConfig.Stdio(
                raw.command(),
                raw.args() == null ? List.of() : raw.args(),
                raw.env() == null ? Map.of() : raw.env(),
                passEnv);
      }
    } else {
      Optional<URI> url = url(raw.url(), at, where);
      onlyFor(raw.args() != null, at, "args", where, "a stdio server");
      onlyFor(raw.env() != null, at, "env", where, "a stdio server");
      onlyFor(raw.passEnv() != null, at, "pass_env", where, "a stdio server");
      Map<String, String> headers = raw.headers() == null ? Map.of() : raw.headers();
      if (url.isPresent() && problems.count() == before) {
        built =
            transport.equals("sse")
                ? new McpServerConfig.Sse(url.get(), headers)
                : new McpServerConfig.StreamableHttp(url.get(), headers);
      }
    }
    Duration timeout =
        duration(
                raw.timeout(),
                at.appendProperty("timeout"),
                where.substring(1) + ".timeout",
                Optional.of(McpServerConfig.MAX_TIMEOUT))
            .orElse(McpServerConfig.DEFAULT_TIMEOUT);
    if (built == null || problems.count() > before) {
      return Optional.empty();
    }
    try {
      return Optional.of(
          new McpServerConfig(name, built, Optional.ofNullable(raw.prefix()), timeout));
    } catch (IllegalArgumentException e) {
      String pointer =
          raw.prefix() != null && e.getMessage().contains("prefix")
              ? at.appendProperty("prefix").toString()
              : at.toString();
      if (pointer.equals(at.toString())) {
        problemAtKey(pointer, e.getMessage());
      } else {
        problem(pointer, e.getMessage());
      }
      return Optional.empty();
    }
  }

  private void onlyFor(boolean present, JsonPointer at, String key, String where, String kind) {
    if (present) {
      problemAtKey(
          at.appendProperty(key).toString(),
          where + "." + key + "' applies only to " + kind + " (remove it, or fix 'transport')");
    }
  }

  private Optional<URI> url(String raw, JsonPointer at, String where) {
    String pointer = at.appendProperty("url").toString();
    if (raw == null || raw.isBlank()) {
      problemAtKey(
          at.toString(),
          where + "' has no 'url' (expected the server's endpoint, such as http://host:3001/mcp)");
      return Optional.empty();
    }
    try {
      URI url = new URI(raw);
      String scheme = url.getScheme() == null ? "" : url.getScheme().toLowerCase(Locale.ROOT);
      if ((scheme.equals("http") || scheme.equals("https")) && url.getHost() != null) {
        return Optional.of(url);
      }
    } catch (URISyntaxException e) {
      // Reported below.
    }
    problem(
        pointer,
        where
            + ".url' is '"
            + raw
            + "' (expected an http or https URL, such as http://127.0.0.1:3001/mcp)");
    return Optional.empty();
  }

  /** A duration: a whole number of seconds, or 500ms, 30s, 2m, 1h, or ISO-8601 such as PT1M. */
  private Optional<Duration> duration(
      String raw, JsonPointer at, String dotted, Optional<Duration> max) {
    if (raw == null) {
      return Optional.empty();
    }
    Optional<Duration> parsed = Durations.parse(raw);
    if (parsed.isEmpty()) {
      problem(
          at.toString(),
          "'"
              + dotted
              + "' is '"
              + raw
              + "' (expected a positive duration, such as 30s, 2m or 500ms)");
      return Optional.empty();
    }
    Duration duration = parsed.get();
    if (max.isPresent() && duration.compareTo(max.get()) > 0) {
      problem(
          at.toString(),
          "'"
              + dotted
              + "' is "
              + raw
              + ", above the maximum of "
              + max.get().toMinutes()
              + " minutes (expected a duration such as 60s, at most "
              + max.get().toMinutes()
              + "m)");
      return Optional.empty();
    }
    return Optional.of(duration);
  }

  private void problem(String pointer, String message) {
    problems.atValue(pointer, message);
  }

  private void problemAtKey(String pointer, String message) {
    problems.atKey(pointer, message);
  }

  // ---- the section's raw shape: every key optional, so every field may be null ----

  record RawMcp(
      String allowRegister,
      Boolean allowRegisterPrivate,
      String stateDir,
      List<String> approved,
      @DurationText String connectTimeout,
      @DurationText String startTimeout,
      @JsonPropertyDescription("a mapping of server names to servers")
          Map<String, RawServer> servers) {}

  record RawServer(
      String transport,
      String command,
      List<String> args,
      @JsonPropertyDescription("a mapping of names to strings") Map<String, String> env,
      List<String> passEnv,
      String url,
      @JsonPropertyDescription("a mapping of names to strings") Map<String, String> headers,
      String prefix,
      @DurationText String timeout) {}
}
