package dev.toolhost.core;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Tool profiles are the named profiles of a host: the four built-in ones and the user's own.
 *
 * <p>The built-in profiles are those of RockBot's tool-profile design:
 *
 * <ul>
 *   <li>{@code main}: everything.
 *   <li>{@code subagent}: denies source {@code subagent} (no recursion) and the tools {@code
 *       cancel_scheduled_task}, {@code mcp_register_server} and {@code mcp_unregister_server}.
 *   <li>{@code scheduled}: denies source {@code subagent} and the tools {@code mcp_register_server}
 *       and {@code mcp_unregister_server}.
 *   <li>{@code a2a_synthesis}: denies source {@code a2a}, so that synthesising an agent's result
 *       cannot dispatch a fresh call to an agent.
 * </ul>
 *
 * <p>Built-in profiles are code, not configuration: they are a safety boundary, and a bad config
 * edit must not silently open it. A user profile may extend any profile but may not replace a
 * built-in one. Immutable and thread-safe.
 */
public final class ToolProfiles {

  /** The profile of a main agent turn: every tool. */
  public static final ToolProfile MAIN = ToolProfile.all("main");

  /** The profile of a subagent: no recursion, no cancelling schedules, no MCP server changes. */
  public static final ToolProfile SUBAGENT =
      MAIN.named("subagent")
          .withoutSources("subagent")
          .withoutNames("cancel_scheduled_task", "mcp_register_server", "mcp_unregister_server");

  /** The profile of a scheduled task: no subagents, no MCP server changes. */
  public static final ToolProfile SCHEDULED =
      MAIN.named("scheduled")
          .withoutSources("subagent")
          .withoutNames("mcp_register_server", "mcp_unregister_server");

  /** The profile of synthesising an agent-to-agent result: no further agent calls. */
  public static final ToolProfile A2A_SYNTHESIS = MAIN.named("a2a_synthesis").withoutSources("a2a");

  /** The built-in profiles, in their documented order. */
  public static final List<ToolProfile> BUILT_IN =
      List.of(MAIN, SUBAGENT, SCHEDULED, A2A_SYNTHESIS);

  private final Map<String, ToolProfile> profiles;

  private ToolProfiles(Map<String, ToolProfile> profiles) {
    this.profiles = profiles;
  }

  /** The built-in profiles only. */
  public static ToolProfiles builtIn() {
    return of(List.of());
  }

  /**
   * The built-in profiles and the given user profiles.
   *
   * @throws IllegalArgumentException when a user profile has the name of a built-in profile or of
   *     another user profile
   */
  public static ToolProfiles of(Collection<ToolProfile> userProfiles) {
    Map<String, ToolProfile> all = new LinkedHashMap<>();
    BUILT_IN.forEach(profile -> all.put(profile.name(), profile));
    for (ToolProfile profile : userProfiles) {
      if (all.containsKey(profile.name())) {
        throw new IllegalArgumentException(
            "Tool profile '" + profile.name() + "' is defined twice (or is a built-in profile).");
      }
      all.put(profile.name(), profile);
    }
    return new ToolProfiles(Map.copyOf(all));
  }

  /** Returns the profile of the given name. */
  public Optional<ToolProfile> find(String name) {
    return Optional.ofNullable(profiles.get(name));
  }

  /**
   * Returns the profile of the given name.
   *
   * @throws IllegalArgumentException naming the unknown profile and the known ones
   */
  public ToolProfile get(String name) {
    ToolProfile profile = profiles.get(name);
    if (profile == null) {
      throw new IllegalArgumentException(
          "Unknown tool profile '" + name + "'. Known profiles: " + String.join(", ", names()));
    }
    return profile;
  }

  /** Every profile, built-in first, then the user's in name order. */
  public List<ToolProfile> all() {
    return names().stream().map(profiles::get).toList();
  }

  /** The names of every profile, built-in first, then the user's in name order. */
  public List<String> names() {
    List<String> names = new ArrayList<>(BUILT_IN.stream().map(ToolProfile::name).toList());
    profiles.keySet().stream().filter(name -> !names.contains(name)).sorted().forEach(names::add);
    return names;
  }
}
