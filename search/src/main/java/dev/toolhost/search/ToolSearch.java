package dev.toolhost.search;

import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.ToolException;
import dev.toolhost.core.ToolProfile;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import dev.toolhost.core.ToolSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * Tool search lets an agent start with a small, stable tool set and find the rest of the registry's
 * tools when it needs them: {@code search_tools(query)} ranks the tools the agent's profile allows
 * by BM25 over their name and description, and adds the best ones to the agent's tool set for the
 * rest of its run.
 *
 * <p>One tool search indexes one registry and follows its changes until {@link #close}; {@link
 * #bind} gives one tool set its own {@code search_tools} (source {@code builtin:search}). Added
 * tools are bound to that set after the tools it already shows, so the prompt prefix stays stable.
 * A tool found this way that is later unregistered answers {@code tool_not_found} when called
 * through the set. Thread-safe.
 */
public final class ToolSearch implements ToolRegistry.Listener, AutoCloseable {

  /** The name of the tool {@link #bind} adds. */
  public static final String TOOL_NAME = "search_tools";

  /** How many tools one {@code search_tools} call adds, unless told otherwise. */
  public static final int DEFAULT_PICKS = 5;

  private static final ObjectNode PARAMETERS =
      (ObjectNode)
          JsonMapper.shared()
              .readTree(
                  """
                  {"type": "object",
                   "properties": {"query": {"type": "string",
                     "description": "Words that describe what you need a tool for, such as \\"read a pdf file\\"."}},
                   "required": ["query"],
                   "additionalProperties": false}
                  """);

  private final ToolRegistry registry;
  private final Bm25Index<ToolSpec> index = new Bm25Index<>();
  private final Object writeLock = new Object();

  private ToolSearch(ToolRegistry registry) {
    this.registry = Objects.requireNonNull(registry, "registry");
  }

  /** A tool search over the registry: its current tools, then every change. */
  public static ToolSearch over(ToolRegistry registry) {
    ToolSearch search = new ToolSearch(registry);
    registry.addListener(search);
    for (ExecutableTool tool : registry.tools()) {
      synchronized (search.writeLock) {
        // The unregistered event takes the same lock: a tool gone by now is not brought back.
        if (registry.find(tool.name()).filter(t -> t == tool).isPresent()) {
          search.index.put(tool.name(), tool.spec(), text(tool.spec()));
        }
      }
    }
    return search;
  }

  @Override
  public void registered(ToolSpec spec) {
    synchronized (writeLock) {
      index.put(spec.name(), spec, text(spec));
    }
  }

  @Override
  public void unregistered(ToolSpec spec) {
    synchronized (writeLock) {
      index.remove(spec.name());
    }
  }

  @Override
  public void replaced(ToolSpec before, ToolSpec after) {
    // The index replaces an entry of the same name in place.
    registered(after);
  }

  /** Stops following the registry. */
  @Override
  public void close() {
    registry.removeListener(this);
  }

  /**
   * Returns up to {@code limit} registry tools the profile allows that match the query, best first.
   */
  public List<ToolSpec> search(String query, ToolProfile profile, int limit) {
    return index.search(query, limit, profile::allows).stream().map(Bm25Index.Hit::item).toList();
  }

  /** Binds {@code search_tools} to the set, searching what the profile allows and adding five. */
  public void bind(ToolSet set, ToolProfile searchable) {
    bind(set, searchable, DEFAULT_PICKS);
  }

  /**
   * Binds {@code search_tools} to the set: each call adds up to {@code picks} of the registry tools
   * that the profile allows and that match the query best.
   *
   * @throws IllegalArgumentException when the set already shows a tool named {@code search_tools}
   */
  public void bind(ToolSet set, ToolProfile searchable, int picks) {
    Objects.requireNonNull(set, "set");
    Objects.requireNonNull(searchable, "searchable");
    if (picks <= 0) {
      throw new IllegalArgumentException("picks must be positive, not " + picks + ".");
    }
    ToolSpec spec =
        new ToolSpec(
            TOOL_NAME,
            "Finds tools for a task among all the tools you may use, and adds the best "
                + picks
                + " to your tools for the rest of this run. Call it when none of your current"
                + " tools fits; then call the tools it added directly.",
            PARAMETERS,
            ServiceIndex.SOURCE);
    set.add(
        ExecutableTool.of(
            spec,
            (call, arguments) -> pick(set, searchable, picks, arguments.get("query").asString())));
  }

  private ToolResult pick(ToolSet set, ToolProfile searchable, int picks, String query) {
    if (query.isBlank()) {
      throw ToolException.invalidArguments("query is required: describe what you need a tool for.");
    }
    // A set bounded by its caller's (an agent called by another) may find only what both allow.
    List<ToolSpec> found =
        index
            .search(query, picks, spec -> searchable.allows(spec) && set.underCeiling(spec.name()))
            .stream()
            .map(Bm25Index.Hit::item)
            .toList();
    if (found.isEmpty()) {
      return ToolResult.success(
          "No tool matches '"
              + query
              + "'. Try other words (what the tool acts on, what it does), or do without.");
    }
    List<ToolSpec> added = new ArrayList<>();
    List<ToolSpec> present = new ArrayList<>();
    for (ToolSpec spec : found) {
      if (set.find(spec.name()).isPresent()) {
        present.add(spec);
        continue;
      }
      var tool = registry.find(spec.name());
      if (tool.isEmpty()) {
        continue;
      }
      try {
        set.add(followRegistry(tool.get()));
        added.add(spec);
      } catch (IllegalArgumentException alreadyThere) {
        // Another call of this set added it meanwhile.
        present.add(spec);
      }
    }
    StringBuilder answer = new StringBuilder();
    if (!added.isEmpty()) {
      answer.append("Added to your tools for the rest of this run (call them directly):");
      added.forEach(
          s -> answer.append("\n- ").append(s.name()).append(": ").append(s.description()));
    }
    if (!present.isEmpty()) {
      if (!answer.isEmpty()) {
        answer.append("\n\n");
      }
      answer.append("Already among your tools:");
      present.forEach(
          s -> answer.append("\n- ").append(s.name()).append(": ").append(s.description()));
    }
    return ToolResult.success(answer.toString());
  }

  /**
   * The tool, answering {@code tool_not_found} once the registry no longer holds it; where it runs
   * and its timeout unchanged.
   */
  private ExecutableTool followRegistry(ExecutableTool tool) {
    return tool.withExecutor(
        (call, arguments) -> {
          if (registry.find(tool.name()).filter(t -> t == tool).isEmpty()) {
            return ToolResult.failure(
                ErrorCode.TOOL_NOT_FOUND,
                "Tool '" + tool.name() + "' was removed and can no longer be called.");
          }
          return tool.executor().execute(call, arguments);
        });
  }

  private static String text(ToolSpec spec) {
    return spec.name() + "\n" + spec.description();
  }
}
