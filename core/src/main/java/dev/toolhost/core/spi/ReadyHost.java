package dev.toolhost.core.spi;

import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolSet;
import java.util.List;

/**
 * A ready host is the host as an extension sees it once every extension has started: its one
 * dispatcher exists, and so do its tool sets per profile.
 */
public interface ReadyHost {

  /** The registry of every tool the host can run. */
  ToolRegistry registry();

  /** The dispatcher every call on the host goes through. */
  ToolDispatcher dispatcher();

  /**
   * The host's tool set for the named profile.
   *
   * @throws IllegalArgumentException naming the unknown profile and the known ones
   */
  ToolSet toolSet(String profile);

  /** The names of the host's profiles: the built-in ones, then the config's. */
  List<String> profiles();

  /**
   * Shares a service made once the host is ready (agents, say), for the host's users and the
   * extensions told after this one.
   *
   * @throws IllegalArgumentException when a service of that type is already shared
   */
  <T> void provide(Class<T> type, T service);

  /** The service of that type an extension shares, if any. */
  <T> java.util.Optional<T> service(Class<T> type);
}
