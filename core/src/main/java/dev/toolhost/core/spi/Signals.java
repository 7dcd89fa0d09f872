package dev.toolhost.core.spi;

import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Signals turns SIGTERM and SIGINT (Ctrl-C) into a clean stop of a long-running command, so that it
 * closes what it opened and exits 0, where the JVM's own handling would run the shutdown hooks and
 * exit 143 or 130 whatever they did.
 *
 * <p>The JDK has no public API for this; {@code sun.misc.Signal} (module {@code jdk.unsupported},
 * there for exactly this use) is reached by reflection, because compiling against it is a warning
 * this build treats as an error. Where it is missing, the JVM's default handling stays, and the
 * command's shutdown hook still closes everything.
 */
public final class Signals {

  private static final Logger LOG = LoggerFactory.getLogger(Signals.class);

  private Signals() {}

  /**
   * Runs a long-running command until SIGTERM or SIGINT (Ctrl-C), so that it closes and exits 0.
   * {@code close} runs at most once: after the signal, or in a shutdown hook of the given name on
   * any other way out (System.exit elsewhere, a signal the JVM handles itself). {@code started}
   * runs once both are in place (the command's banner), {@code stopping} after the signal, before
   * {@code close}.
   *
   * @throws InterruptedException if the waiting thread is interrupted; {@code close} is then left
   *     to the shutdown hook
   */
  public static void runUntilStopped(
      String hookName, Runnable close, Runnable started, Runnable stopping)
      throws InterruptedException {
    CountDownLatch stopped = new CountDownLatch(1);
    AtomicBoolean closed = new AtomicBoolean();
    Runnable closeOnce =
        () -> {
          if (closed.compareAndSet(false, true)) {
            close.run();
          }
        };
    Runtime.getRuntime().addShutdownHook(new Thread(closeOnce, hookName));
    onStop(stopped::countDown);
    started.run();
    stopped.await();
    stopping.run();
    closeOnce.run();
  }

  /** Runs {@code stop} (once per signal) on SIGTERM and SIGINT instead of the JVM's default. */
  public static void onStop(Runnable stop) {
    try {
      Class<?> signal = Class.forName("sun.misc.Signal");
      Class<?> handler = Class.forName("sun.misc.SignalHandler");
      Constructor<?> named = signal.getConstructor(String.class);
      Method handle = signal.getMethod("handle", signal, handler);
      Object proxy =
          Proxy.newProxyInstance(
              handler.getClassLoader(),
              new Class<?>[] {handler},
              (self, method, arguments) -> {
                if (method.getName().equals("handle")) {
                  stop.run();
                  return null;
                }
                // equals, hashCode and toString of the proxy itself.
                return switch (method.getName()) {
                  case "hashCode" -> System.identityHashCode(self);
                  case "equals" -> self == arguments[0];
                  default -> "toolhost stop handler";
                };
              });
      for (String name : new String[] {"TERM", "INT"}) {
        handle.invoke(null, named.newInstance(name), proxy);
      }
    } catch (ClassNotFoundException
        | NoSuchMethodException
        | InstantiationException
        | IllegalAccessException
        | InvocationTargetException e) {
      LOG.debug("Signals are left to the JVM: {}", e.toString());
    }
  }
}
