package dev.toolhost.core.spi;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Child processes are how a host starts a program that must not outlive it (a browser, a stdio MCP
 * server): each is started through {@code setpriv --pdeathsig SIGKILL}, so that the kernel kills it
 * when the host dies, {@code kill -9} included, and each carries the host's {@link OwnerMark} in
 * its environment ({@value #OWNER_VARIABLE}), which its own children inherit, so that a host
 * starting after a crash can end whatever its predecessor left ({@link #endOrphans()}).
 *
 * <p>The kernel sends that signal when the <em>thread</em> that started the child ends, not the
 * process; so every child is started on one platform thread of this object that lives until {@link
 * #close()}. Closing ends that thread, and with it (by the same signal) every child still running:
 * end them politely first. Where {@code setpriv} is missing or cannot set the signal, children
 * start without it, and the log says so once.
 *
 * <p>Thread-safe. {@link #start} fails with an {@link IOException} naming the program when it is
 * not an executable file, as {@link ProcessBuilder#start()} does.
 */
public final class ChildProcesses implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(ChildProcesses.class);

  /** The environment variable that carries the owning host's mark into every child. */
  public static final String OWNER_VARIABLE = "TOOLHOST_OWNER";

  private final ExecutorService spawner;

  /**
   * Children started by a thread of the given name.
   *
   * @param name what the children are, for the thread's name ({@code browser}, {@code mcp})
   */
  public ChildProcesses(String name) {
    this.spawner =
        Executors.newSingleThreadExecutor(
            runnable -> {
              Thread thread = new Thread(runnable, "toolhost-" + name + "-spawner");
              thread.setDaemon(true);
              return thread;
            });
  }

  /**
   * Starts the builder's command as a child that dies with the host. The builder's command gets the
   * {@code setpriv} prefix and its environment the owner mark; the rest (directory, environment,
   * redirects) is the caller's. Returns once the signal is set (setpriv has run the program).
   *
   * @throws IOException when the program is not found or does not start, or this is closed
   */
  public Process start(ProcessBuilder builder) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(builder.command());
    if (command.isEmpty()) {
      throw new IllegalArgumentException("no command to start");
    }
    String program = command.getFirst();
    Path resolved =
        resolve(program, builder.environment().getOrDefault("PATH", System.getenv("PATH")))
            .orElseThrow(
                () ->
                    new IOException(
                        "Cannot run program \""
                            + program
                            + "\": no executable file of that name"
                            + (program.contains("/") ? "" : " on the PATH")));
    command.set(0, resolved.toString());
    Optional<Path> setpriv = Setpriv.PATH;
    if (setpriv.isPresent()) {
      command.addAll(0, List.of(setpriv.get().toString(), "--pdeathsig", "SIGKILL", "--"));
    }
    builder.command(command);
    builder.environment().put(OWNER_VARIABLE, OwnerMark.current().toString());
    try {
      Process process = spawner.submit(builder::start).get();
      if (setpriv.isPresent()) {
        try {
          awaitSignalSet(process, setpriv.get());
        } catch (InterruptedException e) {
          process.destroyForcibly();
          throw e;
        }
      }
      return process;
    } catch (ExecutionException e) {
      if (e.getCause() instanceof IOException io) {
        throw io;
      }
      throw new IOException("Cannot run program \"" + program + "\": " + e.getCause(), e);
    } catch (RejectedExecutionException e) {
      throw new IOException("Cannot run program \"" + program + "\": the host is closing", e);
    }
  }

  /**
   * Waits until setpriv has set the signal and run the program: the signal is tied to the thread
   * only from then on, and a thread that ended before would leave the child running.
   */
  private static void awaitSignalSet(Process process, Path setpriv) throws InterruptedException {
    Path cmdline = Path.of("/proc", Long.toString(process.pid()), "cmdline");
    byte[] prefix = (setpriv + "\0").getBytes(StandardCharsets.UTF_8);
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (process.isAlive() && System.nanoTime() < end) {
      byte[] now;
      try {
        now = Files.readAllBytes(cmdline);
      } catch (IOException e) {
        return;
      }
      if (now.length > 0 && !startsWith(now, prefix)) {
        return;
      }
      Thread.sleep(1);
    }
  }

  private static boolean startsWith(byte[] bytes, byte[] prefix) {
    return bytes.length >= prefix.length
        && java.util.Arrays.equals(bytes, 0, prefix.length, prefix, 0, prefix.length);
  }

  /**
   * The executable file a program names: itself when it holds a slash, else the first match in the
   * directories of the given PATH; empty when there is none.
   */
  public static Optional<Path> resolve(String program, String path) {
    if (program.isEmpty()) {
      return Optional.empty();
    }
    if (program.contains("/")) {
      Path file = Path.of(program);
      return executable(file) ? Optional.of(file) : Optional.empty();
    }
    for (String directory : (path == null ? "" : path).split(File.pathSeparator)) {
      if (directory.isEmpty()) {
        continue;
      }
      Path file = Path.of(directory, program);
      if (executable(file)) {
        return Optional.of(file);
      }
    }
    return Optional.empty();
  }

  private static boolean executable(Path file) {
    return Files.isRegularFile(file) && Files.isExecutable(file);
  }

  /**
   * Kills every process marked as a child of a host that is no longer running: what a host killed
   * before it could end its children left, where {@code setpriv} could not tie them to it, and the
   * children's children, which inherit the mark but not the signal. Processes of running hosts are
   * left alone. Returns how many were killed.
   */
  public static int endOrphans() {
    int ended = 0;
    Path proc = Path.of("/proc");
    if (!Files.isDirectory(proc)) {
      return 0;
    }
    long self = ProcessHandle.current().pid();
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(proc, "[0-9]*")) {
      for (Path entry : entries) {
        long pid = Long.parseLong(entry.getFileName().toString());
        if (pid == self) {
          continue;
        }
        Optional<OwnerMark> owner = owner(entry);
        if (owner.isPresent() && !owner.get().alive()) {
          Optional<ProcessHandle> orphan = ProcessHandle.of(pid);
          if (orphan.isPresent() && orphan.get().destroyForcibly()) {
            ended++;
          }
        }
      }
    } catch (IOException e) {
      LOG.warn("The processes of dead hosts were not looked for: {}", e.toString());
    }
    if (ended > 0) {
      LOG.info("Killed {} processes left by a host that is no longer running", ended);
    }
    return ended;
  }

  /** The owner mark in a process's environment, if it has one and it can be read. */
  private static Optional<OwnerMark> owner(Path process) {
    byte[] environ;
    try {
      environ = Files.readAllBytes(process.resolve("environ"));
    } catch (IOException | SecurityException e) {
      // Gone, or another user's.
      return Optional.empty();
    }
    String prefix = OWNER_VARIABLE + "=";
    for (String variable : new String(environ, StandardCharsets.UTF_8).split("\0")) {
      if (variable.startsWith(prefix)) {
        return OwnerMark.parse(variable.substring(prefix.length()));
      }
    }
    return Optional.empty();
  }

  /**
   * Ends the thread that started the children, and with it every child still running (the kernel
   * kills them). Safe to call more than once.
   */
  @Override
  public void close() {
    spawner.shutdownNow();
    try {
      spawner.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** setpriv, when it is here and can set the parent-death signal: looked for once. */
  private static final class Setpriv {
    static final Optional<Path> PATH = find();

    private static Optional<Path> find() {
      Optional<Path> found = resolve("setpriv", System.getenv("PATH"));
      if (found.isEmpty()) {
        found = resolve("setpriv", "/usr/bin:/bin");
      }
      if (found.isEmpty()) {
        LOG.warn(
            "setpriv is missing: the host's child processes (browsers, stdio MCP servers) will"
                + " not die with it if it is killed; install util-linux");
        return Optional.empty();
      }
      boolean interrupted = false;
      try {
        Process probe =
            new ProcessBuilder(found.get().toString(), "--pdeathsig", "SIGKILL", "--", "true")
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start();
        // Waited for through interrupts: what is found here holds for the JVM's life.
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (probe.isAlive() && System.nanoTime() < end) {
          try {
            probe.waitFor(end - System.nanoTime(), TimeUnit.NANOSECONDS);
          } catch (InterruptedException e) {
            interrupted = true;
          }
        }
        if (!probe.isAlive() && probe.exitValue() == 0) {
          return found;
        }
        probe.destroyForcibly();
      } catch (IOException e) {
        // Reported below.
      } finally {
        if (interrupted) {
          Thread.currentThread().interrupt();
        }
      }
      LOG.warn(
          "{} cannot set a parent-death signal: the host's child processes (browsers, stdio MCP"
              + " servers) will not die with it if it is killed; install a newer util-linux",
          found.get());
      return Optional.empty();
    }
  }
}
