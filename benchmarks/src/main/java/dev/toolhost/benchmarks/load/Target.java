package dev.toolhost.benchmarks.load;

import dev.toolhost.benchmarks.AddTool;

/**
 * A target is one route of the host that a load run drives: Jetty's answer to {@code /healthz} (the
 * floor: the same server, guard and telemetry, no tool), the HTTP API's invoke of the trivial tool,
 * and the MCP gateway's {@code tools/call} of the same tool over many sessions.
 */
enum Target {
  HEALTHZ("healthz", "/healthz"),
  INVOKE("invoke", "/v1/tools/" + AddTool.INLINE_NAME + "/invoke"),
  MCP("mcp", "/mcp");

  private final String label;
  private final String path;

  Target(String label, String path) {
    this.label = label;
    this.path = path;
  }

  /** The target's name, as the load script and the table know it. */
  String label() {
    return label;
  }

  /** The request path the target's requests go to. */
  String path() {
    return path;
  }
}
