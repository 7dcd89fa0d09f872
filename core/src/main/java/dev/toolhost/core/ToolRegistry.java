package dev.toolhost.core;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A tool registry is the catalogue of every tool a host can run, by unique name, with its executor.
 *
 * <p>Thread-safe: tools are registered and unregistered at run time while calls run; a call that
 * already found its tool finishes even if the tool is unregistered meanwhile. Registration refuses
 * a duplicate name and a parameters schema that is not a valid JSON Schema. {@link #specs()} is a
 * snapshot sorted by name. Listeners hear every change, on the thread that made it, after it took
 * effect; a listener that throws is logged and does not undo the change.
 */
public final class ToolRegistry {

  private static final Logger LOG = LoggerFactory.getLogger(ToolRegistry.class);

  private final ConcurrentHashMap<String, ExecutableTool> tools = new ConcurrentHashMap<>();
  private final List<Listener> listeners = new CopyOnWriteArrayList<>();
  private final Object writeLock = new Object();
  private volatile List<ExecutableTool> snapshot = List.of();
  private final ConcurrentHashMap<String, String> profileCounts = new ConcurrentHashMap<>();

  /** A listener hears about tools registered and unregistered. */
  public interface Listener {
    /** Called after a tool was registered. */
    default void registered(ToolSpec spec) {}

    /** Called after a tool was unregistered. */
    default void unregistered(ToolSpec spec) {}

    /**
     * Called after a tool was replaced by another of the same name, in one step (see {@link
     * ToolRegistry#replace}). By default, the listener hears the old tool unregistered and the new
     * one registered; a listener that can update in place overrides this.
     */
    default void replaced(ToolSpec before, ToolSpec after) {
      unregistered(before);
      registered(after);
    }
  }

  /**
   * Registers a tool.
   *
   * @return the registered tool
   * @throws IllegalArgumentException when a tool of that name is already registered ("Tool 'X' is
   *     already registered."), or its parameters schema is not a valid JSON Schema object
   */
  public ExecutableTool register(ToolSpec spec, ToolExecutor executor) {
    return register(ExecutableTool.of(spec, executor));
  }

  /**
   * Registers a tool whose schema was already compiled.
   *
   * @return the tool
   * @throws IllegalArgumentException when a tool of that name is already registered
   */
  public ExecutableTool register(ExecutableTool tool) {
    if (!registerIfAbsent(tool)) {
      throw new IllegalArgumentException("Tool '" + tool.name() + "' is already registered.");
    }
    return tool;
  }

  /**
   * Registers a tool unless a tool of that name is already registered; for sources that may
   * announce the same tool more than once (remote workers, MCP servers).
   *
   * @return whether the tool was registered
   */
  public boolean registerIfAbsent(ExecutableTool tool) {
    ToolSpec spec = tool.spec();
    synchronized (writeLock) {
      if (tools.putIfAbsent(spec.name(), tool) != null) {
        return false;
      }
      snapshot = sorted();
    }
    for (Listener listener : listeners) {
      try {
        listener.registered(spec);
      } catch (RuntimeException e) {
        LOG.warn("A registry listener failed on registering '{}'", spec.name(), e);
      }
    }
    return true;
  }

  /** Registers every tool in the list, in order; see {@link #register(ExecutableTool)}. */
  public void registerAll(List<ExecutableTool> tools) {
    tools.forEach(this::register);
  }

  /**
   * Unregisters the tool of the given name.
   *
   * @return whether a tool was removed
   */
  public boolean unregister(String name) {
    ExecutableTool removed;
    synchronized (writeLock) {
      removed = tools.remove(name);
      if (removed == null) {
        return false;
      }
      snapshot = sorted();
    }
    for (Listener listener : listeners) {
      try {
        listener.unregistered(removed.spec());
      } catch (RuntimeException e) {
        LOG.warn("A registry listener failed on unregistering '{}'", name, e);
      }
    }
    return true;
  }

  /**
   * Replaces a registered tool with another of the same name, in one step: a lookup at any moment
   * finds one or the other, never neither, so a call arriving meanwhile is not answered {@code
   * tool_not_found}. For sources whose tools change while they stay registered (an MCP server's
   * changed tool list, a tool service's new announcement). A call that already found the old tool
   * finishes with it.
   *
   * @param current the tool the caller registered and expects to be registered now
   * @param replacement the tool to put in its place, under the same name
   * @return whether the tool was replaced; false, with nothing changed, when {@code current} is no
   *     longer the registered tool of that name (it was unregistered or replaced meanwhile)
   * @throws IllegalArgumentException when the two tools have different names
   */
  public boolean replace(ExecutableTool current, ExecutableTool replacement) {
    if (!current.name().equals(replacement.name())) {
      throw new IllegalArgumentException(
          "Tool '"
              + current.name()
              + "' cannot be replaced by tool '"
              + replacement.name()
              + "': a replacement keeps the name.");
    }
    synchronized (writeLock) {
      // The very tool, not an equal one: a caller replaces only what it registered itself.
      if (tools.get(current.name()) != current) {
        return false;
      }
      tools.put(current.name(), replacement);
      snapshot = sorted();
    }
    for (Listener listener : listeners) {
      try {
        listener.replaced(current.spec(), replacement.spec());
      } catch (RuntimeException e) {
        LOG.warn("A registry listener failed on replacing '{}'", current.name(), e);
      }
    }
    return true;
  }

  /** Returns the tool of the given name, if registered. */
  public Optional<ExecutableTool> find(String name) {
    return Optional.ofNullable(tools.get(name));
  }

  /** Returns a snapshot of every registered tool, sorted by name. */
  public List<ExecutableTool> tools() {
    return snapshot;
  }

  /** Returns a snapshot of every registered tool's spec, sorted by name. */
  public List<ToolSpec> specs() {
    return snapshot.stream().map(ExecutableTool::spec).toList();
  }

  /** Adds a listener for later changes. */
  public void addListener(Listener listener) {
    listeners.add(Objects.requireNonNull(listener, "listener"));
  }

  /** Removes a listener. */
  public void removeListener(Listener listener) {
    listeners.remove(listener);
  }

  /** Whether the logged counts of a profile's tool list differ from those last logged. */
  boolean profileCountsChanged(String profile, String counts) {
    return !counts.equals(profileCounts.put(profile, counts));
  }

  private List<ExecutableTool> sorted() {
    List<ExecutableTool> all = new ArrayList<>(tools.values());
    all.sort(Comparator.comparing(tool -> tool.spec().name()));
    return List.copyOf(all);
  }
}
