package dev.toolhost.core.spi;

import dev.toolhost.core.CallRecorder;
import dev.toolhost.core.DispatchStage;
import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.ToolGuide;
import dev.toolhost.core.ToolGuides;
import dev.toolhost.core.ToolInterceptor;
import dev.toolhost.core.ToolRegistry;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The host context is what a starting extension sees of its host: the registry to put its tools in,
 * the guides, the dispatch chain's stages, the HTTP routes, the built-in profiles' rules, the
 * services extensions share, and the host's keeping of what the start opened. Its config it is
 * given beside the context ({@link HostExtension#start}).
 *
 * <p>Services are keyed by contract type: the working memory extension provides its {@code
 * WorkingMemory}, and an extension that declares it finds it there. Thread-confined: an extension
 * uses it only while its {@link HostExtension#start} runs.
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
   * Mounts a servlet at a path and everything below it, served behind the host's request guard by
   * an HTTP front, when the host has one.
   *
   * @throws IllegalArgumentException when the host or another extension already serves a path at or
   *     below the mount's, or the mount's path lies below another's
   */
  void mount(Mount mount);

  /** The config's {@code builtins:} switches, for the extensions whose tools have one. */
  Builtins builtins();

  /**
   * Grants the named tools to a restricted built-in profile ({@code subagent}, {@code scheduled},
   * {@code a2a_synthesis}) and so to every profile that extends it: the owning extension's
   * statement of which of its tools that role may have. A tool no extension grants enters none of
   * them; {@code main} has every tool.
   *
   * @throws IllegalArgumentException when no restricted built-in profile has that name
   */
  void allowTools(String profile, String... tools);

  /**
   * Takes the named tools from a built-in profile, {@code main} included, and so from every profile
   * that extends it, whatever grants them: a tool the owning extension keeps for profiles an
   * operator writes (long-term memory's deletions, say).
   *
   * @throws IllegalArgumentException when no built-in profile has that name
   */
  void denyTools(String profile, String... tools);

  /**
   * Grants the given tools to each restricted built-in profile named, as {@link #allowTools(String,
   * String...)} does.
   */
  default void allowTools(List<ExecutableTool> tools, String... profiles) {
    String[] names = tools.stream().map(ExecutableTool::name).toArray(String[]::new);
    for (String profile : profiles) {
      allowTools(profile, names);
    }
  }

  /**
   * A reading of the extension's section: its problems placed at the config (the file's reading
   * placed them at their lines already), the config file's directory, and the host's profile names.
   */
  SectionReading reading();

  /**
   * The secrets the host itself holds, by name (its bearer token, a bus password it was given), for
   * a scanner that redacts them by value wherever they appear. Never to be logged or shown.
   */
  Map<String, String> secrets();

  /**
   * Adds a secret this extension holds (a principal's bearer token, say) to the host's {@link
   * #secrets()}, for the extensions started after it that redact by value: such an extension
   * declares the type this one provides among what it {@linkplain HostExtension#uses uses}, so that
   * it starts after.
   */
  void secret(String name, String value);

  /**
   * Adds a recorder that the host's dispatcher tells of every call it answers, refused ones
   * included ({@link CallRecorder}): an audit journal, say.
   */
  void recorder(CallRecorder recorder);

  /** The environment the host reads its secrets from (tokens, keys): not always the process's. */
  Map<String, String> environment();

  /**
   * Shares a service with the extensions started after this one.
   *
   * @throws IllegalArgumentException when a service of that type is already shared, or the
   *     extension does not declare the type among what it {@link HostExtension#provides}
   */
  <T> void provide(Class<T> type, T service);

  /**
   * The service of that type the host or an extension started earlier shares, if any.
   *
   * @throws IllegalArgumentException when an extension provides the type but this one declares it
   *     neither among what it {@link HostExtension#requires} nor what it {@link HostExtension#uses}
   */
  <T> Optional<T> service(Class<T> type);

  /**
   * Gives the host a resource this start opened, to close after the extension's own {@link
   * HostExtension#close}, or at once when the start throws: in reverse order of giving, every time.
   *
   * @return the resource
   */
  <T extends AutoCloseable> T own(T resource);
}
