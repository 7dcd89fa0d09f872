package dev.toolhost.core;

/**
 * Tool annotations are the MCP behaviour hints of a tool: whether it only reads, whether it may
 * destroy, whether repeating it is harmless, and whether it reaches an open world outside the host.
 *
 * <p>They are hints for clients and operators, never a security boundary. {@link #UNSPECIFIED}
 * holds the MCP defaults.
 *
 * @param readOnly the tool does not change its environment
 * @param destructive the tool may perform destructive updates (meaningful when not read-only)
 * @param idempotent calling again with the same arguments has no further effect
 * @param openWorld the tool interacts with entities outside the host
 */
public record ToolAnnotations(
    boolean readOnly, boolean destructive, boolean idempotent, boolean openWorld) {

  /** The MCP defaults: not read-only, destructive, not idempotent, open world. */
  public static final ToolAnnotations UNSPECIFIED = new ToolAnnotations(false, true, false, true);

  /** Hints for a tool that only reads what the host itself holds. */
  public static final ToolAnnotations READ_ONLY = new ToolAnnotations(true, false, true, false);
}
