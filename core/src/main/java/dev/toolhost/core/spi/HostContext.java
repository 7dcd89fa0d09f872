package dev.toolhost.core.spi;

import dev.toolhost.core.DispatchStage;
import dev.toolhost.core.ToolGuide;
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

  /** Adds an interceptor at a stage of the dispatch chain, after those already there. */
  void interceptor(DispatchStage stage, ToolInterceptor interceptor);

  /**
   * Adds an HTTP route, served behind the host's request guard (host, origin, token, content type
   * and size are checked before it runs).
   *
   * @throws IllegalArgumentException when the host already has a route of that method and path
   */
  void route(Route route);

  /** The extension's config section; an empty object when the config has none. */
  JsonNode config();

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
