package dev.toolhost.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A tool set is the tools one agent process can see: the registry's tools that its profile allows,
 * plus tools bound to that process alone (a reply tool bound to one turn's response channel, say).
 * It is Spacebot's per-process tool server.
 *
 * <p>Bound tools are chosen by the process's own code and are not filtered by the profile; they are
 * listed after the registry's tools, in the order they were added, so that the prompt prefix stays
 * stable as tools come and go. A bound tool may not take the name of a tool the set already shows.
 *
 * <p>A set may be bounded by another, its ceiling: then it shows a registry tool only when the
 * ceiling shows it too. An agent called by another runs in a set bounded by its caller's, so that
 * calling an agent never reaches more than the caller itself could.
 *
 * <p>Thread-safe, and never holds a lock while a tool runs: listing never waits for a running call,
 * and a long call never delays registration. Once a bound tool is removed it can never be invoked
 * through this set again, even by a call that had already found it and was waiting to start: the
 * dispatch path checks {@link Entry#live()} just before the executor runs.
 */
public final class ToolSet {

  private static final Logger LOG = LoggerFactory.getLogger(ToolSet.class);

  private final ToolRegistry registry;
  private final ToolProfile profile;
  private final Optional<ToolSet> ceiling;
  private final ConcurrentHashMap<String, Bound> bound = new ConcurrentHashMap<>();
  private final Object bindLock = new Object();
  private volatile List<Bound> boundOrder = List.of();

  private ToolSet(ToolRegistry registry, ToolProfile profile, Optional<ToolSet> ceiling) {
    this.registry = Objects.requireNonNull(registry, "registry");
    this.profile = Objects.requireNonNull(profile, "profile");
    this.ceiling = ceiling;
  }

  /** A tool set over the registry, scoped by the profile, with no bound tools yet. */
  public static ToolSet of(ToolRegistry registry, ToolProfile profile) {
    return new ToolSet(registry, profile, Optional.empty());
  }

  /**
   * A tool set over the registry, scoped by the profile and bounded by the ceiling: it shows a
   * registry tool only when both the profile allows it and the ceiling shows it.
   */
  public static ToolSet within(ToolRegistry registry, ToolProfile profile, ToolSet ceiling) {
    return new ToolSet(registry, profile, Optional.of(Objects.requireNonNull(ceiling, "ceiling")));
  }

  /**
   * Whether this set's ceiling, if it has one, shows the named tool: what may join this set from
   * the registry, by profile or by a search that binds tools to it, must pass this too.
   */
  public boolean underCeiling(String name) {
    return ceiling.isEmpty() || ceiling.get().find(name).isPresent();
  }

  /** The profile this set is scoped by. */
  public ToolProfile profile() {
    return profile;
  }

  /**
   * Binds a tool to this set alone.
   *
   * @throws IllegalArgumentException when the set already shows a tool of that name
   */
  public void add(ExecutableTool tool) {
    String name = tool.name();
    synchronized (bindLock) {
      if (bound.containsKey(name) || visibleInRegistry(name).isPresent()) {
        throw new IllegalArgumentException("Tool '" + name + "' is already in this tool set.");
      }
      Bound entry = new Bound(tool);
      bound.put(name, entry);
      List<Bound> order = new ArrayList<>(boundOrder);
      order.add(entry);
      boundOrder = List.copyOf(order);
    }
  }

  /**
   * Removes a bound tool; from now on no call through this set can invoke it.
   *
   * @return whether a bound tool of that name was removed
   */
  public boolean remove(String name) {
    synchronized (bindLock) {
      Bound entry = bound.remove(name);
      if (entry == null) {
        return false;
      }
      entry.live.set(false);
      List<Bound> order = new ArrayList<>(boundOrder);
      order.remove(entry);
      boundOrder = List.copyOf(order);
      return true;
    }
  }

  /**
   * Returns the specs of every tool this set shows: the registry's tools the profile allows, in
   * name order, then the bound tools, in the order they were added. Logs "Tool profile 'P': A/T
   * tools allowed (D denied)", at DEBUG when the counts of that profile changed since it was last
   * logged for the registry, at TRACE otherwise: a registry change is logged once, at INFO, by what
   * made it (remote tools, tool services, MCP servers), not once per profile here.
   */
  public List<ToolSpec> specs() {
    List<ExecutableTool> all = registry.tools();
    List<ToolSpec> specs = new ArrayList<>(all.size() + boundOrder.size());
    for (ExecutableTool tool : all) {
      // A bound tool shadows a registry tool registered after it under the same name.
      if (profile.allows(tool.spec())
          && !bound.containsKey(tool.name())
          && underCeiling(tool.name())) {
        specs.add(tool.spec());
      }
    }
    int allowed = specs.size();
    String counts =
        "Tool profile '%s': %d/%d tools allowed (%d denied)"
            .formatted(profile.name(), allowed, all.size(), all.size() - allowed);
    // Agents build many sets of one profile, and a host lists every profile after each registry
    // change: the line is for debugging, once per change of a profile's counts.
    if (registry.profileCountsChanged(profile.name(), counts)) {
      LOG.debug(counts);
    } else {
      LOG.trace(counts);
    }
    for (Bound entry : boundOrder) {
      specs.add(entry.tool.spec());
    }
    return specs;
  }

  /** The names of every tool this set shows, in the order of {@link #specs()}. */
  public List<String> names() {
    return specs().stream().map(ToolSpec::name).toList();
  }

  /**
   * Finds the tool of the given name as this set shows it; a tool the profile denies is not found,
   * exactly as one that does not exist.
   */
  public Optional<Entry> find(String name) {
    Bound entry = bound.get(name);
    if (entry != null) {
      return Optional.of(entry);
    }
    return visibleInRegistry(name).map(Registered::new);
  }

  /**
   * Whether this set hides the named tool: the registry holds a tool of that name and this set does
   * not show it. A name the registry does not hold (an A2A agent's skill, say) is not hidden.
   */
  public boolean hides(String name) {
    return registry.find(name).isPresent() && find(name).isEmpty();
  }

  /**
   * How long a call to the named tool may take when its caller names no deadline: the tool's own
   * timeout, or {@link ToolCall#DEFAULT_TIMEOUT} for a tool without one or one this set does not
   * show (that call answers {@code tool_not_found} at once).
   */
  public Duration defaultTimeout(String name) {
    return find(name).map(entry -> entry.tool().defaultTimeout()).orElse(ToolCall.DEFAULT_TIMEOUT);
  }

  private Optional<ExecutableTool> visibleInRegistry(String name) {
    return registry
        .find(name)
        .filter(tool -> profile.allows(tool.spec()) && underCeiling(tool.name()));
  }

  /** An entry is a tool as found through a set, with whether the set still offers it. */
  public sealed interface Entry permits Registered, Bound {
    /** The tool. */
    ExecutableTool tool();

    /** Whether the set still offers this tool; a call must not start once this is false. */
    boolean live();
  }

  /** A registry tool seen through the set; it stays callable for calls that found it. */
  record Registered(ExecutableTool tool) implements Entry {
    @Override
    public boolean live() {
      return true;
    }
  }

  /** A tool bound to the set; dead once removed. */
  static final class Bound implements Entry {
    private final ExecutableTool tool;
    private final AtomicBoolean live = new AtomicBoolean(true);

    Bound(ExecutableTool tool) {
      this.tool = tool;
    }

    @Override
    public ExecutableTool tool() {
      return tool;
    }

    @Override
    public boolean live() {
      return live.get();
    }
  }
}
