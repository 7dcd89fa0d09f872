package dev.toolhost.exec;

import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ToolException;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sandbox runs one command at a time per call inside bubblewrap, for every tool of the exec
 * extension; it fails closed.
 *
 * <p>A sandboxed process sees the system read-only ({@code /usr}, {@code /etc} and the {@code /bin}
 * and {@code /lib} links), a private {@code /tmp}, its own {@code /proc} and a minimal {@code
 * /dev}, and its session's workspace read-write (with the configured writable paths); nothing else
 * of the host exists for it, so the host's data, state and config directories are invisible. It has
 * its own user, PID, mount, IPC, UTS, cgroup and network namespaces (the network only when the
 * config allows it), may not make further user namespaces, has every capability dropped, runs in a
 * new session (no terminal to inject keystrokes into), gets an empty stdin and a clean environment
 * ({@link ChildEnvironment}), and has limits on address space, CPU time, file size and processes
 * ({@code prlimit}), and a seccomp filter ({@link SeccompFilter}: no ptrace, io_uring, new
 * namespaces or mounts, and no socket but AF_UNIX without the network). When the host runs as root
 * the process first becomes an unprivileged user ({@code setpriv}, uid {@link
 * ExecConfig#sandboxUid}): as root, dropped capabilities still let it read root's files.
 *
 * <p>A call ends its whole process tree: bwrap's child is the PID namespace's init, which dies with
 * bwrap ({@code --die-with-parent}), and every process of the namespace dies with it, those that
 * ignore SIGTERM, double-fork or call {@code setsid} included. Processes are started from one
 * long-lived platform thread of the sandbox's own, because the parent-death signal follows the
 * thread that forked, and a virtual thread's carrier may end while the process runs.
 *
 * <p>Fail closed: when bwrap is missing or cannot make its namespaces (inside some containers),
 * {@link #run} answers {@code unavailable} with the reason and the fix, and never runs the command
 * some other way. Only {@link ExecConfig#unsandboxed} runs commands without containment, and every
 * {@link Execution} says which way it ran. Thread-safe.
 */
public final class Sandbox implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(Sandbox.class);

  /** What a shell prompt that waits for an answer looks like, on the last line of output. */
  private static final Pattern PROMPT =
      Pattern.compile(
          "(?i).*(\\[y/n]|\\(y/n\\)|\\[yes/no]|\\(yes/no\\)|password|passphrase"
              + "|continue\\?|proceed\\?|are you sure|press (any key|enter)|[?:>])$");

  private final ExecConfig config;
  private final Map<String, String> passed;
  private final Collection<String> secrets;
  private final boolean hostIsRoot;
  private final ExecutorService spawner;
  private final Set<Process> running = ConcurrentHashMap.newKeySet();
  private final List<AutoCloseable> closing = new java.util.concurrent.CopyOnWriteArrayList<>();
  private final Optional<Path> seccomp;
  private final Optional<ControlGroups> groups;
  private final java.util.concurrent.Semaphore uncounted;
  private volatile boolean available;

  /**
   * A sandbox of the given config.
   *
   * @param hostEnvironment the host's environment, for the variables the config passes through
   * @param secrets the host's secret values: none may reach a sandboxed process
   */
  public Sandbox(
      ExecConfig config, Map<String, String> hostEnvironment, Collection<String> secrets) {
    this.config = Objects.requireNonNull(config, "config");
    this.secrets = List.copyOf(secrets);
    Map<String, String> passing = new LinkedHashMap<>();
    for (String name : config.passEnv()) {
      String value = hostEnvironment.get(name);
      // A secret never passes, whatever the config says: the leak would be silent.
      if (value != null && this.secrets.stream().noneMatch(value::contains)) {
        passing.put(name, value);
      }
    }
    this.passed = Map.copyOf(passing);
    this.hostIsRoot = runningAsRoot();
    this.seccomp = contained() ? writeFilter(config.network()) : Optional.empty();
    this.groups = contained() ? openGroups(config.limits()) : Optional.empty();
    // Without cgroups nothing bounds the calls' memory together but their number.
    this.uncounted = new java.util.concurrent.Semaphore(config.limits().concurrentCalls(), true);
    this.spawner =
        Executors.newSingleThreadExecutor(
            runnable -> {
              Thread thread = new Thread(runnable, "toolhost-sandbox-spawner");
              thread.setDaemon(true);
              return thread;
            });
  }

  /**
   * The seccomp filter in a file of its own that the sandbox user can read (bwrap reads it from a
   * descriptor), when the architecture has one; a filter that cannot be written is no filter, and
   * the log says so.
   */
  private static Optional<Path> writeFilter(boolean network) {
    Optional<byte[]> filter = SeccompFilter.forArchitecture(System.getProperty("os.arch"), network);
    if (filter.isEmpty()) {
      LOG.warn(
          "No seccomp filter for architecture {}: the sandbox runs without one",
          System.getProperty("os.arch"));
      return Optional.empty();
    }
    try {
      Path directory = Files.createTempDirectory("toolhost-seccomp");
      Files.setPosixFilePermissions(
          directory, java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
      Path file = Files.write(directory.resolve("filter.bpf"), filter.get());
      Files.setPosixFilePermissions(
          file, java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"));
      return Optional.of(file);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException("The seccomp filter cannot be written", e);
    }
  }

  /**
   * The host's cgroups, or empty with the reason in the log once: then each process has an
   * address-space limit and at most {@link ExecConfig.Limits#concurrentCalls} calls run at once.
   */
  private static Optional<ControlGroups> openGroups(ExecConfig.Limits limits) {
    return switch (ControlGroups.open(limits)) {
      case ControlGroups.Opened opened -> {
        LOG.info(
            "Sandboxed calls run in cgroups ({}): {} MiB and {} processes a call, {} MiB for all",
            opened.groups().kind(),
            limits.memoryBytes() >> 20,
            limits.processes(),
            limits.hostMemoryBytes() >> 20);
        yield Optional.of(opened.groups());
      }
      case ControlGroups.Refused refused -> {
        LOG.warn(
            "Sandboxed calls cannot have cgroups ({}): each process is held to {} MiB of address"
                + " space instead, and at most {} calls run at once",
            refused.why(),
            limits.memoryBytes() >> 20,
            limits.concurrentCalls());
        yield Optional.empty();
      }
    };
  }

  /** The host's cgroups, when each sandboxed call runs in a cgroup of its own. */
  Optional<ControlGroups> groups() {
    return groups;
  }

  /** Whether sandboxed processes run under the seccomp filter. */
  public boolean filtered() {
    return seccomp.isPresent();
  }

  /** The config. */
  public ExecConfig config() {
    return config;
  }

  /** Whether commands run contained: false only with {@code unsandboxed: true}. */
  public boolean contained() {
    return !config.unsandboxed();
  }

  /** The uid that owns what sandboxed processes may write, when it is not the host's own. */
  Optional<Integer> childUid() {
    return hostIsRoot && contained() ? Optional.of(config.sandboxUid()) : Optional.empty();
  }

  /**
   * One command to run.
   *
   * @param command the program and its arguments
   * @param workspace the session's workspace (real path), writable and the process's home
   * @param workingDirectory where it starts (real path, within the workspace)
   * @param environment variables the call adds, checked by {@link ChildEnvironment}
   * @param timeout how long the whole tree may run
   * @param binds host paths shown read-only at the given paths inside
   * @param watchPrompt whether a prompt followed by silence ends the command
   */
  public record Request(
      List<String> command,
      Path workspace,
      Path workingDirectory,
      Map<String, String> environment,
      Duration timeout,
      Map<Path, String> binds,
      boolean watchPrompt) {

    public Request {
      command = List.copyOf(command);
      Objects.requireNonNull(workspace, "workspace");
      Objects.requireNonNull(workingDirectory, "workingDirectory");
      environment = Map.copyOf(environment);
      Objects.requireNonNull(timeout, "timeout");
      binds = Map.copyOf(binds);
      if (command.isEmpty()) {
        throw new IllegalArgumentException("A command needs a program.");
      }
    }

    /** A command in the workspace, with no added variables, binds or prompt watch. */
    public static Request of(List<String> command, Path workspace, Duration timeout) {
      return new Request(command, workspace, workspace, Map.of(), timeout, Map.of(), false);
    }
  }

  /**
   * Why sandboxed commands cannot run here, with how to fix it; empty when they can (or when the
   * config runs them unsandboxed). Probes once, by running {@code true} in a sandbox, and remembers
   * a success.
   */
  public Optional<String> unavailable() {
    if (available) {
      return Optional.empty();
    }
    synchronized (this) {
      if (available) {
        return Optional.empty();
      }
      Optional<String> probed = probe();
      if (probed.isEmpty()) {
        available = true;
      } else {
        // Not remembered: the next call probes again, since the operator may fix it meanwhile.
        LOG.warn("The exec sandbox is unavailable: {}", probed.get());
      }
      return probed;
    }
  }

  private Optional<String> probe() {
    if (!contained()) {
      return Optional.empty();
    }
    String fix =
        " Fix: install bubblewrap (Debian: apt-get install bubblewrap) and allow unprivileged user"
            + " namespaces (sysctl kernel.unprivileged_userns_clone=1; in a container, run it with"
            + " a seccomp profile that allows unshare and clone, such as --security-opt"
            + " seccomp=unconfined); or, only where running commands uncontained is acceptable,"
            + " set exec.unsandboxed: true.";
    Optional<Path> bwrap = executable(config.bwrap());
    if (bwrap.isEmpty()) {
      return Optional.of(
          "The sandbox cannot start: bubblewrap ('"
              + config.bwrap()
              + "') is not installed."
              + fix);
    }
    for (String tool : hostIsRoot ? List.of("prlimit", "setpriv") : List.of("prlimit")) {
      if (executable(tool).isEmpty()) {
        return Optional.of(
            "The sandbox cannot start: '"
                + tool
                + "' (util-linux) is not installed. Fix: apt-get install util-linux.");
      }
    }
    try {
      Path home = Files.createTempDirectory("toolhost-probe");
      try {
        Files.setPosixFilePermissions(
            home, java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
        Execution probe =
            execute(Request.of(List.of("true"), home, Duration.ofSeconds(20)), bwrap.get());
        if (probe.exitCode() != 0) {
          return Optional.of(
              "The sandbox cannot start: bubblewrap failed to make its namespaces ("
                  + probe.stderr().strip()
                  + ")."
                  + fix);
        }
        return Optional.empty();
      } finally {
        Files.deleteIfExists(home);
      }
    } catch (IOException e) {
      return Optional.of("The sandbox cannot start: " + e.getMessage() + "." + fix);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Optional.of("The sandbox probe was interrupted.");
    }
  }

  /**
   * Runs the request contained (or, with {@code unsandboxed: true}, uncontained) and waits for its
   * whole process tree to end.
   *
   * @throws ToolException as {@code unavailable} when the sandbox cannot start, saying why and how
   *     to fix it, and as {@code invalid_arguments} for a refused environment variable
   * @throws InterruptedException when the calling thread is interrupted; the tree is killed first
   */
  public Execution run(Request request) throws InterruptedException {
    Optional<String> why = unavailable();
    if (why.isPresent()) {
      throw new ToolException(ErrorCode.UNAVAILABLE, why.get());
    }
    Path bwrap = contained() ? executable(config.bwrap()).orElseThrow() : Path.of("/");
    return execute(request, bwrap);
  }

  private Execution execute(Request request, Path bwrap) throws InterruptedException {
    if (groups.isPresent()) {
      ControlGroups.Call call;
      try {
        call = groups.get().enter();
      } catch (IOException e) {
        // Fail closed: a call is never run without its limits.
        throw new ToolException(
            ErrorCode.UNAVAILABLE, "The call's cgroup cannot be made: " + e.getMessage());
      }
      try (call) {
        return execute(request, bwrap, Optional.of(call));
      }
    }
    if (contained() && !uncounted.tryAcquire(request.timeout().toNanos(), TimeUnit.NANOSECONDS)) {
      throw new ToolException(
          ErrorCode.TIMEOUT,
          "The host already runs "
              + config.limits().concurrentCalls()
              + " sandboxed calls, its most without cgroups; none ended in time.");
    }
    try {
      return execute(request, bwrap, Optional.empty());
    } finally {
      if (contained()) {
        uncounted.release();
      }
    }
  }

  private Execution execute(Request request, Path bwrap, Optional<ControlGroups.Call> group)
      throws InterruptedException {
    Map<String, String> environment =
        ChildEnvironment.of(request.workspace().toString(), passed, request.environment(), secrets);
    List<String> command = new ArrayList<>();
    group.ifPresent(call -> command.addAll(joining(call)));
    if (contained()) {
      command.addAll(wrapper(bwrap, request, environment));
    } else {
      command.addAll(limits());
    }
    command.addAll(request.command());
    ProcessBuilder builder =
        new ProcessBuilder(command)
            .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
            .directory(request.workingDirectory().toFile());
    builder.environment().clear();
    if (contained()) {
      // What setpriv, prlimit and bwrap themselves see; bwrap clears it for the sandbox.
      builder.environment().put("PATH", ChildEnvironment.PATH);
    } else {
      builder.environment().putAll(environment);
    }
    OutputBuffer out = new OutputBuffer(config.limits().outputBytes());
    OutputBuffer err = new OutputBuffer(config.limits().outputBytes());
    long started = System.nanoTime();
    Process process = start(builder);
    running.add(process);
    try {
      Thread outReader = Thread.ofVirtual().start(() -> out.drain(process.getInputStream()));
      Thread errReader = Thread.ofVirtual().start(() -> err.drain(process.getErrorStream()));
      long deadline = started + request.timeout().toNanos();
      boolean timedOut = false;
      Optional<String> prompt = Optional.empty();
      Optional<String> limit = Optional.empty();
      try {
        while (!process.waitFor(
            Math.min(100_000_000L, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
          long now = System.nanoTime();
          if (now >= deadline) {
            timedOut = true;
            break;
          }
          if (group.isPresent()) {
            limit = group.get().limitReached().filter("memory"::equals);
            if (limit.isPresent()) {
              // The kernel killed one process for the call's memory: the call ends whole.
              break;
            }
          }
          if (request.watchPrompt()) {
            prompt = waitingPrompt(out, err, now);
            if (prompt.isPresent()) {
              break;
            }
          }
        }
      } catch (InterruptedException e) {
        kill(process);
        throw e;
      }
      if (process.isAlive()) {
        kill(process);
      }
      int exitCode = process.waitFor();
      if (group.isPresent()) {
        if (limit.isEmpty()) {
          limit = group.get().limitReached();
        }
        if (exitCode == JOIN_FAILED && out.total() == 0) {
          throw new ToolException(
              ErrorCode.UNAVAILABLE, "The call could not join its cgroup: " + err.text().strip());
        }
      }
      // In the sandbox every writer of the pipes died with the PID namespace. Uncontained, a
      // process that escaped the tree may still hold them: wait a little, then stop reading.
      outReader.join(Duration.ofSeconds(2));
      errReader.join(Duration.ofSeconds(2));
      if (outReader.isAlive() || errReader.isAlive()) {
        closeQuietly(process);
        outReader.join(Duration.ofSeconds(1));
        errReader.join(Duration.ofSeconds(1));
      }
      Duration elapsed = Duration.ofNanos(System.nanoTime() - started);
      return new Execution(
          exitCode,
          out.text(),
          err.text(),
          out.total(),
          err.total(),
          elapsed,
          timedOut,
          prompt,
          out.truncated() || err.truncated(),
          contained(),
          limit);
    } finally {
      running.remove(process);
      if (process.isAlive()) {
        kill(process);
      }
    }
  }

  private Optional<String> waitingPrompt(OutputBuffer out, OutputBuffer err, long now) {
    OutputBuffer latest = out.lastWriteNanos() >= err.lastWriteNanos() ? out : err;
    if (latest.total() == 0 || now - latest.lastWriteNanos() < config.promptSilence().toNanos()) {
      return Optional.empty();
    }
    String line = latest.lastLine().strip();
    return !line.isEmpty() && PROMPT.matcher(line).matches() ? Optional.of(line) : Optional.empty();
  }

  private Process start(ProcessBuilder builder) throws InterruptedException {
    try {
      return spawner.submit(builder::start).get();
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      throw new ToolException(
          ErrorCode.EXECUTION_FAILED,
          "The command could not start: "
              + (cause instanceof IOException ? cause.getMessage() : String.valueOf(cause)));
    } catch (java.util.concurrent.RejectedExecutionException e) {
      throw new ToolException(ErrorCode.UNAVAILABLE, "The sandbox is closed.");
    }
  }

  /** The exit status of the join wrapper when a cgroup refused the process. */
  private static final int JOIN_FAILED = 125;

  /**
   * A shell that writes its own pid into each of the call's {@code cgroup.procs} and then becomes
   * the rest of the command, so that the process and everything it starts are in the call's groups
   * from their first instruction (moving a process in after it started would leave out what it
   * forked meanwhile). It runs as the host's user, before setpriv drops to the sandbox's.
   */
  private static List<String> joining(ControlGroups.Call call) {
    List<String> command = new ArrayList<>();
    command.addAll(
        List.of(
            "/bin/sh",
            "-c",
            "while [ \"$1\" != -- ]; do echo $$ > \"$1\" || exit "
                + JOIN_FAILED
                + "; shift; done; shift; exec \"$@\"",
            "toolhost-join"));
    call.joins().forEach(path -> command.add(path.toString()));
    command.add("--");
    return command;
  }

  /** setpriv (as root), prlimit and bwrap with every flag of the containment. */
  private List<String> wrapper(Path bwrap, Request request, Map<String, String> environment) {
    List<String> command = new ArrayList<>();
    if (hostIsRoot) {
      String id = Integer.toString(config.sandboxUid());
      command.addAll(
          List.of(
              "setpriv",
              "--reuid=" + id,
              "--regid=" + id,
              "--clear-groups",
              "--inh-caps=-all",
              "--bounding-set=-all",
              "--"));
    }
    command.addAll(limits());
    if (seccomp.isPresent()) {
      // bwrap reads the filter from a descriptor, which a ProcessBuilder cannot pass: a shell
      // opens the file as descriptor 9 and becomes bwrap.
      command.addAll(
          List.of("/bin/sh", "-c", "exec 9<\"$0\" && exec \"$@\"", seccomp.get().toString()));
    }
    command.add(bwrap.toString());
    if (seccomp.isPresent()) {
      command.addAll(List.of("--seccomp", "9"));
    }
    command.addAll(
        List.of(
            "--unshare-all",
            "--unshare-user",
            "--disable-userns",
            "--die-with-parent",
            "--new-session",
            "--cap-drop",
            "ALL"));
    if (config.network()) {
      command.add("--share-net");
    }
    command.addAll(List.of("--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"));
    for (String top : List.of("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")) {
      Path path = Path.of(top);
      if (Files.isSymbolicLink(path)) {
        try {
          command.addAll(List.of("--symlink", Files.readSymbolicLink(path).toString(), top));
        } catch (IOException e) {
          // An unreadable link is left out, as a missing one is.
        }
      } else if (Files.isDirectory(path, LinkOption.NOFOLLOW_LINKS)) {
        command.addAll(List.of("--ro-bind", top, top));
      }
    }
    command.addAll(List.of("--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"));
    for (Path readable : config.readablePaths()) {
      command.addAll(List.of("--ro-bind-try", readable.toString(), readable.toString()));
    }
    String workspace = request.workspace().toString();
    command.addAll(List.of("--bind", workspace, workspace));
    for (Path writable : config.writablePaths()) {
      command.addAll(List.of("--bind-try", writable.toString(), writable.toString()));
    }
    // A repository's hooks and config run code on the host's next git command: read-only.
    for (String kept : List.of(".git/hooks", ".git/config")) {
      Path path = request.workspace().resolve(kept);
      if (Files.exists(path, LinkOption.NOFOLLOW_LINKS) && !Files.isSymbolicLink(path)) {
        command.addAll(List.of("--ro-bind", path.toString(), path.toString()));
      }
    }
    request
        .binds()
        .forEach((host, inside) -> command.addAll(List.of("--ro-bind", host.toString(), inside)));
    command.addAll(List.of("--chdir", request.workingDirectory().toString(), "--clearenv"));
    environment.forEach((name, value) -> command.addAll(List.of("--setenv", name, value)));
    command.add("--");
    return command;
  }

  private List<String> limits() {
    ExecConfig.Limits limits = config.limits();
    List<String> command = new ArrayList<>();
    if (executable("prlimit").isPresent()) {
      command.add("prlimit");
      if (groups.isEmpty()) {
        // With a cgroup the call's memory is bounded as a whole; an address-space limit per
        // process would only break programs that reserve more than they use.
        command.add("--as=" + limits.memoryBytes());
      }
      command.addAll(
          List.of(
              // SIGXCPU at the limit, which a process may see; SIGKILL a second later.
              "--cpu=" + limits.cpuSeconds() + ":" + (limits.cpuSeconds() + 1),
              "--fsize=" + limits.fileSizeBytes(),
              "--core=0"));
      // The process limit counts every process of the user: only for the sandbox's own user,
      // and only without cgroups, which count each call's own.
      if (childUid().isPresent() && groups.isEmpty()) {
        command.add("--nproc=" + limits.processes());
      }
      command.add("--");
    }
    return command;
  }

  private void kill(Process process) {
    if (!contained()) {
      // Uncontained there is no namespace to end: the descendants still known, then the process.
      process.descendants().forEach(ProcessHandle::destroyForcibly);
    }
    process.destroyForcibly();
    try {
      process.waitFor(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static void closeQuietly(Process process) {
    try {
      process.getInputStream().close();
      process.getErrorStream().close();
    } catch (IOException e) {
      // Closing is all that is left to do.
    }
  }

  /** A program by path, or by name in the system's directories, when it is there to run. */
  static Optional<Path> executable(String name) {
    if (name.contains("/")) {
      Path path = Path.of(name);
      return Files.isRegularFile(path) && Files.isExecutable(path)
          ? Optional.of(path)
          : Optional.empty();
    }
    for (String directory : ChildEnvironment.PATH.split(":")) {
      Path path = Path.of(directory, name);
      if (Files.isRegularFile(path) && Files.isExecutable(path)) {
        return Optional.of(path);
      }
    }
    return Optional.empty();
  }

  private static boolean runningAsRoot() {
    try {
      return Integer.valueOf(0).equals(Files.getAttribute(Path.of("/proc/self"), "unix:uid"));
    } catch (IOException | UnsupportedOperationException e) {
      return false;
    }
  }

  /** Closes the given resource when the sandbox closes, after its processes are ended. */
  void closing(AutoCloseable resource) {
    closing.add(resource);
  }

  /**
   * Kills every process still running, stops starting new ones, and closes what was handed to
   * {@link #closing}.
   */
  @Override
  public void close() {
    spawner.shutdownNow();
    running.forEach(this::kill);
    groups.ifPresent(ControlGroups::close);
    for (AutoCloseable resource : closing) {
      try {
        resource.close();
      } catch (Exception e) {
        LOG.warn("Closing {} failed", resource, e);
      }
    }
    seccomp.ifPresent(
        file -> {
          try {
            Files.deleteIfExists(file);
            Files.deleteIfExists(file.getParent());
          } catch (IOException e) {
            LOG.debug("The seccomp filter file {} stays behind", file, e);
          }
        });
  }
}
