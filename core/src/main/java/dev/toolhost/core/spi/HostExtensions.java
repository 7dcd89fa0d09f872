package dev.toolhost.core.spi;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.JsonNode;

/**
 * Host extensions are the extensions of one host in their start order, and the one place their
 * lifecycle is run: each is given its config and started in order, each started one is told when
 * the host is ready, and the started ones are closed in reverse order, each with what it gave the
 * host to {@linkplain HostContext#own own}, also when a later one fails to start. No other code
 * closes an extension or its resources, so no capability needs cleanup written by hand.
 *
 * <p>The order is derived from what the extensions {@linkplain HostExtension#provides provide},
 * {@linkplain HostExtension#requires require} and {@linkplain HostExtension#uses use} ({@link
 * #ordered}): providers first, and otherwise the order given.
 *
 * <p>Not thread-safe: the host starts and closes them from one thread. {@link #close()} may be
 * called more than once.
 */
public final class HostExtensions implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(HostExtensions.class);

  private final List<HostExtension<?>> extensions;
  private final Map<String, Object> given;
  private final Deque<Started> started = new ArrayDeque<>();

  /** The host as the extensions' lifecycle needs it: a context per extension and the sections. */
  public interface Host {

    /** The context the extension starts with, whose {@link HostContext#own} adds to the given. */
    HostContext context(HostExtension<?> extension, Owned owned);

    /** The config file's section of that name, if the file holds one. */
    Optional<JsonNode> section(String name);
  }

  /**
   * Owned resources are what one extension's start gave the host to close: closed in reverse, after
   * the extension's own {@link HostExtension#close}, or at once when its start throws.
   */
  public static final class Owned {
    private final Deque<AutoCloseable> resources = new ArrayDeque<>();

    /** Takes the resource to close with its extension; returns it. */
    public <T extends AutoCloseable> T add(T resource) {
      resources.push(Objects.requireNonNull(resource, "resource"));
      return resource;
    }

    private void close(String extension, Exception cause) {
      while (!resources.isEmpty()) {
        try {
          resources.pop().close();
        } catch (Exception e) {
          if (cause != null) {
            cause.addSuppressed(e);
          }
          LOG.warn("A resource of host extension '{}' failed to close", extension, e);
        }
      }
    }
  }

  private record Started(HostExtension<?> extension, Owned owned) {}

  private HostExtensions(List<HostExtension<?>> extensions, Map<String, Object> given) {
    this.extensions = List.copyOf(extensions);
    this.given = Map.copyOf(given);
    Set<String> names = new HashSet<>();
    for (HostExtension<?> extension : this.extensions) {
      if (!names.add(Objects.requireNonNull(extension.name(), "name"))) {
        throw new IllegalArgumentException(
            "Two host extensions are named '" + extension.name() + "': a name is a config key.");
      }
    }
  }

  /**
   * The extensions, in the order given, which is the order they start in.
   *
   * @throws IllegalArgumentException when two share a name
   */
  public static HostExtensions of(List<? extends HostExtension<?>> extensions) {
    return new HostExtensions(List.copyOf(extensions), Map.of());
  }

  /**
   * The extensions, in the order given, with the configs code gave some of them by name: those
   * start with it whatever the file says. The host's builder alone makes these pairs, each typed by
   * the extension it names.
   *
   * @throws IllegalArgumentException when two share a name
   */
  public static HostExtensions of(
      List<? extends HostExtension<?>> extensions, Map<String, Object> given) {
    return new HostExtensions(List.copyOf(extensions), given);
  }

  /**
   * The given extensions in start order: an extension after every one that provides a contract it
   * requires or uses, and otherwise in the order given.
   *
   * @param hostServices the contracts the host itself provides (its telemetry, a bus it was given)
   * @throws IllegalArgumentException when a required contract has no provider, two extensions
   *     provide one contract, or requirements run in a circle, naming the extensions concerned
   */
  public static List<HostExtension<?>> ordered(
      List<? extends HostExtension<?>> extensions, Set<Class<?>> hostServices) {
    Map<Class<?>, HostExtension<?>> providers = new HashMap<>();
    for (HostExtension<?> extension : extensions) {
      for (Class<?> contract : extension.provides()) {
        HostExtension<?> other = providers.putIfAbsent(contract, extension);
        if (other != null) {
          throw new IllegalArgumentException(
              "Host extensions '"
                  + other.name()
                  + "' and '"
                  + extension.name()
                  + "' both provide "
                  + contract.getSimpleName()
                  + ": one contract has one provider.");
        }
      }
    }
    Map<HostExtension<?>, Set<HostExtension<?>>> before = new LinkedHashMap<>();
    for (HostExtension<?> extension : extensions) {
      Set<HostExtension<?>> needs = new LinkedHashSet<>();
      for (Class<?> contract : extension.requires()) {
        HostExtension<?> provider = providers.get(contract);
        if (provider == null && !hostServices.contains(contract)) {
          throw new IllegalArgumentException(
              "Host extension '"
                  + extension.name()
                  + "' requires "
                  + contract.getSimpleName()
                  + ", which no extension of this host provides: add the extension that does, or"
                  + " leave out '"
                  + extension.name()
                  + "'.");
        }
        if (provider != null && provider != extension) {
          needs.add(provider);
        }
      }
      for (Class<?> contract : extension.uses()) {
        HostExtension<?> provider = providers.get(contract);
        if (provider != null && provider != extension) {
          needs.add(provider);
        }
      }
      before.put(extension, needs);
    }
    // Kahn's order, always taking the first ready extension in the order given: a stable sort.
    List<HostExtension<?>> order = new ArrayList<>();
    List<HostExtension<?>> waiting = new ArrayList<>(extensions);
    while (!waiting.isEmpty()) {
      HostExtension<?> next =
          waiting.stream()
              .filter(extension -> order.containsAll(before.get(extension)))
              .findFirst()
              .orElse(null);
      if (next == null) {
        throw new IllegalArgumentException(
            "Host extensions "
                + waiting.stream()
                    .map(extension -> "'" + extension.name() + "'")
                    .collect(Collectors.joining(", "))
                + " need each other's contracts in a circle: none of them can start first.");
      }
      order.add(next);
      waiting.remove(next);
    }
    return List.copyOf(order);
  }

  /** New instances of the extensions on the class path ({@link ServiceLoader}), as found. */
  public static List<HostExtension<?>> discovered() {
    List<HostExtension<?>> found = new ArrayList<>();
    ServiceLoader.load(HostExtension.class).forEach(found::add);
    return List.copyOf(found);
  }

  /** The extensions, in their start order. */
  public List<HostExtension<?>> all() {
    return extensions;
  }

  /**
   * Gives every extension its config and starts it, in order. When one fails, what it owned and the
   * ones started before it are closed in reverse order and its failure is thrown, with any failure
   * to close attached as suppressed.
   *
   * @throws ConfigException when a section made in code breaks its extension's schema or checks
   * @throws HostExtensionException naming the extension that failed, with its failure as cause
   */
  public void start(Host host) {
    for (HostExtension<?> extension : extensions) {
      Owned owned = new Owned();
      try {
        startOne(extension, host, owned);
      } catch (ConfigException e) {
        // The operator's message names the key at fault already.
        owned.close(extension.name(), e);
        closeStarted(e);
        throw e;
      } catch (Error e) {
        // A class the extension needs is missing, say: what started before it stops all the same.
        owned.close(extension.name(), null);
        closeStarted(null);
        throw e;
      } catch (Exception e) {
        HostExtensionException failure =
            new HostExtensionException(
                "Host extension '" + extension.name() + "' failed to start: " + e.getMessage(), e);
        owned.close(extension.name(), failure);
        closeStarted(failure);
        throw failure;
      }
      started.push(new Started(extension, owned));
    }
  }

  private <C> void startOne(HostExtension<C> extension, Host host, Owned owned) throws Exception {
    HostContext context = host.context(extension, owned);
    extension.start(context, config(extension, host, context));
  }

  /** The config the builder gave, else the file's section read, else none. */
  @SuppressWarnings("unchecked") // The host's builder pairs a config with its extension's type.
  private <C> Optional<C> config(HostExtension<C> extension, Host host, HostContext context) {
    Object code = given.get(extension.name());
    if (code != null) {
      return Optional.of((C) code);
    }
    return host.section(extension.name())
        .map(
            section -> {
              SectionReading reading = context.reading();
              ConfigSections.check(
                  extension.name(), extension.configSchema(), section, reading.problems());
              C read = reading.problems().count() == 0 ? extension.read(section, reading) : null;
              reading.problems().throwIfAny();
              return read;
            });
  }

  /**
   * Tells every started extension, in start order, that the host is ready. When one fails, every
   * started extension is closed in reverse and its failure is thrown.
   *
   * @throws HostExtensionException naming the extension that failed
   */
  public void ready(ReadyHost host) {
    for (HostExtension<?> extension : extensions) {
      try {
        extension.ready(host);
      } catch (ConfigException e) {
        closeStarted(e);
        throw e;
      } catch (Error e) {
        closeStarted(null);
        throw e;
      } catch (Exception e) {
        HostExtensionException failure =
            new HostExtensionException(
                "Host extension '"
                    + extension.name()
                    + "' failed when the host was ready: "
                    + e.getMessage(),
                e);
        closeStarted(failure);
        throw failure;
      }
    }
  }

  /** Closes the started extensions in reverse start order; a failure is logged, not thrown. */
  @Override
  public void close() {
    closeStarted(null);
  }

  private void closeStarted(Exception cause) {
    while (!started.isEmpty()) {
      Started one = started.pop();
      try {
        one.extension().close();
      } catch (Exception e) {
        if (cause != null) {
          cause.addSuppressed(e);
        }
        LOG.warn("Host extension '{}' failed to close", one.extension().name(), e);
      } finally {
        one.owned().close(one.extension().name(), cause);
      }
    }
  }
}
