package dev.toolhost.bus;

import java.util.Map;
import java.util.Objects;

/**
 * A remote MCP server is an MCP server that the workers of one group bridge, as a host knows it
 * from their announcements: the host calls its tools over the bus, on any worker of the group.
 *
 * @param name the server's name
 * @param group the worker group that hosts it
 * @param state {@code connected} when a live worker of the group has it connected; else the best
 *     state a live worker reports ({@code connecting}, {@code broken}, {@code closed}), or {@code
 *     unavailable} when no worker of the group is alive any more
 * @param endpoint its command line or URL as the workers describe it
 * @param lastError why it is not connected, when it is not
 * @param workers how many live workers of the group have it connected (can serve its calls)
 * @param tools its tools as the host registered them: the registered name to the name on the server
 *     (when {@code unavailable}, the tools it had)
 */
public record RemoteMcpServer(
    String name,
    String group,
    String state,
    String endpoint,
    String lastError,
    int workers,
    Map<String, String> tools) {

  /** The state of a server no live worker of its group bridges any more. */
  public static final String UNAVAILABLE = "unavailable";

  public RemoteMcpServer {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(group, "group");
    Objects.requireNonNull(state, "state");
    Objects.requireNonNull(endpoint, "endpoint");
    Objects.requireNonNull(lastError, "lastError");
    tools = Map.copyOf(tools);
  }
}
