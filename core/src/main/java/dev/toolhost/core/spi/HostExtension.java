package dev.toolhost.core.spi;

import java.util.List;
import java.util.Optional;
import java.util.Set;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.JsonNodeFactory;

/**
 * A host extension is one capability of a host (working memory, the MCP bridge, the web tools): its
 * config section and the record it binds to, its tools and guides, its HTTP routes, the services it
 * shares and needs, and its lifecycle, in the module that owns the capability.
 *
 * <p>The host drives it in four steps, modelled on Helidon SE's {@code ServerFeature}: it names its
 * config section, gives that section's JSON Schema and reads a section the schema accepts into its
 * config {@code C} ({@link #name}, {@link #configSchema}, {@link #read}); {@link #start} opens its
 * resources and registers what it offers through the {@link HostContext}; {@link #ready} tells it
 * the host's dispatcher exists (for agents and gateways, which dispatch calls themselves); {@link
 * #close} releases what start opened. The config comes from the file's section or, for a host made
 * in code, from the host's builder; there is no second way in.
 *
 * <p>The start order is derived, never numbered: an extension that {@link #requires} or {@link
 * #uses} a contract (an interface in core or in the providing module, such as {@code
 * WorkingMemory}) starts after the one that {@link #provides} it, and a required contract nobody
 * provides stops the host before anything opens, naming both sides ({@link HostExtensions}).
 *
 * <p>Library users pass extensions to the host's builder; the command line finds them with {@link
 * java.util.ServiceLoader} (a {@code META-INF/services/dev.toolhost.core.spi.HostExtension} line).
 *
 * @param <C> the extension's config: the record its section is read into
 */
public interface HostExtension<C> extends AutoCloseable {

  /** The extension's name: the key of its config section, such as {@code memory}. */
  String name();

  /**
   * The contracts the extension shares through {@link HostContext#provide}: the host starts it
   * before every extension that requires or uses one, and refuses a {@code provide} of any other.
   */
  default Set<Class<?>> provides() {
    return Set.of();
  }

  /**
   * The contracts the extension cannot start without: their providers start first, and a host in
   * which no extension (and not the host itself) provides one does not start.
   */
  default Set<Class<?>> requires() {
    return Set.of();
  }

  /**
   * The contracts the extension uses when some extension provides them (working memory for large
   * results, say): their providers start first; none is no error. {@link HostContext#service}
   * answers only for contracts the extension requires or uses, and for the host's own services.
   */
  default Set<Class<?>> uses() {
    return Set.of();
  }

  /**
   * The JSON Schema of the extension's config section; any object by default. The host checks the
   * section against it before {@link #read} runs, reporting each violation at its line and column
   * ({@link ConfigSections#schema} makes one from the record the section binds to). A {@link
   * tools.jackson.databind.node.MissingNode} says the extension reads no section: the file may then
   * hold no key of its name.
   */
  default JsonNode configSchema() {
    return JsonNodeFactory.instance.objectNode().put("type", "object");
  }

  /**
   * Reads a section its schema accepts into the extension's config, reporting what the schema
   * cannot express (a URL's scheme, a duration, a profile that must exist) to the reading's
   * problems, placed by JSON pointers from the file's root, and returning null when it found any.
   * Opens nothing: {@code toolhost config check} runs it without starting a host.
   */
  C read(JsonNode section, SectionReading reading);

  /**
   * Opens the extension's resources and registers its tools, guides, routes and the services it
   * shares. It may throw: the host then closes what this start {@linkplain HostContext#own owned}
   * and every extension started before it, in reverse, and fails to start with this failure; {@link
   * #close} runs only after a start that returned.
   *
   * @param config the config the host's builder gave, else the file's section read by {@link
   *     #read}; empty when there is neither, which for most extensions means off
   */
  void start(HostContext host, Optional<C> config) throws Exception;

  /**
   * The subcommands the extension adds to the {@code toolhost} command line, such as the agents
   * extension's {@code chat}; none by default.
   */
  default List<HostCommand> commands() {
    return List.of();
  }

  /** Tells the extension the host is ready: its dispatcher exists. Does nothing by default. */
  default void ready(ReadyHost host) throws Exception {}

  /**
   * Releases what {@link #start} opened and did not give the host to own; called once, only after a
   * start that returned, before the host closes what the start owned.
   */
  @Override
  default void close() throws Exception {}
}
