package dev.toolhost.core;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tool guides are the guides every tool family of a host publishes, served to the model by the
 * tools {@code list_tool_guides} and {@code get_tool_guide(name)} (source {@code builtin:guides}).
 *
 * <p>Thread-safe: guides may be added while the tools are being called. Core ships one guide,
 * {@code tool-calls}, on how calls fail and what to do about it. Guides saved at run time (a user's
 * skills, {@link SavedGuides}) are listed after the published ones, marked as saved, and read with
 * the same {@code get_tool_guide}; a saved guide named like a published one is never served, and a
 * shelf that fails is reported in the listing without hiding the published guides.
 */
public final class ToolGuides {

  private static final Logger LOG = LoggerFactory.getLogger(ToolGuides.class);

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
  private final List<SavedGuides> shelves = new CopyOnWriteArrayList<>();

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

  /** Serves the guides saved on the shelf too, after those published, marked as saved. */
  public void shelve(SavedGuides shelf) {
    shelves.add(Objects.requireNonNull(shelf, "shelf"));
  }

  /**
   * Whether a guide of that name is published, in any case: a saved guide may not take its name,
   * nor one a model could take for it ({@code Tool-Calls} beside {@code tool-calls}).
   */
  public synchronized boolean published(String name) {
    return guides.keySet().stream().anyMatch(published -> published.equalsIgnoreCase(name));
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
  public String listToolGuides(ToolCall call) {
    StringBuilder text =
        new StringBuilder(
            all().stream()
                .map(guide -> "- " + guide.name() + ": " + guide.summary())
                .collect(Collectors.joining("\n", "Available tool guides:\n", "")));
    for (SavedGuides shelf : shelves) {
      List<ToolGuide> saved;
      try {
        saved = shelf.list(call);
      } catch (RuntimeException e) {
        // The failure is the operator's (a store's message may name its database), not the
        // model's: the log has it, the listing only says that the saved guides are missing.
        LOG.warn("Saved guides could not be listed for list_tool_guides", e);
        text.append("\n(saved guides cannot be listed now; the host's log says why)");
        continue;
      }
      for (ToolGuide guide : saved) {
        if (!published(guide.name())) {
          text.append("\n- ").append(guide.name()).append(" (saved): ").append(guide.summary());
        }
      }
    }
    return text.toString();
  }

  @Tool(
      name = "get_tool_guide",
      description = "Returns the full markdown guide of the given name, from list_tool_guides.",
      readOnly = true,
      destructive = false,
      idempotent = true,
      openWorld = false,
      inline = true)
  public String getToolGuide(
      ToolCall call, @Param(description = "The guide's name, as listed.") String name) {
    ToolGuide guide;
    synchronized (this) {
      guide = guides.get(name);
    }
    if (guide == null) {
      guide = saved(call, name).orElse(null);
    }
    if (guide == null) {
      throw ToolException.invalidArguments(
          "there is no tool guide named '"
              + name
              + "'. Available guides: "
              + all().stream().map(ToolGuide::name).collect(Collectors.joining(", "))
              + savedNames(call)
              + ".");
    }
    return guide.document();
  }

  /** The names of the saved guides, as an addition to the list of guides; empty if none. */
  private String savedNames(ToolCall call) {
    List<String> names = new java.util.ArrayList<>();
    for (SavedGuides shelf : shelves) {
      try {
        shelf.list(call).forEach(guide -> names.add(guide.name() + " (saved)"));
      } catch (RuntimeException e) {
        // The published guides are the answer; a shelf that cannot list adds nothing.
      }
    }
    return names.isEmpty() ? "" : ", " + String.join(", ", names);
  }

  private Optional<ToolGuide> saved(ToolCall call, String name) {
    for (SavedGuides shelf : shelves) {
      Optional<ToolGuide> found = shelf.find(call, name);
      if (found.isPresent()) {
        return found;
      }
    }
    return Optional.empty();
  }
}
