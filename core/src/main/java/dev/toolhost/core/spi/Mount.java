package dev.toolhost.core.spi;

import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * A mount is a path an extension serves whole with a servlet, for a protocol a library already
 * serves as one (the MCP SDK's Streamable HTTP transport): every request to the path, or below it,
 * goes to the servlet, behind the host's request guard as every route is. A {@link Route} is the
 * way for everything else.
 *
 * <p>The servlet is a {@code jakarta.servlet.Servlet}, run with asynchronous support (event
 * streams); core names it {@code Object} so that it needs no servlet API, and the HTTP front
 * refuses anything else when it starts. A host with no HTTP front (a worker, {@code toolhost mcp})
 * never serves it. The extension that mounts a servlet closes what it holds.
 *
 * @param path the path served, and everything below it, such as {@code /mcp}
 * @param below the name of the one segment below the path, for telemetry's route names ({@code
 *     profile} names {@code /mcp/main} as {@code /mcp/{profile}})
 * @param servlet the {@code jakarta.servlet.Servlet} that answers
 */
public record Mount(String path, String below, Object servlet) {

  private static final Pattern PATH = Pattern.compile("(/[a-z0-9_.-]+)+");
  private static final Pattern NAME = Pattern.compile("[a-z_]+");

  public Mount {
    Objects.requireNonNull(path, "path");
    Objects.requireNonNull(below, "below");
    Objects.requireNonNull(servlet, "servlet");
    if (!PATH.matcher(path).matches()) {
      throw new IllegalArgumentException(
          "A mount's path is one or more plain segments, such as /mcp: " + path);
    }
    if (!NAME.matcher(below).matches()) {
      throw new IllegalArgumentException(
          "A mount names the segment below its path in lower case, such as profile: " + below);
    }
  }

  /** Whether a request's path is this mount's: the path itself or anything below it. */
  public boolean covers(String requestPath) {
    return requestPath.equals(path) || requestPath.startsWith(path + "/");
  }

  /**
   * The route name telemetry gives a request's path: the path itself, or the path with its one
   * segment below named ({@code /mcp/{profile}}); empty for a path this mount does not cover, or
   * deeper than that one segment.
   */
  public Optional<String> routeName(String requestPath) {
    if (requestPath.equals(path)) {
      return Optional.of(path);
    }
    String rest = covers(requestPath) ? requestPath.substring(path.length() + 1) : "/";
    return rest.isEmpty() || rest.contains("/")
        ? Optional.empty()
        : Optional.of(path + "/{" + below + "}");
  }
}
