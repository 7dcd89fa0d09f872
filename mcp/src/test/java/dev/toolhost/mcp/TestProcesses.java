package dev.toolhost.mcp;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/** Test processes: a Java main on the test classpath, free ports, and killing children. */
public final class TestProcesses {

  private TestProcesses() {}

  /**
   * The command line that runs a main class of the test classpath in a new JVM. The class's name
   * comes first too, in a system property: the JDK reads at most 4096 characters of a process's
   * command line ({@code ProcessHandle.Info}), and {@link #killDescendants} must find it before the
   * long class path.
   */
  public static List<String> javaMain(Class<?> main, String... arguments) {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    List<String> command =
        new java.util.ArrayList<>(
            List.of(
                java,
                "-Dtoolhost.test.main=" + main.getName(),
                "-Xshare:auto",
                "-XX:TieredStopAtLevel=1",
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                "-cp",
                System.getProperty("java.class.path"),
                main.getName()));
    command.addAll(List.of(arguments));
    return command;
  }

  /** A port free a moment ago. */
  public static int freePort() {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Waits until something listens on the port, or fails after the timeout. */
  public static void awaitPort(int port, Duration timeout) throws InterruptedException {
    Instant end = Instant.now().plus(timeout);
    while (Instant.now().isBefore(end)) {
      try (Socket socket = new Socket("127.0.0.1", port)) {
        return;
      } catch (IOException e) {
        Thread.sleep(100);
      }
    }
    throw new IllegalStateException("Nothing listens on port " + port + " after " + timeout);
  }

  /** Kills every descendant of this JVM whose command line contains the marker. */
  public static int killDescendants(String marker) {
    List<ProcessHandle> matching =
        ProcessHandle.current()
            .descendants()
            .filter(
                process ->
                    process.info().commandLine().map(line -> line.contains(marker)).orElse(false))
            .toList();
    matching.forEach(ProcessHandle::destroyForcibly);
    return matching.size();
  }

  /** The descendants of this JVM still alive whose command line contains the marker. */
  public static long aliveDescendants(String marker) {
    return ProcessHandle.current()
        .descendants()
        .filter(ProcessHandle::isAlive)
        .filter(p -> p.info().commandLine().map(line -> line.contains(marker)).orElse(false))
        .count();
  }
}
