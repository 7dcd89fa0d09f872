package dev.toolhost.core.spi;

import dev.toolhost.core.DispatchStage;
import dev.toolhost.core.ToolGuide;
import dev.toolhost.core.ToolGuides;
import dev.toolhost.core.ToolInterceptor;
import dev.toolhost.core.ToolRegistry;
import java.util.Map;
import java.util.Optional;
import tools.jackson.databind.JsonNode;

/**
 * The host context is what a starting extension sees of its host: the registry to put its tools in,
 * the guides, the dispatch chain's stages, the HTTP routes, its own config section, and the
 * services other extensions share.
 *
 * <p>Services are keyed by type: the working memory extension provides its {@code WorkingMemory},
 * and an extension started after it finds it there. Thread-confined: an extension uses it only
 * while its {@link HostExtension#start} runs.
 */
public interface HostContext {

  /** The registry of every tool the host can run. */
  ToolRegistry registry();

  /** Publishes a guide through the host's guide tools; ignored when the host serves no guides. */
  void guide(ToolGuide guide);

  /**
   * The host's guides, when it serves them: for an extension that adds {@link
   * dev.toolhost.core.SavedGuides} (skills) or must know which names the published guides hold.
   */
  Optional<ToolGuides> guides();

  /** Adds an interceptor at a stage of the dispatch chain, after those already there. */
  void interceptor(DispatchStage stage, ToolInterceptor interceptor);

  /**
   * Adds an HTTP route, served behind the host's request guard (host, origin, token, content type
   * and size are checked before it runs).
   *
   * @throws IllegalArgumentException when the host already has a route of that method and path
   */
  void route(Route route);

  /**
   * Whether the config's {@code builtins:} section leaves the named built-in on ({@code guides},
   * {@code memory}, {@code search}); true for any other name.
   */
  boolean builtin(String name);

  /**
   * Takes the named tools from a built-in profile ({@code subagent}, {@code scheduled}, ...) and so
   * from every profile that extends it: the rule of the extension that owns the tools, such as "a
   * subagent may not register MCP servers".
   *
   * @throws IllegalArgumentException when no built-in profile has that name
   */
  void denyTools(String profile, String... tools);

  /** Whether the config holds the extension's section (one with no value counts as absent). */
  boolean configured();

  /** The extension's config section; an empty object when the config has none. */
  JsonNode config();

  /**
   * A reading of the extension's section for {@link ConfigSections#read}: its problems placed at
   * the config (the file's reading placed them at their lines already), the config file's
   * directory, and the host's profile names.
   */
  SectionReading reading();

  /**
   * The secrets the host itself holds, by name (its bearer token, a bus password it was given), for
   * a scanner that redacts them by value wherever they appear. Never to be logged or shown.
   */
  Map<String, String> secrets();

  /** The environment the host reads its secrets from (tokens, keys): not always the process's. */
  Map<String, String> environment();

  /**
   * Shares a service with the extensions started after this one.
   *
   * @throws IllegalArgumentException when a service of that type is already shared
   */
  <T> void provide(Class<T> type, T service);

  /** The service of that type an extension started earlier shares, if any. */
  <T> Optional<T> service(Class<T> type);
}
