package dev.toolhost.core;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Registry changes are what a registry's listeners hear, written down for tests: {@code +name} for
 * a registration, {@code -name} for a removal, and {@code ~name} for a replacement. Shared with the
 * other modules' tests through core's test jar. Thread-safe.
 */
public final class RegistryChanges implements ToolRegistry.Listener {

  private final List<String> changes = new CopyOnWriteArrayList<>();
  private final boolean replacements;

  private RegistryChanges(boolean replacements) {
    this.replacements = replacements;
  }

  /** The registry's changes from now on, replacements written as {@code ~name}. */
  public static List<String> of(ToolRegistry registry) {
    return follow(registry, true);
  }

  /**
   * The registry's changes from now on, heard by a listener that keeps the default for a
   * replacement: a removal, then a registration.
   */
  public static List<String> withoutReplacements(ToolRegistry registry) {
    return follow(registry, false);
  }

  private static List<String> follow(ToolRegistry registry, boolean replacements) {
    RegistryChanges listener = new RegistryChanges(replacements);
    registry.addListener(listener);
    return listener.changes;
  }

  @Override
  public void registered(ToolSpec spec) {
    changes.add("+" + spec.name());
  }

  @Override
  public void unregistered(ToolSpec spec) {
    changes.add("-" + spec.name());
  }

  @Override
  public void replaced(ToolSpec before, ToolSpec after) {
    if (replacements) {
      changes.add("~" + after.name());
    } else {
      ToolRegistry.Listener.super.replaced(before, after);
    }
  }
}
