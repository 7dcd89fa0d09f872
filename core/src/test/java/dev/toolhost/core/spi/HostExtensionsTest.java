package dev.toolhost.core.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

class HostExtensionsTest {

  private final List<String> events = new ArrayList<>();

  /** A contract one test extension provides and others need. */
  interface Index {}

  /** Another contract. */
  interface Memory {}

  /** A host whose contexts own what extensions give them and hold no section. */
  private static final class Bare implements HostExtensions.Host {
    @Override
    public HostContext context(HostExtension<?> extension, HostExtensions.Owned owned) {
      return (HostContext)
          java.lang.reflect.Proxy.newProxyInstance(
              HostContext.class.getClassLoader(),
              new Class<?>[] {HostContext.class},
              (proxy, method, args) -> {
                if (method.getName().equals("own")) {
                  return owned.add((AutoCloseable) args[0]);
                }
                throw new UnsupportedOperationException(method.getName());
              });
    }

    @Override
    public Optional<JsonNode> section(String name) {
      return Optional.empty();
    }
  }

  /** An extension that records what happens to it, declares the given contracts, and may fail. */
  private final class Recording implements HostExtension<Void> {
    private final String name;
    private final boolean failsToStart;
    private Set<Class<?>> provides = Set.of();
    private Set<Class<?>> requires = Set.of();
    private Set<Class<?>> uses = Set.of();

    Recording(String name, boolean failsToStart) {
      this.name = name;
      this.failsToStart = failsToStart;
    }

    Recording providing(Class<?>... contracts) {
      provides = Set.of(contracts);
      return this;
    }

    Recording requiring(Class<?>... contracts) {
      requires = Set.of(contracts);
      return this;
    }

    Recording using(Class<?>... contracts) {
      uses = Set.of(contracts);
      return this;
    }

    @Override
    public String name() {
      return name;
    }

    @Override
    public Set<Class<?>> provides() {
      return provides;
    }

    @Override
    public Set<Class<?>> requires() {
      return requires;
    }

    @Override
    public Set<Class<?>> uses() {
      return uses;
    }

    @Override
    public Void read(JsonNode section, SectionReading reading) {
      return null;
    }

    @Override
    public void start(HostContext host, Optional<Void> config) {
      host.own(() -> events.add("released what " + name + " owned"));
      if (failsToStart) {
        events.add("failed " + name);
        throw new IllegalStateException("the disk is full");
      }
      events.add("started " + name);
    }

    @Override
    public void ready(ReadyHost host) {
      events.add("ready " + name);
    }

    @Override
    public void close() {
      events.add("closed " + name);
    }
  }

  private Recording recording(String name) {
    return new Recording(name, false);
  }

  private static List<String> names(List<HostExtension<?>> extensions) {
    return extensions.stream().map(HostExtension::name).toList();
  }

  @Test
  void extensionsStartInOrderAndCloseInReverseEachBeforeWhatItOwned() {
    HostExtensions extensions =
        HostExtensions.of(List.of(recording("a"), recording("b"), recording("c")));

    extensions.start(new Bare());
    extensions.ready(null);
    extensions.close();
    extensions.close();

    assertThat(events)
        .containsExactly(
            "started a",
            "started b",
            "started c",
            "ready a",
            "ready b",
            "ready c",
            "closed c",
            "released what c owned",
            "closed b",
            "released what b owned",
            "closed a",
            "released what a owned");
  }

  @Test
  void whenTheThirdFailsToStartWhatItOwnedAndTheFirstTwoAreClosedInReverseAndItsFailureIsNamed() {
    HostExtensions extensions =
        HostExtensions.of(
            List.of(
                recording("first"),
                recording("second"),
                new Recording("third", true),
                recording("fourth")));

    assertThatThrownBy(() -> extensions.start(new Bare()))
        .isInstanceOf(HostExtensionException.class)
        .hasMessage("Host extension 'third' failed to start: the disk is full")
        .hasCauseInstanceOf(IllegalStateException.class);
    extensions.close();

    assertThat(events)
        .containsExactly(
            "started first",
            "started second",
            "failed third",
            "released what third owned",
            "closed second",
            "released what second owned",
            "closed first",
            "released what first owned");
  }

  @Test
  void twoExtensionsMayNotShareAName() {
    assertThatThrownBy(() -> HostExtensions.of(List.of(recording("web"), recording("web"))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'web'");
  }

  @Test
  void anExtensionStartsAfterTheProvidersOfWhatItRequiresOrUsesAndOtherwiseInTheOrderGiven() {
    List<HostExtension<?>> given =
        List.of(
            recording("agents").requiring(Index.class).using(Memory.class),
            recording("plain"),
            recording("search").providing(Index.class).using(Memory.class),
            recording("memory").providing(Memory.class));

    assertThat(names(HostExtensions.ordered(given, Set.of())))
        .containsExactly("plain", "memory", "search", "agents");
  }

  @Test
  void aContractUsedButProvidedByNoneIsNoErrorAndOneTheHostProvidesMeetsARequirement() {
    List<HostExtension<?>> given =
        List.of(recording("web").using(Memory.class), recording("agents").requiring(Index.class));

    assertThat(names(HostExtensions.ordered(given, Set.of(Index.class))))
        .containsExactly("web", "agents");
  }

  @Test
  void aRequirementNobodyProvidesIsAnErrorNamingTheExtensionAndTheContract() {
    List<HostExtension<?>> given = List.of(recording("agents").requiring(Index.class));

    assertThatThrownBy(() -> HostExtensions.ordered(given, Set.of()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith(
            "Host extension 'agents' requires Index, which no extension of this host provides");
  }

  @Test
  void twoProvidersOfOneContractAndACircleAreErrorsNamingTheExtensions() {
    List<HostExtension<?>> twice =
        List.of(recording("lucene").providing(Index.class), recording("pg").providing(Index.class));
    List<HostExtension<?>> circle =
        List.of(
            recording("a").providing(Index.class).requiring(Memory.class),
            recording("b").providing(Memory.class).using(Index.class));

    assertThatThrownBy(() -> HostExtensions.ordered(twice, Set.of()))
        .hasMessageStartingWith("Host extensions 'lucene' and 'pg' both provide Index");
    assertThatThrownBy(() -> HostExtensions.ordered(circle, Set.of()))
        .hasMessageStartingWith("Host extensions 'a', 'b' need each other's contracts in a circle");
  }
}
