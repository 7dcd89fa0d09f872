package dev.toolhost.core;

import java.util.Collection;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * A tool profile is the rule that decides which tools one role (a main turn, a subagent, a
 * scheduled task) may see.
 *
 * <p>The rule is RockBot's: a deny by name or by source always wins; otherwise a tool is allowed by
 * its name, by {@code *} among the allowed sources, or by its source; nothing else is allowed.
 * Sources match exactly. Profiles are immutable and compose: {@link #withNames}, {@link
 * #withSources}, {@link #withoutNames} and {@link #withoutSources} return a new profile.
 *
 * @param name the profile's name
 * @param allowedSources sources whose tools are allowed; {@code *} allows every source
 * @param deniedSources sources whose tools are denied, whatever else says
 * @param allowedNames tools allowed by name
 * @param deniedNames tools denied by name, whatever else says
 */
public record ToolProfile(
    String name,
    Set<String> allowedSources,
    Set<String> deniedSources,
    Set<String> allowedNames,
    Set<String> deniedNames) {

  /** The source pattern that allows every source. */
  public static final String ANY_SOURCE = "*";

  public ToolProfile {
    Objects.requireNonNull(name, "name");
    allowedSources = Set.copyOf(allowedSources);
    deniedSources = Set.copyOf(deniedSources);
    allowedNames = Set.copyOf(allowedNames);
    deniedNames = Set.copyOf(deniedNames);
  }

  /** A profile of the given name that allows every tool. */
  public static ToolProfile all(String name) {
    return new ToolProfile(name, Set.of(ANY_SOURCE), Set.of(), Set.of(), Set.of());
  }

  /** A profile of the given name that allows nothing until composed. */
  public static ToolProfile none(String name) {
    return new ToolProfile(name, Set.of(), Set.of(), Set.of(), Set.of());
  }

  /** Whether a tool with this spec is visible under this profile. */
  public boolean allows(ToolSpec spec) {
    return allows(spec.name(), spec.source());
  }

  /** Whether a tool of this name and source is visible under this profile. */
  public boolean allows(String toolName, String source) {
    return !deniedNames.contains(toolName)
        && !deniedSources.contains(source)
        && (allowedNames.contains(toolName)
            || allowedSources.contains(ANY_SOURCE)
            || allowedSources.contains(source));
  }

  /** This profile under another name. */
  public ToolProfile named(String newName) {
    return new ToolProfile(newName, allowedSources, deniedSources, allowedNames, deniedNames);
  }

  /** This profile also allowing the given tool names. */
  public ToolProfile withNames(String... names) {
    return withNames(Set.of(names));
  }

  /** This profile also allowing the given tool names. */
  public ToolProfile withNames(Collection<String> names) {
    return new ToolProfile(
        name, allowedSources, deniedSources, union(allowedNames, names), deniedNames);
  }

  /** This profile also allowing the given sources. */
  public ToolProfile withSources(String... sources) {
    return withSources(Set.of(sources));
  }

  /** This profile also allowing the given sources. */
  public ToolProfile withSources(Collection<String> sources) {
    return new ToolProfile(
        name, union(allowedSources, sources), deniedSources, allowedNames, deniedNames);
  }

  /** This profile also denying the given tool names. */
  public ToolProfile withoutNames(String... names) {
    return withoutNames(Set.of(names));
  }

  /** This profile also denying the given tool names. */
  public ToolProfile withoutNames(Collection<String> names) {
    return new ToolProfile(
        name, allowedSources, deniedSources, allowedNames, union(deniedNames, names));
  }

  /** This profile also denying the given sources. */
  public ToolProfile withoutSources(String... sources) {
    return withoutSources(Set.of(sources));
  }

  /** This profile also denying the given sources. */
  public ToolProfile withoutSources(Collection<String> sources) {
    return new ToolProfile(
        name, allowedSources, union(deniedSources, sources), allowedNames, deniedNames);
  }

  private static Set<String> union(Set<String> a, Collection<String> b) {
    return Stream.concat(a.stream(), b.stream()).collect(Collectors.toUnmodifiableSet());
  }
}
