package dev.toolhost.server;

import static org.awaitility.Awaitility.await;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * A toolhost process is the {@code toolhost} command line run in a JVM of its own, as {@code
 * ./toolhost} runs it: the main classes and their dependencies on the class path (not the test
 * classes, whose logging configuration would stand in for the launcher's), standard output and
 * standard error each in a file, read back while it runs.
 */
final class ToolhostProcess implements AutoCloseable {

  private final Process process;
  private final Path out;
  private final Path err;

  private ToolhostProcess(Process process, Path out, Path err) {
    this.process = process;
    this.out = out;
    this.err = err;
  }

  /**
   * Starts {@code toolhost ARGS...}, with its output in files named {@code name} under {@code dir},
   * in an environment without the {@code TOOLHOST_*} variables of the one running the tests.
   */
  static ToolhostProcess start(Path dir, String name, List<String> args) throws IOException {
    List<String> command = new ArrayList<>();
    command.add(ProcessHandle.current().info().command().orElse("java"));
    command.add("-cp");
    command.add(launcherClassPath());
    command.add(Main.class.getName());
    command.addAll(args);
    Path out = dir.resolve(name + ".out");
    Path err = dir.resolve(name + ".err");
    ProcessBuilder builder =
        new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile());
    builder.environment().keySet().removeIf(variable -> variable.startsWith("TOOLHOST_"));
    return new ToolhostProcess(builder.start(), out, err);
  }

  /**
   * Starts {@code toolhost worker --bus BUS --group GROUP OPTIONS...} as {@link #start(Path,
   * String, List)} does.
   */
  static ToolhostProcess worker(Path dir, String name, URI bus, String group, String... options)
      throws IOException {
    List<String> args =
        new ArrayList<>(List.of("worker", "--bus", bus.toString(), "--group", group));
    args.addAll(List.of(options));
    return start(dir, name, args);
  }

  /** The class path of this JVM without its test classes: what the launcher puts on it. */
  static String launcherClassPath() {
    return Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
        .filter(entry -> !Path.of(entry).endsWith("test-classes"))
        .collect(Collectors.joining(File.pathSeparator));
  }

  /** The process id. */
  long pid() {
    return process.pid();
  }

  /** Whether the process is still running. */
  boolean alive() {
    return process.isAlive();
  }

  /** What it printed on standard output so far. */
  String out() {
    return read(out);
  }

  /** What it printed on standard error so far. */
  String err() {
    return read(err);
  }

  /**
   * Waits until a line of its standard output matches the pattern, and returns the match.
   *
   * @throws org.awaitility.core.ConditionTimeoutException when none does within the time
   */
  Matcher awaitOut(Pattern pattern, Duration within) {
    return await()
        .atMost(within)
        .pollInterval(Duration.ofMillis(50))
        .until(
            () -> out().lines().map(pattern::matcher).filter(Matcher::find).findFirst(),
            Optional::isPresent)
        .orElseThrow();
  }

  /** Sends SIGTERM, as Ctrl-C or a service manager would, and returns the exit code. */
  int stop(Duration within) throws InterruptedException {
    process.destroy();
    if (!process.waitFor(within.toMillis(), TimeUnit.MILLISECONDS)) {
      throw new AssertionError("toolhost " + process.pid() + " did not stop within " + within);
    }
    return process.exitValue();
  }

  @Override
  public void close() throws InterruptedException {
    if (process.isAlive()) {
      process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }
  }

  private static String read(Path file) {
    try {
      // Not readString: a line being written may end in the middle of a character.
      return new String(Files.readAllBytes(file), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
