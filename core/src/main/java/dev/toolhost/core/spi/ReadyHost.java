package dev.toolhost.core.spi;

import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolSet;

/**
 * A ready host is the host as an extension sees it once every extension has started: its one
 * dispatcher exists, and so do its tool sets per profile.
 */
public interface ReadyHost {

  /** The dispatcher every call on the host goes through. */
  ToolDispatcher dispatcher();

  /**
   * The host's tool set for the named profile.
   *
   * @throws IllegalArgumentException naming the unknown profile and the known ones
   */
  ToolSet toolSet(String profile);

  /** The service of that type an extension shares, if any. */
  <T> java.util.Optional<T> service(Class<T> type);
}
