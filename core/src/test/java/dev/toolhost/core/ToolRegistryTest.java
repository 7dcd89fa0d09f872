package dev.toolhost.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

class ToolRegistryTest {

  private static final ToolExecutor OK = (call, arguments) -> ToolResult.success("ok");

  private final ToolRegistry registry = new ToolRegistry();

  @Test
  void duplicateNameIsRefused() {
    registry.register(Schemas.spec("search", "builtin:web"), OK);

    assertThatThrownBy(() -> registry.register(Schemas.spec("search", "mcp:other"), OK))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("Tool 'search' is already registered.");
    assertThat(registry.find("search").orElseThrow().spec().source()).isEqualTo("builtin:web");
  }

  @Test
  void registerIfAbsentKeepsTheFirstToolAndSaysSo() {
    ExecutableTool first = ExecutableTool.of(Schemas.spec("search", "remote:a"), OK);
    ExecutableTool second = ExecutableTool.of(Schemas.spec("search", "remote:a"), OK);

    assertThat(registry.registerIfAbsent(first)).isTrue();
    assertThat(registry.registerIfAbsent(second)).isFalse();
    assertThat(registry.find("search")).containsSame(first);
  }

  @Test
  void parametersSchemaThatIsNotValidJsonSchemaIsRefusedNamingTheTool() {
    ToolSpec typo =
        new ToolSpec(
            "typo",
            "Has a typo in a type.",
            Schemas.parse(
                "{\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"strnig\"}}}"),
            "builtin:test");

    assertThatThrownBy(() -> registry.register(typo, OK))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("Tool 'typo' has an invalid parameters schema")
        .hasMessageContaining("$.properties.a.type");
    assertThat(registry.find("typo")).isEmpty();
  }

  @Test
  void parametersSchemaThatIsNotAnObjectSchemaIsRefused() {
    ToolSpec array =
        new ToolSpec("array", "Takes an array.", Schemas.parse("{\"type\": \"array\"}"), "x:y");

    assertThatThrownBy(() -> registry.register(array, OK))
        .hasMessage(
            "Tool 'array' has an invalid parameters schema: its \"type\" must be \"object\".");
  }

  @Test
  void parametersSchemaReferringToARemoteDocumentIsRefusedWithoutFetchingIt() throws Exception {
    try (java.net.ServerSocket server = new java.net.ServerSocket(0)) {
      server.setSoTimeout(1);
      ToolSpec remote =
          new ToolSpec(
              "remote_ref",
              "Refers to a schema elsewhere.",
              Schemas.parse(
                  "{\"type\": \"object\", \"properties\": {\"a\": {\"$ref\":"
                      + " \"http://127.0.0.1:"
                      + server.getLocalPort()
                      + "/evil.json\"}}}"),
              "mcp:untrusted");

      assertThatThrownBy(() -> registry.register(remote, OK))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageStartingWith("Tool 'remote_ref' has an invalid parameters schema");
      assertThatThrownBy(server::accept).isInstanceOf(java.net.SocketTimeoutException.class);
    }
  }

  @Test
  void unregisterSaysWhetherItRemovedSomething() {
    registry.register(Schemas.spec("search", "builtin:web"), OK);

    assertThat(registry.unregister("search")).isTrue();
    assertThat(registry.unregister("search")).isFalse();
    assertThat(registry.find("search")).isEmpty();
  }

  @Test
  void listingIsASnapshotSortedByName() {
    registry.register(Schemas.spec("zeta", "a:b"), OK);
    registry.register(Schemas.spec("alpha", "a:b"), OK);
    List<ToolSpec> before = registry.specs();

    registry.register(Schemas.spec("mid", "a:b"), OK);

    assertThat(before).extracting(ToolSpec::name).containsExactly("alpha", "zeta");
    assertThat(registry.specs()).extracting(ToolSpec::name).containsExactly("alpha", "mid", "zeta");
  }

  @Test
  void listenersHearEveryChange() {
    List<String> heard = RegistryChanges.withoutReplacements(registry);

    registry.register(Schemas.spec("a", "x:y"), OK);
    registry.register(Schemas.spec("b", "x:y"), OK);
    registry.unregister("a");
    registry.unregister("missing");

    assertThat(heard).containsExactly("+a", "+b", "-a");
  }

  @Test
  void replaceSwapsTheToolInOneStepAndListenersHearOneChange() {
    ExecutableTool first = registry.register(Schemas.spec("search", "mcp:web"), OK);
    ExecutableTool second =
        ExecutableTool.of(
            Schemas.spec("search", "mcp:web"), (call, arguments) -> ToolResult.success("new"));
    List<String> heard = RegistryChanges.of(registry);

    assertThat(registry.replace(first, second)).isTrue();

    assertThat(registry.find("search")).containsSame(second);
    assertThat(registry.tools()).containsExactly(second);
    assertThat(heard).containsExactly("~search");
  }

  @Test
  void aListenerThatKnowsNothingOfReplacingHearsARemovalThenARegistration() {
    ExecutableTool first = registry.register(Schemas.spec("search", "mcp:web"), OK);
    List<String> heard = RegistryChanges.withoutReplacements(registry);

    registry.replace(first, ExecutableTool.of(Schemas.spec("search", "mcp:web"), OK));

    assertThat(heard).containsExactly("-search", "+search");
  }

  @Test
  void replaceChangesNothingWhenTheExpectedToolIsNoLongerRegistered() {
    ExecutableTool first = registry.register(Schemas.spec("search", "mcp:web"), OK);
    registry.unregister("search");
    ExecutableTool other = registry.register(Schemas.spec("search", "builtin:web"), OK);

    boolean replaced =
        registry.replace(first, ExecutableTool.of(Schemas.spec("search", "mcp:web"), OK));

    assertThat(replaced).isFalse();
    assertThat(registry.find("search")).containsSame(other);
    assertThat(registry.replace(first, first)).isFalse();
  }

  @Test
  void replaceRefusesAToolOfAnotherName() {
    ExecutableTool first = registry.register(Schemas.spec("search", "mcp:web"), OK);

    assertThatThrownBy(
            () -> registry.replace(first, ExecutableTool.of(Schemas.spec("find", "mcp:web"), OK)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "Tool 'search' cannot be replaced by tool 'find': a replacement keeps the name.");
    assertThat(registry.find("search")).containsSame(first);
  }

  @Test
  @Timeout(30)
  void aToolBeingReplacedOverAndOverIsAlwaysFound() throws Exception {
    ExecutableTool current = registry.register(Schemas.spec("flaky", "mcp:web"), OK);
    AtomicBoolean done = new AtomicBoolean();
    AtomicInteger missed = new AtomicInteger();
    AtomicInteger looks = new AtomicInteger();
    // Platform threads: readers that spin would starve a virtual-thread replacer of carriers.
    List<Thread> readers = new ArrayList<>();
    for (int r = 0; r < 2; r++) {
      readers.add(
          Thread.ofPlatform()
              .start(
                  () -> {
                    while (!done.get()) {
                      looks.incrementAndGet();
                      if (registry.find("flaky").isEmpty()
                          || registry.tools().stream().noneMatch(t -> t.name().equals("flaky"))) {
                        missed.incrementAndGet();
                      }
                    }
                  }));
    }
    try {
      for (int i = 0; i < 20_000; i++) {
        ExecutableTool next = ExecutableTool.of(Schemas.spec("flaky", "mcp:web"), OK);
        assertThat(registry.replace(current, next)).isTrue();
        current = next;
      }
    } finally {
      done.set(true);
      for (Thread reader : readers) {
        reader.join();
      }
    }

    assertThat(looks.get()).isPositive();
    assertThat(missed.get()).isZero();
    assertThat(registry.find("flaky")).containsSame(current);
  }

  @Test
  void failingListenerDoesNotUndoTheChange() {
    registry.addListener(
        new ToolRegistry.Listener() {
          @Override
          public void registered(ToolSpec spec) {
            throw new IllegalStateException("listener bug");
          }
        });

    registry.register(Schemas.spec("a", "x:y"), OK);

    assertThat(registry.find("a")).isPresent();
  }

  @Test
  @Timeout(30)
  void concurrentRegistrationsAndRemovalsKeepTheRegistryConsistent() throws Exception {
    int threads = 16;
    int perThread = 200;
    CountDownLatch start = new CountDownLatch(1);
    List<String> events = RegistryChanges.withoutReplacements(registry);
    try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
      List<Future<?>> futures = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int thread = t;
        futures.add(
            pool.submit(
                () -> {
                  start.await();
                  for (int i = 0; i < perThread; i++) {
                    String name = "tool-" + thread + "-" + i;
                    registry.register(Schemas.spec(name, "x:y"), OK);
                    // Every thread also fights over one shared name.
                    try {
                      registry.register(Schemas.spec("shared", "x:y"), OK);
                    } catch (IllegalArgumentException duplicate) {
                      registry.unregister("shared");
                    }
                    if (i % 2 == 0) {
                      assertThat(registry.unregister(name)).isTrue();
                    }
                    assertThat(registry.specs())
                        .isSortedAccordingTo(java.util.Comparator.comparing(ToolSpec::name));
                  }
                  return null;
                }));
      }
      start.countDown();
      for (Future<?> future : futures) {
        future.get(30, TimeUnit.SECONDS);
      }
    }

    List<String> names = registry.specs().stream().map(ToolSpec::name).toList();
    assertThat(names.stream().filter(name -> name.startsWith("tool-")))
        .hasSize(threads * perThread / 2)
        .allMatch(name -> Integer.parseInt(name.substring(name.lastIndexOf('-') + 1)) % 2 == 1);
    long sharedAdds = events.stream().filter("+shared"::equals).count();
    long sharedRemoves = events.stream().filter("-shared"::equals).count();
    assertThat(sharedAdds - sharedRemoves).isEqualTo(names.contains("shared") ? 1 : 0);
  }
}
