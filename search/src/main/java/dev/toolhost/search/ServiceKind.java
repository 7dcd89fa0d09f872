package dev.toolhost.search;

/**
 * A service kind is the closed set of things an agent can route work to, each with the stable type
 * name {@code search_known_services} reports and the name of its capability list.
 *
 * <p>The type names match the tool sources of the same things: an agent is {@code a2a} (called with
 * {@code invoke_agent}), an MCP server {@code mcp} (tools from source {@code mcp:{server}}), a tool
 * service {@code service} (source {@code service:{id}}) and a group of remote workers {@code
 * remote} (source {@code remote:{group}}).
 */
public enum ServiceKind {
  AGENT("a2a", "top_skills", "top skills"),
  MCP_SERVER("mcp", "top_tools", "top tools"),
  TOOL_SERVICE("service", "top_tools", "top tools"),
  WORKER_GROUP("remote", "top_tools", "top tools");

  private final String wireName;
  private final String capabilitiesField;
  private final String capabilitiesLabel;

  ServiceKind(String wireName, String capabilitiesField, String capabilitiesLabel) {
    this.wireName = wireName;
    this.capabilitiesField = capabilitiesField;
    this.capabilitiesLabel = capabilitiesLabel;
  }

  /** The type name on the wire: {@code a2a}, {@code mcp}, {@code service} or {@code remote}. */
  public String wireName() {
    return wireName;
  }

  /** The JSON field of a search result that lists its capabilities: skills or tools. */
  public String capabilitiesField() {
    return capabilitiesField;
  }

  /** How a context hint names the capabilities: "top skills" or "top tools". */
  public String capabilitiesLabel() {
    return capabilitiesLabel;
  }

  /**
   * Returns the kind with the given type name.
   *
   * @throws IllegalArgumentException naming the unknown type
   */
  public static ServiceKind fromWireName(String wireName) {
    for (ServiceKind kind : values()) {
      if (kind.wireName.equals(wireName)) {
        return kind;
      }
    }
    throw new IllegalArgumentException("Unknown service type '" + wireName + "'.");
  }
}
