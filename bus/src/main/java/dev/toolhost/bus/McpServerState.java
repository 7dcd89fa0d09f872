package dev.toolhost.bus;

import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * An MCP server state is what a worker that bridges an MCP server announces of it: the server's
 * name, whether it is connected, where it runs, and which of the worker's tools are its tools.
 * Hosts register those tools with source {@code mcp:{name}} as if the server were their own (see
 * {@code docs/wire-protocol.md}, "MCP servers on workers").
 *
 * @param name the server's name (1 to 64 of letters, digits, '_', '-', '.')
 * @param state {@code connecting}, {@code connected}, {@code broken} or {@code closed}
 * @param endpoint the server's command line or URL, secrets replaced by {@code ***}
 * @param lastError why it last failed to connect or lost its connection; empty when it did not
 * @param tools its callable tools: the name the worker hosts each under, to its name on the server
 */
public record McpServerState(
    String name, String state, String endpoint, String lastError, Map<String, String> tools) {

  /** The source of the MCP management tools, which a worker hosts but never announces. */
  public static final String MANAGEMENT_SOURCE = "mcp:management";

  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_.-]{1,64}");

  public McpServerState {
    Objects.requireNonNull(name, "name");
    if (!NAME.matcher(name).matches()) {
      throw new IllegalArgumentException(
          "MCP server name '"
              + name
              + "' is invalid: expected 1 to 64 of A-Z, a-z, 0-9, '_', '-', '.'.");
    }
    Objects.requireNonNull(state, "state");
    Objects.requireNonNull(endpoint, "endpoint");
    Objects.requireNonNull(lastError, "lastError");
    tools = Map.copyOf(tools);
  }

  /** The source of an MCP server's tools: {@code mcp:{name}}. */
  public static String source(String server) {
    return "mcp:" + server;
  }

  /** The server's name in an {@code mcp:{name}} source, if it is one. */
  public static Optional<String> server(String source) {
    return source.startsWith("mcp:") && NAME.matcher(source.substring(4)).matches()
        ? Optional.of(source.substring(4))
        : Optional.empty();
  }
}
