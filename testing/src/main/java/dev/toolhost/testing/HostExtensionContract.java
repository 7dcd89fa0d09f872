package dev.toolhost.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.ToolProfile;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.spi.ConfigException;
import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.core.spi.HostExtensionException;
import dev.toolhost.core.spi.Mount;
import dev.toolhost.core.spi.Route;
import dev.toolhost.host.HostConfig;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The host extension contract is what every host extension must show, written once and subclassed
 * in each extension's module: off until configured (or on with exactly the tools it says), a
 * misspelt key in its section refused at its line and column, a section read without anything
 * opened, what it opened closed and stopped when an extension after it fails to start, a host that
 * closes twice without harm, its routes refused on a path the host or another extension holds, and
 * the profile rules it declares applied to the built-in profiles and those extending them.
 *
 * <p>A subclass gives a fresh extension ({@link #extension}), a valid section ({@link
 * #validSection}), a misspelt one ({@link #misspelling}), and says what the extension does: its
 * tools with and without a section, its routes, its profile rules. Where a property does not apply
 * the subclass says so with an empty set, list or map, which the contract checks as it checks any
 * other answer: an extension said to add no route must add none. Extensions it needs beside it (the
 * web extension for the browser, say) come from {@link #companions} with their sections from {@link
 * #companionSections}.
 *
 * <p>"Nothing left running" means no thread alive that was not before and is either a platform
 * thread that is not a daemon or one named {@code toolhost-*}, and no child process of this JVM
 * that was not there before; the contract waits a few seconds for them to end.
 */
@Timeout(180)
public abstract class HostExtensionContract<C> {

  /** How long what an extension opened may take to end once closed. */
  private static final Duration SETTLING = Duration.ofSeconds(15);

  /** The name of the extension that fails after the one under test. */
  private static final String FAILING = "contract_failing";

  /**
   * A directory of this test's own, for the sections that name files (a store, a workspace); the
   * config file sits in its {@code config} subdirectory, apart from them.
   */
  @TempDir protected Path directory;

  /**
   * A section with one misspelt key, and where that key sits.
   *
   * @param section the lines under the section key, as {@link #validSection} gives them
   * @param line the key's line in {@code section}, from 1
   * @param column the key's column in {@code section}, from 1
   * @param key the misspelt key as written
   */
  public record Misspelling(String section, int line, int column, String key) {}

  /** A fresh instance of the extension under test. */
  protected abstract HostExtension<C> extension();

  /**
   * A valid section: the lines under the section key, not indented (the contract indents them);
   * blank for an empty section, and empty for an extension that reads no section (whose key the
   * file may then not hold).
   */
  protected abstract Optional<String> validSection();

  /**
   * A section with a misspelt key, and where the key sits in it; empty exactly when the extension
   * reads no section.
   */
  protected abstract Optional<Misspelling> misspelling();

  /** The tools the extension registers with {@link #validSection}; may be empty. */
  protected abstract Set<String> configuredTools();

  /**
   * The tools the extension registers when the file has no section for it: none by default, as for
   * an extension that is off until configured. Held exactly, as the others below are: an extension
   * that does more than its test says fails the contract.
   */
  protected Set<String> toolsWithoutSection() {
    return Set.of();
  }

  /**
   * The routes the extension adds with {@link #validSection}, as {@code METHOD path} (a templated
   * path as the extension writes it); none by default.
   */
  protected List<String> routes() {
    return List.of();
  }

  /**
   * The paths at which the extension mounts a servlet with {@link #validSection}; none by default.
   */
  protected List<String> mounts() {
    return List.of();
  }

  /**
   * The tools the extension grants each restricted built-in profile ({@code subagent}, {@code
   * scheduled}, {@code a2a_synthesis}) with {@link #validSection}, by profile; none by default.
   * Held exactly: a tool it registers enters a restricted profile only by its grant.
   */
  protected Map<String, Set<String>> grantedTools() {
    return Map.of();
  }

  /**
   * The tools it registers that {@code main} does not show, kept for the operator's own profiles;
   * none by default.
   */
  protected Set<String> deniedInMain() {
    return Set.of();
  }

  /** The extensions it needs beside it, fresh; none by default. */
  protected List<HostExtension<?>> companions() {
    return List.of();
  }

  /**
   * The companions' sections, as whole lines of the file (their keys included); none by default.
   */
  protected String companionSections() {
    return "";
  }

  /** The environment the host reads secrets from; empty by default. */
  protected Map<String, String> environment() {
    return Map.of();
  }

  /** Services the host shares as if an extension provided them (a message bus); none by default. */
  protected Map<Class<?>, Object> services() {
    return Map.of();
  }

  @Test
  void withoutItsSectionItRegistersOnlyTheToolsItSays() {
    assertThat(toolsOf(companionSections())).isEqualTo(new TreeSet<>(toolsWithoutSection()));
  }

  @Test
  void withItsSectionItRegistersTheToolsItSays() {
    assertThat(toolsOf(file(validSection()))).isEqualTo(new TreeSet<>(configuredTools()));
  }

  @Test
  void aMisspeltKeyIsRefusedAtItsLineAndColumn() {
    assertThat(misspelling().isPresent())
        .as("a misspelling is given exactly when a section is read")
        .isEqualTo(validSection().isPresent());
    if (misspelling().isEmpty()) {
      // An extension that reads no section: its name is no key of the file.
      assertThatThrownBy(
              () -> TestHost.config(extension().name() + ": {}\n", all(), configDirectory()))
          .isInstanceOf(ConfigException.class)
          .hasMessageContaining(
              TestHost.FILE_NAME + " line 1, column 1: unknown key '" + extension().name() + "'");
      return;
    }
    Misspelling misspelling = misspelling().orElseThrow();
    // The section starts on the file's second line, indented by two.
    String expected =
        TestHost.FILE_NAME
            + " line "
            + (misspelling.line() + 1)
            + ", column "
            + (misspelling.column() + 2)
            + ": unknown key '"
            + misspelling.key()
            + "'";

    assertThatThrownBy(
            () ->
                HostConfig.load(
                    write(file(Optional.of(misspelling.section()))), all(List.of(extension()))))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining(expected.replace(TestHost.FILE_NAME, ""))
        .hasMessageContaining("unknown key '" + misspelling.key() + "'");
    assertThatThrownBy(
            () ->
                TestHost.config(file(Optional.of(misspelling.section())), all(), configDirectory()))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining(expected);
  }

  @Test
  void readingAValidSectionOpensNothing() {
    List<String> reads = new CopyOnWriteArrayList<>();
    // Once to load the classes reading needs (a jar opened stays open), then to measure.
    TestHost.config(
        file(validSection()),
        all(List.of(new WatchedExtension<>(extension(), reads))),
        configDirectory());
    Openings before = Openings.now();
    long descriptorsBefore = descriptors();

    HostConfig config =
        TestHost.config(
            file(validSection()),
            all(List.of(new WatchedExtension<>(extension(), reads))),
            configDirectory());

    if (validSection().isPresent()) {
      String read = "read " + extension().name();
      assertThat(reads).containsExactly(read, read);
      assertThat(config.sections()).containsKey(extension().name());
    } else {
      assertThat(reads).isEmpty();
    }
    assertThat(before.openedSince()).isEmpty();
    assertThat(descriptors()).isLessThanOrEqualTo(descriptorsBefore);
  }

  @Test
  void whenAnExtensionAfterItFailsToStartWhatItOpenedIsClosed() {
    Openings before = Openings.now();
    List<String> steps = new CopyOnWriteArrayList<>();
    AtomicReference<List<String>> openAtFailure = new AtomicReference<>(List.of());
    List<HostExtension<?>> extensions = all(List.of(new WatchedExtension<>(extension(), steps)));
    extensions.add(
        new StartingExtension(
            FAILING,
            host -> {
              openAtFailure.set(before.openedSince());
              throw new IllegalStateException("the contract's extension fails here");
            }));

    assertThatThrownBy(() -> host(file(validSection()), extensions, path -> false))
        .isInstanceOf(HostExtensionException.class)
        .hasMessageContaining("'" + FAILING + "' failed to start");

    // It had started before the failure closed it.
    assertThat(steps).contains("started " + extension().name());
    awaitNothingOpenedSince(before, "after a failed start; open at the failure: " + openAtFailure);
  }

  @Test
  void closingTheHostTwiceIsSafeAndLeavesNothingRunning() {
    Openings before = Openings.now();
    TestHost host = host(file(validSection()), all(), path -> false);
    assertThat(host.runtime().registry().tools())
        .extracting(ExecutableTool::name)
        .containsAll(configuredTools());

    host.close();
    assertThatCode(host::close).doesNotThrowAnyException();

    awaitNothingOpenedSince(before, "after the host closed twice");
  }

  @Test
  void itAddsTheRoutesItSays() {
    List<String> companionRoutes;
    try (TestHost host = host(companionSections(), companions(), path -> false)) {
      companionRoutes = host.runtime().routeNames();
    }
    try (TestHost host = host(file(validSection()), all(), path -> false)) {
      assertThat(host.runtime().routeNames())
          .filteredOn(route -> !companionRoutes.contains(route))
          .containsExactlyInAnyOrderElementsOf(routes());
    }
  }

  @Test
  void itMountsTheServletsItSays() {
    List<String> companionMounts;
    try (TestHost host = host(companionSections(), companions(), path -> false)) {
      companionMounts = host.runtime().mounts().stream().map(Mount::path).toList();
    }
    try (TestHost host = host(file(validSection()), all(), path -> false)) {
      assertThat(host.runtime().mounts().stream().map(Mount::path))
          .filteredOn(path -> !companionMounts.contains(path))
          .containsExactlyInAnyOrderElementsOf(mounts());
    }
  }

  @Test
  void aRouteItAddsCannotTakeAPathTheHostReserves() {
    for (String route : routes()) {
      String path = route.substring(route.indexOf(' ') + 1);
      Openings before = Openings.now();

      assertThatThrownBy(() -> host(file(validSection()), all(), path::equals))
          .as("a host that serves %s itself", path)
          .isInstanceOf(HostExtensionException.class)
          .hasMessageContaining("'" + extension().name() + "' adds the route " + route);

      awaitNothingOpenedSince(before, "after its route was refused");
    }
  }

  @Test
  void aRouteItAddsCannotTakeOneAnotherExtensionAdded() {
    for (String route : routes()) {
      String method = route.substring(0, route.indexOf(' '));
      String path = route.substring(route.indexOf(' ') + 1);
      List<HostExtension<?>> extensions = new ArrayList<>(companions());
      Route taken = new Route(method, path, request -> Route.Answer.json("{}"));
      extensions.add(new StartingExtension("contract_squatter", host -> host.route(taken)));
      extensions.add(extension());

      assertThatThrownBy(() -> host(file(validSection()), extensions, p -> false))
          .as("a host where another extension serves %s", route)
          .isInstanceOf(HostExtensionException.class)
          .hasMessageContaining("'" + extension().name() + "' adds the route " + route);
    }
  }

  @Test
  void restrictedProfilesShowExactlyTheToolsItGrantsAsDoThoseExtendingThem() {
    StringBuilder profiles = new StringBuilder("profiles:\n");
    for (ToolProfile builtIn : ToolProfiles.BUILT_IN) {
      profiles.append("  contract_").append(builtIn.name()).append(":\n");
      profiles.append("    extends: ").append(builtIn.name()).append('\n');
    }
    Set<String> own = toolsOf(file(validSection()));
    Map<String, Set<String>> granted = grantedTools();
    assertThat(granted.keySet())
        .as("profiles it grants tools to")
        .isSubsetOf(ToolProfiles.RESTRICTED.stream().map(ToolProfile::name).toList());
    try (TestHost host = host(file(validSection()) + profiles, all(), path -> false)) {
      for (ToolProfile restricted : ToolProfiles.RESTRICTED) {
        Set<String> expected = new TreeSet<>(granted.getOrDefault(restricted.name(), Set.of()));
        assertThat(mine(host, restricted.name(), own))
            .as("its tools '%s' shows", restricted.name())
            .isEqualTo(expected);
        assertThat(mine(host, "contract_" + restricted.name(), own))
            .as("its tools a profile extending '%s' shows", restricted.name())
            .isEqualTo(expected);
      }
      Set<String> hidden = new TreeSet<>(own);
      hidden.removeAll(host.runtime().toolSet("main").names());
      assertThat(hidden)
          .as("its tools main does not show")
          .isEqualTo(new TreeSet<>(deniedInMain()));
    }
  }

  /** Of the extension's own tools, those the profile shows. */
  private static Set<String> mine(TestHost host, String profile, Set<String> own) {
    Set<String> shown = new TreeSet<>(host.runtime().toolSet(profile).names());
    shown.retainAll(own);
    return shown;
  }

  /** The extension's tools under that config: the host's, less those of its companions alone. */
  private Set<String> toolsOf(String yaml) {
    Set<String> companionTools;
    try (TestHost host = host(companionSections(), companions(), path -> false)) {
      companionTools = names(host);
    }
    try (TestHost host = host(yaml, all(), path -> false)) {
      Set<String> tools = new TreeSet<>(names(host));
      tools.removeAll(companionTools);
      return tools;
    }
  }

  private static Set<String> names(TestHost host) {
    return host.runtime().registry().tools().stream()
        .map(ExecutableTool::name)
        .collect(Collectors.toCollection(TreeSet::new));
  }

  private TestHost host(
      String yaml, List<HostExtension<?>> extensions, Predicate<String> reserved) {
    TestHost.Builder builder =
        TestHost.builder()
            .config(yaml)
            .directory(configDirectory())
            .environment(environment())
            .extensions(extensions)
            .reserved(reserved);
    services().forEach((type, service) -> share(builder, type, service));
    return builder.start();
  }

  @SuppressWarnings("unchecked") // Each service is given with its own type.
  private static <T> void share(TestHost.Builder builder, Class<T> type, Object service) {
    builder.service(type, (T) service);
  }

  /** A fresh extension with fresh companions. */
  private List<HostExtension<?>> all() {
    return all(List.of(extension()));
  }

  private List<HostExtension<?>> all(List<HostExtension<?>> extensions) {
    List<HostExtension<?>> all = new ArrayList<>(companions());
    all.addAll(extensions);
    return all;
  }

  /** The file: the extension's section first (its key on line 1), then its companions'. */
  private String file(Optional<String> given) {
    if (given.isEmpty()) {
      return companionSections();
    }
    String section = given.get();
    String name = extension().name();
    if (section.isBlank()) {
      return name + ": {}\n" + companionSections();
    }
    String indented =
        section
            .lines()
            .map(line -> line.isBlank() ? "" : "  " + line)
            .collect(Collectors.joining("\n"));
    return name + ":\n" + indented + "\n" + companionSections();
  }

  private Path write(String yaml) {
    try {
      return Files.writeString(configDirectory().resolve(TestHost.FILE_NAME), yaml);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Where the config file is, and what its relative paths are resolved against. */
  private Path configDirectory() {
    try {
      return Files.createDirectories(directory.resolve("config"));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static void awaitNothingOpenedSince(Openings before, String when) {
    try {
      await().pollInSameThread().atMost(SETTLING).until(() -> before.openedSince().isEmpty());
    } catch (org.awaitility.core.ConditionTimeoutException e) {
      assertThat(before.openedSince()).as("left running " + when).isEmpty();
    }
  }

  /** How many file descriptors this process has open; -1 where /proc is not there. */
  private static long descriptors() {
    try (Stream<Path> open = Files.list(Path.of("/proc/self/fd"))) {
      return open.count();
    } catch (IOException e) {
      return -1;
    }
  }

  /** The threads and child processes alive at one moment, to see what was opened since. */
  private record Openings(Set<Thread> threads, Set<Long> children, Set<String> listening) {

    static Openings now() {
      return new Openings(
          new HashSet<>(Thread.getAllStackTraces().keySet()),
          ProcessHandle.current()
              .descendants()
              .filter(ProcessHandle::isAlive)
              .map(ProcessHandle::pid)
              .collect(Collectors.toSet()),
          ProcessSockets.listening());
    }

    /**
     * What is alive now and was not then: non-daemon or toolhost threads (platform ones: the JVM
     * lists no virtual thread), child processes, and listening sockets, which catch a server on
     * virtual threads (a proxy, a callback listener).
     */
    List<String> openedSince() {
      List<String> opened = new ArrayList<>();
      Thread.getAllStackTraces().keySet().stream()
          .filter(thread -> thread.isAlive() && !threads.contains(thread))
          .filter(thread -> !thread.isDaemon() || thread.getName().startsWith("toolhost-"))
          .forEach(thread -> opened.add("thread " + thread.getName()));
      ProcessHandle.current()
          .descendants()
          .filter(process -> process.isAlive() && !children.contains(process.pid()))
          .forEach(
              process ->
                  opened.add(
                      "process "
                          + process.pid()
                          + " "
                          + process.info().commandLine().orElse("(command unknown)")));
      ProcessSockets.listening().stream()
          .filter(socket -> !listening.contains(socket))
          .forEach(socket -> opened.add("listening socket " + socket));
      return opened;
    }
  }
}
