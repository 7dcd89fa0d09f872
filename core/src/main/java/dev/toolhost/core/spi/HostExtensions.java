package dev.toolhost.core.spi;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Host extensions are the extensions of one host in their declared order, and the one place their
 * lifecycle is run: each is started in order, each started one is told when the host is ready, and
 * the started ones are closed in reverse order, also when a later one fails to start. No other code
 * closes an extension, so no capability needs cleanup written by hand.
 *
 * <p>Not thread-safe: the host starts and closes them from one thread. {@link #close()} may be
 * called more than once.
 */
public final class HostExtensions implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(HostExtensions.class);

  private final List<HostExtension> extensions;
  private final Deque<HostExtension> started = new ArrayDeque<>();

  private HostExtensions(List<HostExtension> extensions) {
    this.extensions = List.copyOf(extensions);
    Set<String> names = new HashSet<>();
    for (HostExtension extension : this.extensions) {
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
  public static HostExtensions of(List<HostExtension> extensions) {
    return new HostExtensions(extensions);
  }

  /**
   * The given extensions in start order: by {@link HostExtension#order()}, those of one order in
   * the order given.
   */
  public static List<HostExtension> ordered(List<HostExtension> extensions) {
    return extensions.stream().sorted(Comparator.comparingInt(HostExtension::order)).toList();
  }

  /** New instances of the extensions on the class path ({@link ServiceLoader}), in start order. */
  public static List<HostExtension> discovered() {
    List<HostExtension> found = new ArrayList<>();
    ServiceLoader.load(HostExtension.class).forEach(found::add);
    return ordered(found);
  }

  /** The extensions, in their start order. */
  public List<HostExtension> all() {
    return extensions;
  }

  /**
   * Starts every extension in order, each with the context the function gives it. When one fails,
   * the ones started before it are closed in reverse order and its failure is thrown, with any
   * failure to close attached as suppressed.
   *
   * @throws HostExtensionException naming the extension that failed, with its failure as cause
   */
  public void start(Function<HostExtension, HostContext> contexts) {
    for (HostExtension extension : extensions) {
      try {
        extension.start(contexts.apply(extension));
      } catch (ConfigException e) {
        // The operator's message names the key at fault already.
        closeStarted(e);
        throw e;
      } catch (Error e) {
        // A class the extension needs is missing, say: what started before it stops all the same.
        closeStarted(null);
        throw e;
      } catch (Exception e) {
        HostExtensionException failure =
            new HostExtensionException(
                "Host extension '" + extension.name() + "' failed to start: " + e.getMessage(), e);
        closeStarted(failure);
        throw failure;
      }
      started.push(extension);
    }
  }

  /**
   * Tells every started extension, in start order, that the host is ready. When one fails, every
   * started extension is closed in reverse and its failure is thrown.
   *
   * @throws HostExtensionException naming the extension that failed
   */
  public void ready(ReadyHost host) {
    for (HostExtension extension : extensions) {
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
      HostExtension extension = started.pop();
      try {
        extension.close();
      } catch (Exception e) {
        if (cause != null) {
          cause.addSuppressed(e);
        }
        LOG.warn("Host extension '{}' failed to close", extension.name(), e);
      }
    }
  }
}
