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
 * <p>The built-in profiles are those of RockBot's tool-profile design, its restricted ones as
 * explicit allow-lists:
 *
 * <ul>
 *   <li>{@code main}: everything.
 *   <li>{@code subagent}: what the extensions grant a subagent (never another subagent).
 *   <li>{@code scheduled}: what the extensions grant a scheduled task.
 *   <li>{@code a2a_synthesis}: what the extensions grant the synthesis of another agent's answer,
 *       the least trusted text in the system: reading only (working memory, long-term recall,
 *       guides), never code, the network, scheduling, agents or server registration.
 * </ul>
 *
 * <p>The extension that owns a tool grants it to the restricted profiles it belongs in ({@link
 * #withAllowed}), so that core names no other module's tools, and a tool no extension grants (a new
 * capability's, a bridged MCP server's, a remote worker's) enters none of them: a new tool source
 * shows up in {@code main} and only enters a restricted profile by a conscious grant. Fails safe.
 *
 * <p>Built-in profiles are code, not configuration: they are a safety boundary, and a bad config
 * edit must not silently open it. A user profile may extend any profile but may not replace a
 * built-in one. Immutable and thread-safe.
 */
public final class ToolProfiles {

  /** The profile of a main agent turn: every tool. */
  public static final ToolProfile MAIN = ToolProfile.all("main");

  /** The profile of a subagent: what the extensions grant it, never a subagent of its own. */
  public static final ToolProfile SUBAGENT =
      ToolProfile.none("subagent").withoutSources("subagent");

  /** The profile of a scheduled task: what the extensions grant it, never a subagent. */
  public static final ToolProfile SCHEDULED =
      ToolProfile.none("scheduled").withoutSources("subagent");

  /** The profile of synthesising an agent-to-agent result: what the extensions grant it. */
  public static final ToolProfile A2A_SYNTHESIS =
      ToolProfile.none("a2a_synthesis").withoutSources("a2a", "subagent");

  /** The restricted built-in profiles: those that see only what is granted them. */
  public static final List<ToolProfile> RESTRICTED = List.of(SUBAGENT, SCHEDULED, A2A_SYNTHESIS);

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
    return of(BUILT_IN, userProfiles);
  }

  /**
   * The given built-in profiles (those of {@link #BUILT_IN}, amended by {@link #withAllowed}) and
   * the given user profiles.
   *
   * @throws IllegalArgumentException when the built-in profiles are not those of {@link #BUILT_IN},
   *     or a user profile has the name of a built-in profile or of another user profile
   */
  public static ToolProfiles of(List<ToolProfile> builtIns, Collection<ToolProfile> userProfiles) {
    if (!builtIns.stream().map(ToolProfile::name).toList().equals(builtInNames())) {
      throw new IllegalArgumentException(
          "The built-in profiles must be " + builtInNames() + ", in that order.");
    }
    Map<String, ToolProfile> all = new LinkedHashMap<>();
    builtIns.forEach(profile -> all.put(profile.name(), profile));
    for (ToolProfile profile : userProfiles) {
      if (BUILT_IN.stream().anyMatch(builtIn -> builtIn.name().equals(profile.name()))) {
        throw new IllegalArgumentException(
            "Tool profile '" + profile.name() + "' is built in and cannot be redefined.");
      }
      if (all.containsKey(profile.name())) {
        throw new IllegalArgumentException(
            "Tool profile '" + profile.name() + "' is defined twice.");
      }
      all.put(profile.name(), profile);
    }
    return new ToolProfiles(Map.copyOf(all));
  }

  /**
   * The built-in profiles with the given tools granted to the restricted ones, by profile name: the
   * grants the host's extensions make of the tools they own.
   *
   * @throws IllegalArgumentException when a grant names a profile that is not a restricted built-in
   *     one ({@code main} has every tool already)
   */
  public static List<ToolProfile> withAllowed(Map<String, ? extends Collection<String>> allowed) {
    return withRules(allowed, Map.of());
  }

  /**
   * The built-in profiles with the given tools granted to the restricted ones and the given tools
   * denied to any, by profile name: the rules the host's extensions make about the tools they own.
   * A denial wins over a grant.
   *
   * @throws IllegalArgumentException when a grant names a profile that is not a restricted built-in
   *     one, or a denial one that is not built in
   */
  public static List<ToolProfile> withRules(
      Map<String, ? extends Collection<String>> allowed,
      Map<String, ? extends Collection<String>> denied) {
    for (String name : denied.keySet()) {
      if (!builtInNames().contains(name)) {
        throw new IllegalArgumentException(
            "No built-in profile is named '"
                + name
                + "' (built-in profiles: "
                + String.join(", ", builtInNames())
                + ").");
      }
    }
    List<String> restricted = RESTRICTED.stream().map(ToolProfile::name).toList();
    for (String name : allowed.keySet()) {
      if (!restricted.contains(name)) {
        throw new IllegalArgumentException(
            "No restricted built-in profile is named '"
                + name
                + "' (restricted profiles: "
                + String.join(", ", restricted)
                + ").");
      }
    }
    List<ToolProfile> profiles = new ArrayList<>();
    for (ToolProfile profile : BUILT_IN) {
      Collection<String> granted = allowed.get(profile.name());
      Collection<String> taken = denied.get(profile.name());
      profiles.add(
          profile
              .withNames(granted == null ? List.of() : granted)
              .withoutNames(taken == null ? List.of() : taken));
    }
    return List.copyOf(profiles);
  }

  private static List<String> builtInNames() {
    return BUILT_IN.stream().map(ToolProfile::name).toList();
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
