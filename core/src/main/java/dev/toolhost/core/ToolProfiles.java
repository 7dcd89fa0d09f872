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
 *   <li>{@code subagent}: denies source {@code subagent} (no recursion).
 *   <li>{@code scheduled}: denies source {@code subagent}.
 *   <li>{@code a2a_synthesis}: denies source {@code a2a}, so that synthesising an agent's result
 *       cannot dispatch a fresh call to an agent.
 * </ul>
 *
 * <p>The extension that owns a tool adds the rules about it to the host's built-in profiles ({@link
 * #withDenied}): the MCP extension takes {@code mcp_register_server} and {@code
 * mcp_unregister_server} from {@code subagent} and {@code scheduled}, so that core names no other
 * module's tools.
 *
 * <p>Built-in profiles are code, not configuration: they are a safety boundary, and a bad config
 * edit must not silently open it. A user profile may extend any profile but may not replace a
 * built-in one. Immutable and thread-safe.
 */
public final class ToolProfiles {

  /** The profile of a main agent turn: every tool. */
  public static final ToolProfile MAIN = ToolProfile.all("main");

  /** The profile of a subagent: no recursion, and what the extensions deny it. */
  public static final ToolProfile SUBAGENT = MAIN.named("subagent").withoutSources("subagent");

  /** The profile of a scheduled task: no subagents, and what the extensions deny it. */
  public static final ToolProfile SCHEDULED = MAIN.named("scheduled").withoutSources("subagent");

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
    return of(BUILT_IN, userProfiles);
  }

  /**
   * The given built-in profiles (those of {@link #BUILT_IN}, amended by {@link #withDenied}) and
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
   * The built-in profiles with the given tools denied, by profile name: the rules the host's
   * extensions add about the tools they own.
   *
   * @throws IllegalArgumentException when a rule names a profile that is not built in
   */
  public static List<ToolProfile> withDenied(Map<String, ? extends Collection<String>> denied) {
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
    return BUILT_IN.stream()
        .map(
            profile ->
                denied.containsKey(profile.name())
                    ? profile.withoutNames(denied.get(profile.name()).toArray(String[]::new))
                    : profile)
        .toList();
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
