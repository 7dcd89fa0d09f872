package dev.toolhost.exec;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import dev.toolhost.core.spi.ConfigProblems;
import dev.toolhost.core.spi.ConfigSections;
import dev.toolhost.core.spi.ConfigSections.DurationText;
import dev.toolhost.core.spi.Durations;
import dev.toolhost.core.spi.SectionReading;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import tools.jackson.databind.JsonNode;

/**
 * An exec config is the {@code exec:} section of a host config: where the per-session workspaces
 * live, whether sandboxed processes may use the network, their limits, what else they may write or
 * read, which host variables they get, where pip finds wheels, and the explicit switch to run
 * without the sandbox.
 *
 * <pre>{@code
 * exec:
 *   workspace_root: /var/lib/toolhost/workspaces   # required: one directory per session under it
 *   network: false              # true: the sandbox shares the host's network
 *   max_timeout: 300            # the most a call may ask for (shell and exec default to 60 s)
 *   limits:
 *     memory_mb: 1024           # memory of one call (its cgroup; without cgroups, per process)
 *     cpu_seconds: 300          # CPU time per process
 *     file_size_mb: 256         # the largest file a process may write
 *     processes: 256            # processes of one call
 *     output_bytes: 65536       # kept per stream (head and tail); the rest is counted, not kept
 *     workspace_mb: 1024        # the most one workspace holds on disk
 *     host_memory_mb: 12288     # all calls together (default: half the machine's memory)
 *     cpu_weight: 50            # each call's CPU weight against the host's other work at 100
 *   writable_paths: []          # host directories the sandbox may also write
 *   readable_paths: []          # host paths the sandbox may also read (read-only)
 *   protected_paths: []         # paths the file tool refuses, besides the config's directory
 *   pass_env: [TZ]              # host variables passed through (never a blocked or secret one)
 *   wheel_dir: /srv/wheels      # execute_python_script's pip_packages come only from here
 *   sandbox_uid: 65534          # the user a root host runs sandboxed processes as
 *   bwrap: /usr/bin/bwrap       # the bubblewrap binary
 *   workspace_ttl: 30d          # a workspace no call used for this long is removed at start
 *   unsandboxed: false          # true runs commands WITHOUT containment (development only)
 * }</pre>
 *
 * @param workspaceRoot the directory that holds one workspace per session
 * @param network whether sandboxed processes share the host's network
 * @param maxTimeout the longest timeout a call may ask for
 * @param limits the limits of every sandboxed process
 * @param writablePaths host directories the sandbox may write besides the workspace
 * @param readablePaths host paths the sandbox may read besides the system
 * @param protectedPaths paths the file tool refuses
 * @param passEnv host variables passed through to sandboxed processes
 * @param wheelDirectory where pip finds the wheels {@code pip_packages} may name
 * @param sandboxUid the uid sandboxed processes run as when the host runs as root
 * @param bwrap the bubblewrap binary: a path, or a name looked up in the system's directories
 *     ({@code /usr/local/sbin} to {@code /bin})
 * @param unsandboxed whether commands run without the sandbox (never by default)
 * @param promptSilence how long a shell command that shows an input prompt may stay silent
 * @param workspaceTtl how long a workspace no call used is kept: a host that starts removes older
 *     ones
 */
public record ExecConfig(
    Path workspaceRoot,
    boolean network,
    Duration maxTimeout,
    Limits limits,
    List<Path> writablePaths,
    List<Path> readablePaths,
    List<Path> protectedPaths,
    List<String> passEnv,
    Optional<Path> wheelDirectory,
    int sandboxUid,
    String bwrap,
    boolean unsandboxed,
    Duration promptSilence,
    Duration workspaceTtl) {

  /** The longest timeout a call may ask for when the config names none. */
  public static final Duration DEFAULT_MAX_TIMEOUT = Duration.ofSeconds(300);

  /** How long an unused workspace is kept when the config names no {@code workspace_ttl}. */
  public static final Duration DEFAULT_WORKSPACE_TTL = Duration.ofDays(30);

  /** The uid of {@code nobody}: what a root host runs sandboxed processes as by default. */
  public static final int NOBODY = 65534;

  public ExecConfig {
    Objects.requireNonNull(workspaceRoot, "workspaceRoot");
    Objects.requireNonNull(maxTimeout, "maxTimeout");
    Objects.requireNonNull(limits, "limits");
    writablePaths = List.copyOf(writablePaths);
    readablePaths = List.copyOf(readablePaths);
    protectedPaths = List.copyOf(protectedPaths);
    passEnv = List.copyOf(passEnv);
    Objects.requireNonNull(wheelDirectory, "wheelDirectory");
    Objects.requireNonNull(bwrap, "bwrap");
    Objects.requireNonNull(promptSilence, "promptSilence");
    Objects.requireNonNull(workspaceTtl, "workspaceTtl");
    if (!workspaceRoot.isAbsolute()) {
      throw new IllegalArgumentException("The workspace root must be absolute: " + workspaceRoot);
    }
  }

  /**
   * The limits of sandboxed calls. Where the host can write cgroups, each call runs in a cgroup of
   * its own with {@code memoryBytes} of memory (resident, swap included) and {@code processes}
   * processes, and all calls of the host share {@code hostMemoryBytes}; where it cannot, {@code
   * memoryBytes} is each process's address space ({@code prlimit}) and at most {@link
   * #concurrentCalls} calls run at once.
   *
   * @param memoryBytes the memory of one call (its cgroup), or of one process without cgroups
   * @param cpuSeconds CPU time per process (RLIMIT_CPU)
   * @param fileSizeBytes the largest file a process may write (RLIMIT_FSIZE)
   * @param processes the processes of one call (its cgroup's {@code pids.max}; RLIMIT_NPROC of the
   *     sandbox user as well)
   * @param outputBytes bytes kept per output stream
   * @param workspaceBytes the most one workspace may hold on disk
   * @param hostMemoryBytes the memory of all sandboxed calls of the host together
   * @param cpuWeight each call's CPU weight, 1 to 10000, against the host's other work at 100
   */
  public record Limits(
      long memoryBytes,
      long cpuSeconds,
      long fileSizeBytes,
      int processes,
      int outputBytes,
      long workspaceBytes,
      long hostMemoryBytes,
      int cpuWeight) {

    public Limits {
      if (cpuWeight < 1 || cpuWeight > 10_000) {
        throw new IllegalArgumentException("cpuWeight must be 1 to 10000: " + cpuWeight);
      }
    }

    /** The given per-call limits, with the defaults of the workspace, host and CPU limits. */
    public Limits(
        long memoryBytes, long cpuSeconds, long fileSizeBytes, int processes, int outputBytes) {
      this(
          memoryBytes,
          cpuSeconds,
          fileSizeBytes,
          processes,
          outputBytes,
          DEFAULT_WORKSPACE_BYTES,
          defaultHostMemory(),
          DEFAULT_CPU_WEIGHT);
    }

    /**
     * 1 GiB and 256 processes a call, 300 s of CPU and 256 MiB a file per process, 64 KiB per
     * stream, 1 GiB a workspace, half the machine's memory for all calls, CPU weight 50.
     */
    public static Limits defaults() {
      return new Limits(1L << 30, 300, 256L << 20, 256, 64 * 1024);
    }

    /** How many calls may run at once where no cgroup bounds their memory together. */
    public int concurrentCalls() {
      return (int) Math.max(1, Math.min(1024, hostMemoryBytes / memoryBytes));
    }
  }

  /** The most one workspace holds when the config names no {@code workspace_mb}. */
  public static final long DEFAULT_WORKSPACE_BYTES = 1L << 30;

  /** A call's CPU weight when the config names none: half the host's other work. */
  public static final int DEFAULT_CPU_WEIGHT = 50;

  /** Half the machine's memory (from {@code /proc/meminfo}), or 4 GiB where it cannot be read. */
  static long defaultHostMemory() {
    try {
      for (String line : java.nio.file.Files.readAllLines(Path.of("/proc/meminfo"))) {
        if (line.startsWith("MemTotal:")) {
          return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024 / 2;
        }
      }
    } catch (java.io.IOException | NumberFormatException e) {
      // The fallback below.
    }
    return 4L << 30;
  }

  /** A builder of a config with the given workspace root and every default. */
  public static Builder builder(Path workspaceRoot) {
    return new Builder(workspaceRoot);
  }

  /** A builder starting from this config. */
  public Builder toBuilder() {
    Builder builder = new Builder(workspaceRoot);
    builder.network = network;
    builder.maxTimeout = maxTimeout;
    builder.limits = limits;
    builder.writablePaths = writablePaths;
    builder.readablePaths = readablePaths;
    builder.protectedPaths = protectedPaths;
    builder.passEnv = passEnv;
    builder.wheelDirectory = wheelDirectory;
    builder.sandboxUid = sandboxUid;
    builder.bwrap = bwrap;
    builder.unsandboxed = unsandboxed;
    builder.promptSilence = promptSilence;
    builder.workspaceTtl = workspaceTtl;
    return builder;
  }

  /** A builder of an {@link ExecConfig}. */
  public static final class Builder {
    private final Path workspaceRoot;
    private boolean network;
    private Duration maxTimeout = DEFAULT_MAX_TIMEOUT;
    private Limits limits = Limits.defaults();
    private List<Path> writablePaths = List.of();
    private List<Path> readablePaths = List.of();
    private List<Path> protectedPaths = List.of();
    private List<String> passEnv = List.of();
    private Optional<Path> wheelDirectory = Optional.empty();
    private int sandboxUid = NOBODY;
    private String bwrap = "bwrap";
    private boolean unsandboxed;
    private Duration promptSilence = Duration.ofSeconds(5);
    private Duration workspaceTtl = DEFAULT_WORKSPACE_TTL;

    private Builder(Path workspaceRoot) {
      this.workspaceRoot = workspaceRoot;
    }

    public Builder network(boolean network) {
      this.network = network;
      return this;
    }

    public Builder maxTimeout(Duration maxTimeout) {
      this.maxTimeout = maxTimeout;
      return this;
    }

    public Builder limits(Limits limits) {
      this.limits = limits;
      return this;
    }

    public Builder writablePaths(List<Path> writablePaths) {
      this.writablePaths = writablePaths;
      return this;
    }

    public Builder readablePaths(List<Path> readablePaths) {
      this.readablePaths = readablePaths;
      return this;
    }

    public Builder protectedPaths(List<Path> protectedPaths) {
      this.protectedPaths = protectedPaths;
      return this;
    }

    public Builder passEnv(List<String> passEnv) {
      this.passEnv = passEnv;
      return this;
    }

    public Builder wheelDirectory(Path wheelDirectory) {
      this.wheelDirectory = Optional.of(wheelDirectory);
      return this;
    }

    public Builder sandboxUid(int sandboxUid) {
      this.sandboxUid = sandboxUid;
      return this;
    }

    public Builder bwrap(String bwrap) {
      this.bwrap = bwrap;
      return this;
    }

    public Builder unsandboxed(boolean unsandboxed) {
      this.unsandboxed = unsandboxed;
      return this;
    }

    public Builder workspaceTtl(Duration workspaceTtl) {
      this.workspaceTtl = workspaceTtl;
      return this;
    }

    public Builder promptSilence(Duration promptSilence) {
      this.promptSilence = promptSilence;
      return this;
    }

    public ExecConfig build() {
      return new ExecConfig(
          workspaceRoot,
          network,
          maxTimeout,
          limits,
          writablePaths,
          readablePaths,
          protectedPaths,
          passEnv,
          wheelDirectory,
          sandboxUid,
          bwrap,
          unsandboxed,
          promptSilence,
          workspaceTtl);
    }
  }

  /**
   * Reads a section its schema accepts, relative paths against the reading's directory, adding its
   * problems to the reading's; the result is only meaningful when none was added. The config file's
   * directory is protected from the file tool.
   */
  public static ExecConfig read(JsonNode section, SectionReading reading) {
    ConfigProblems problems = reading.problems();
    Raw raw = ConfigSections.bind(ExecExtension.NAME, section, Raw.class);
    Path directory = reading.directory().toAbsolutePath().normalize();
    Path root = Path.of("/nonexistent-workspace-root");
    if (raw.workspaceRoot() == null || raw.workspaceRoot().isBlank()) {
      problems.atValue(
          "/exec",
          "'exec.workspace_root' is missing (expected the directory that holds one workspace per"
              + " session, such as /var/lib/toolhost/workspaces)");
    } else {
      root = directory.resolve(raw.workspaceRoot()).normalize();
      if (root.getNameCount() < 2) {
        problems.atValue(
            "/exec/workspace_root",
            "'exec.workspace_root' is '"
                + raw.workspaceRoot()
                + "' (expected a directory of its own, at least two levels below /)");
      }
    }
    Builder builder = builder(root);
    builder.network(Boolean.TRUE.equals(raw.network()));
    builder.unsandboxed(Boolean.TRUE.equals(raw.unsandboxed()));
    builder.maxTimeout(
        duration(raw.maxTimeout(), "max_timeout", DEFAULT_MAX_TIMEOUT, problems)
            .orElse(DEFAULT_MAX_TIMEOUT));
    builder.promptSilence(
        duration(raw.promptSilence(), "prompt_silence", Duration.ofSeconds(5), problems)
            .orElse(Duration.ofSeconds(5)));
    builder.workspaceTtl(
        duration(raw.workspaceTtl(), "workspace_ttl", DEFAULT_WORKSPACE_TTL, problems)
            .orElse(DEFAULT_WORKSPACE_TTL));
    Limits defaults = Limits.defaults();
    RawLimits limits =
        raw.limits() == null
            ? new RawLimits(null, null, null, null, null, null, null, null)
            : raw.limits();
    long cpuWeight =
        positive(limits.cpuWeight(), "limits.cpu_weight", defaults.cpuWeight(), problems);
    if (cpuWeight > 10_000) {
      problems.atValue(
          "/exec/limits/cpu_weight",
          "'exec.limits.cpu_weight' is " + cpuWeight + " (expected 1 to 10000)");
      cpuWeight = defaults.cpuWeight();
    }
    builder.limits(
        new Limits(
            positive(limits.memoryMb(), "limits.memory_mb", defaults.memoryBytes() >> 20, problems)
                << 20,
            positive(limits.cpuSeconds(), "limits.cpu_seconds", defaults.cpuSeconds(), problems),
            positive(
                    limits.fileSizeMb(),
                    "limits.file_size_mb",
                    defaults.fileSizeBytes() >> 20,
                    problems)
                << 20,
            (int) positive(limits.processes(), "limits.processes", defaults.processes(), problems),
            (int)
                positive(
                    limits.outputBytes(), "limits.output_bytes", defaults.outputBytes(), problems),
            positive(
                    limits.workspaceMb(),
                    "limits.workspace_mb",
                    defaults.workspaceBytes() >> 20,
                    problems)
                << 20,
            positive(
                    limits.hostMemoryMb(),
                    "limits.host_memory_mb",
                    defaults.hostMemoryBytes() >> 20,
                    problems)
                << 20,
            (int) cpuWeight));
    builder.writablePaths(paths(raw.writablePaths(), directory));
    builder.readablePaths(paths(raw.readablePaths(), directory));
    List<Path> protectedPaths = new ArrayList<>(paths(raw.protectedPaths(), directory));
    if (!reading.directory().toString().isEmpty()) {
      protectedPaths.add(directory);
    }
    builder.protectedPaths(protectedPaths);
    List<String> passEnv = raw.passEnv() == null ? List.of() : raw.passEnv();
    for (int i = 0; i < passEnv.size(); i++) {
      int index = i;
      ChildEnvironment.refusal(passEnv.get(i))
          .ifPresent(
              why ->
                  problems.atValue(
                      "/exec/pass_env/" + index, "'exec.pass_env[" + index + "]': " + why));
    }
    builder.passEnv(passEnv);
    if (raw.wheelDir() != null) {
      builder.wheelDirectory(directory.resolve(raw.wheelDir()).normalize());
    }
    if (raw.sandboxUid() != null) {
      if (raw.sandboxUid() <= 0) {
        problems.atValue(
            "/exec/sandbox_uid",
            "'exec.sandbox_uid' is "
                + raw.sandboxUid()
                + " (expected the uid of an unprivileged user, such as 65534)");
      } else {
        builder.sandboxUid(raw.sandboxUid());
      }
    }
    if (raw.bwrap() != null) {
      builder.bwrap(raw.bwrap());
    }
    return builder.build();
  }

  private static Optional<Duration> duration(
      String raw, String key, Duration fallback, ConfigProblems problems) {
    return Durations.read(raw, fallback, "/exec/" + key, problems);
  }

  private static long positive(Long raw, String key, long fallback, ConfigProblems problems) {
    if (raw == null) {
      return fallback;
    }
    if (raw <= 0 || raw > (1L << 40)) {
      problems.atValue(
          "/exec/" + key.replace('.', '/'),
          "'exec." + key + "' is " + raw + " (expected a positive number)");
      return fallback;
    }
    return raw;
  }

  private static List<Path> paths(List<String> raw, Path directory) {
    return raw == null
        ? List.of()
        : raw.stream().map(each -> directory.resolve(each).normalize()).toList();
  }

  // ---- the section's raw shape: every key optional, so every field may be null ----

  record Raw(
      @JsonPropertyDescription("a directory path") String workspaceRoot,
      Boolean network,
      @DurationText String maxTimeout,
      RawLimits limits,
      List<String> writablePaths,
      List<String> readablePaths,
      List<String> protectedPaths,
      List<String> passEnv,
      String wheelDir,
      Integer sandboxUid,
      String bwrap,
      Boolean unsandboxed,
      @DurationText String promptSilence,
      @DurationText String workspaceTtl) {}

  record RawLimits(
      Long memoryMb,
      Long cpuSeconds,
      Long fileSizeMb,
      Long processes,
      Long outputBytes,
      Long workspaceMb,
      Long hostMemoryMb,
      Long cpuWeight) {}
}
