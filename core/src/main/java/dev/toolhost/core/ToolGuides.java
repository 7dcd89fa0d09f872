package dev.toolhost.core;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * Tool guides are the guides every tool family of a host publishes, served to the model by the
 * tools {@code list_tool_guides} and {@code get_tool_guide(name)} (source {@code builtin:guides}).
 *
 * <p>Thread-safe: guides may be added while the tools are being called. Core ships one guide,
 * {@code tool-calls}, on how calls fail and what to do about it.
 */
public final class ToolGuides {

  /** The source of the guide tools. */
  public static final String SOURCE = "builtin:guides";

  /** The guide core ships: how tool calls fail, and what to do about each failure. */
  public static final ToolGuide TOOL_CALLS =
      ToolGuide.fromResource(
          "tool-calls",
          "How tool calls fail (error codes, retries, deadlines) and how to find tools.",
          ToolGuides.class,
          "guides/tool-calls.md");

  private final Map<String, ToolGuide> guides = new TreeMap<>();

  /** Guides holding {@link #TOOL_CALLS}. */
  public ToolGuides() {
    add(TOOL_CALLS);
  }

  /**
   * Adds a guide.
   *
   * @throws IllegalArgumentException when a guide of that name exists
   */
  public synchronized void add(ToolGuide guide) {
    Objects.requireNonNull(guide, "guide");
    if (guides.putIfAbsent(guide.name(), guide) != null) {
      throw new IllegalArgumentException("Tool guide '" + guide.name() + "' is already published.");
    }
  }

  /** Every guide, by name. */
  public synchronized List<ToolGuide> all() {
    return List.copyOf(guides.values());
  }

  /** The tools that serve these guides: {@code list_tool_guides} and {@code get_tool_guide}. */
  public List<ExecutableTool> tools() {
    return MethodTools.of(this, SOURCE);
  }

  @Tool(
      name = "list_tool_guides",
      description =
          "Lists the available tool guides by name with a one-line summary. Read a guide with"
              + " get_tool_guide before using an unfamiliar family of tools.",
      readOnly = true,
      destructive = false,
      idempotent = true,
      openWorld = false,
      inline = true)
  public String listToolGuides() {
    return all().stream()
        .map(guide -> "- " + guide.name() + ": " + guide.summary())
        .collect(Collectors.joining("\n", "Available tool guides:\n", ""));
  }

  @Tool(
      name = "get_tool_guide",
      description = "Returns the full markdown guide of the given name, from list_tool_guides.",
      readOnly = true,
      destructive = false,
      idempotent = true,
      openWorld = false,
      inline = true)
  public String getToolGuide(@Param(description = "The guide's name, as listed.") String name) {
    ToolGuide guide;
    synchronized (this) {
      guide = guides.get(name);
    }
    if (guide == null) {
      throw ToolException.invalidArguments(
          "there is no tool guide named '"
              + name
              + "'. Available guides: "
              + all().stream().map(ToolGuide::name).collect(Collectors.joining(", "))
              + ".");
    }
    return guide.document();
  }
}
