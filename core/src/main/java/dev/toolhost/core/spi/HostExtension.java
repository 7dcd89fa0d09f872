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

  /**
   * Where the extension starts among the host's extensions: lower first, those of one order in the
   * order they were given; {@link #DEFAULT_ORDER} by default. The built-in extensions start with
   * secret scanning at 50 (so that every later one finds its redactor), then in steps of 100 from
   * 100 (working memory, service search, MCP, agents, tool services), so that one that needs
   * another's service picks an order after it.
   */
  default int order() {
    return DEFAULT_ORDER;
  }

  /** The order of an extension that does not say: after every built-in one. */
  int DEFAULT_ORDER = 1000;

  /**
   * The JSON Schema of the extension's config section; any object by default. The host checks the
   * section against it before {@link #check} runs, reporting each violation at its line and column
   * ({@link ConfigSections#schema} makes one from the record the section binds to). A {@link
   * tools.jackson.databind.node.MissingNode} says the extension reads no section: the file may then
   * hold no key of its name.
   */
  default JsonNode configSchema() {
    return JsonNodeFactory.instance.objectNode().put("type", "object");
  }

  /**
   * Binds and cross-checks the section, reporting what its schema cannot express (a URL's scheme, a
   * duration, a profile that must exist) to the reading's problems, placed by JSON pointers from
   * the file's root. Opens nothing: {@code toolhost config check} runs it without starting a host.
   * Runs only for a section present in the file that its schema accepts. Does nothing by default.
   */
  default void check(JsonNode section, SectionReading reading) {}

  /**
   * Opens the extension's resources and registers its tools, guides, interceptors, routes and the
   * services it shares. It may throw: the host then closes every extension started before it, in
   * reverse, and fails to start with this failure. What the start opened before it threw, it closes
   * itself: {@link #close} runs only after a start that returned.
   */
  void start(HostContext host) throws Exception;

  /** Tells the extension the host is ready: its dispatcher exists. Does nothing by default. */
  default void ready(ReadyHost host) throws Exception {}

  /** Releases what {@link #start} opened; called once, only after a start that returned. */
  @Override
  default void close() throws Exception {}
}
