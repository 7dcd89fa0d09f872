package dev.toolhost.core.spi;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.JsonNodeFactory;

/**
 * A host extension is one capability of a host (working memory, the MCP bridge, the web tools): its
 * config section, its tools and guides, its interceptors at a stage of the dispatch chain, its HTTP
 * routes and its lifecycle, in the module that owns the capability.
 *
 * <p>The host drives it in four steps, modelled on Helidon SE's {@code ServerFeature}: it names its
 * config section and gives that section's JSON Schema ({@link #name}, {@link #configSchema});
 * {@link #start} opens its resources and registers what it offers through the {@link HostContext};
 * {@link #ready} tells it the host's dispatcher exists (for agents and gateways, which dispatch
 * calls themselves); {@link #close} releases what start opened. The host starts extensions in the
 * order it was given them and closes the started ones in reverse, also when a later one fails to
 * start ({@link HostExtensions}): an extension never cleans up after another.
 *
 * <p>Library users pass extensions to the host's builder; the command line finds them with {@link
 * java.util.ServiceLoader} (a {@code META-INF/services/dev.toolhost.core.spi.HostExtension} line).
 * An extension finds another's services through the context ({@link HostContext#service}), never
 * through the server module.
 */
public interface HostExtension extends AutoCloseable {

  /** The extension's name: the key of its config section, such as {@code memory}. */
  String name();

  /** The JSON Schema of the extension's config section; any object by default. */
  default JsonNode configSchema() {
    return JsonNodeFactory.instance.objectNode().put("type", "object");
  }

  /**
   * Opens the extension's resources and registers its tools, guides, interceptors, routes and the
   * services it shares. It may throw: the host then closes every extension started before it, in
   * reverse, and fails to start with this failure.
   */
  void start(HostContext host) throws Exception;

  /** Tells the extension the host is ready: its dispatcher exists. Does nothing by default. */
  default void ready(ReadyHost host) throws Exception {}

  /** Releases what {@link #start} opened; called once, only after a start that returned. */
  @Override
  default void close() throws Exception {}
}
