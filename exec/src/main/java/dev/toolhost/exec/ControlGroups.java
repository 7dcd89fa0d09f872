package dev.toolhost.exec;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Control groups are the kernel's limits on sandboxed calls: each call runs in a cgroup of its own
 * with a memory limit (resident memory, swap included), a process limit and a CPU weight, and all
 * calls of this host sit under one cgroup of the host ({@code toolhost-<pid>-<n>}, beneath the
 * host's own) whose memory limit is the total of all calls.
 *
 * <p>cgroup v2 is used where the host's own cgroup offers the {@code memory} and {@code pids}
 * controllers and the host may move itself into a leaf of it (the kernel lets only a cgroup with no
 * process of its own give controllers to children); cgroup v1 where the {@code memory} and {@code
 * pids} hierarchies are writable ({@code cpu} too when it is). Where neither can be written, {@link
 * #open} says why and the sandbox falls back to per-process rlimits and a host-wide cap on
 * concurrent calls.
 *
 * <p>A host that starts removes what a dead predecessor left: every {@code toolhost-<pid>-<n>}
 * group whose process is gone, after killing whatever still runs in it. Thread-safe.
 */
final class ControlGroups implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(ControlGroups.class);

  private static final String PREFIX = "toolhost-";

  /** Numbers the hosts (sandboxes) of this process, which each have groups of their own. */
  private static final java.util.concurrent.atomic.AtomicInteger HOSTS =
      new java.util.concurrent.atomic.AtomicInteger();

  private final boolean v2;

  /** The host's group in each hierarchy, by controller (one entry, "", on v2). */
  private final Map<String, Path> host;

  private final ExecConfig.Limits limits;
  private final AtomicLong calls = new AtomicLong();

  private final Optional<Process> reaper;

  private ControlGroups(boolean v2, Map<String, Path> host, ExecConfig.Limits limits) {
    this.v2 = v2;
    this.host = Map.copyOf(host);
    this.limits = limits;
    this.reaper = startReaper(host.values());
  }

  /** The groups of this host, or why the kernel's limits cannot be used here. */
  sealed interface Opening {}

  /** The groups opened. */
  record Opened(ControlGroups groups) implements Opening {}

  /** Why not, for the log. */
  record Refused(String why) implements Opening {}

  /** Opens the host's groups with the given limits, removing a dead predecessor's first. */
  static Opening open(ExecConfig.Limits limits) {
    try {
      String self = Files.readString(Path.of("/proc/self/cgroup"), StandardCharsets.UTF_8);
      List<String[]> mounts = mounts();
      Optional<ControlGroups> v1 = openV1(self, mounts, limits);
      if (v1.isPresent()) {
        return new Opened(v1.get());
      }
      Optional<ControlGroups> v2 = openV2(self, mounts, limits);
      if (v2.isPresent()) {
        return new Opened(v2.get());
      }
      return new Refused(
          "no cgroup the host can write offers the memory and pids controllers (cgroup v2 with"
              + " them delegated to the host, or cgroup v1 memory and pids writable by it)");
    } catch (IOException | RuntimeException e) {
      return new Refused("the host's cgroups cannot be read or written: " + e.getMessage());
    }
  }

  /** Each mount of /proc/self/mountinfo as {mount point, type, super options}. */
  private static List<String[]> mounts() throws IOException {
    List<String[]> mounts = new ArrayList<>();
    for (String line : Files.readAllLines(Path.of("/proc/self/mountinfo"))) {
      String[] halves = line.split(" - ", 2);
      String[] before = halves[0].split(" ");
      String[] after = halves.length > 1 ? halves[1].split(" ") : new String[0];
      if (before.length > 4 && after.length > 2) {
        mounts.add(new String[] {before[4], after[0], after[2]});
      }
    }
    return mounts;
  }

  private static Optional<ControlGroups> openV1(
      String self, List<String[]> mounts, ExecConfig.Limits limits) throws IOException {
    Map<String, Path> owns = new LinkedHashMap<>();
    for (String controller : List.of("memory", "pids", "cpu")) {
      Optional<Path> own = ownV1(self, mounts, controller);
      if (own.isPresent() && Files.isWritable(own.get())) {
        owns.put(controller, own.get());
      } else if (!controller.equals("cpu")) {
        // The weight is a nicety; memory and pids are the containment.
        return Optional.empty();
      }
    }
    String name = PREFIX + ProcessHandle.current().pid() + "-" + HOSTS.incrementAndGet();
    Map<String, Path> host = new LinkedHashMap<>();
    for (Map.Entry<String, Path> own : owns.entrySet()) {
      removeStale(own.getValue());
      Path group = own.getValue().resolve(name);
      Files.createDirectories(group);
      host.put(own.getKey(), group);
    }
    ControlGroups groups = new ControlGroups(false, host, limits);
    try {
      String total = Long.toString(limits.hostMemoryBytes());
      writeTo(host.get("memory"), "memory.limit_in_bytes", total, false);
      writeTo(host.get("memory"), "memory.memsw.limit_in_bytes", total, true);
    } catch (IOException | RuntimeException e) {
      groups.close();
      throw e;
    }
    return Optional.of(groups);
  }

  /** The host's own group in the v1 hierarchy of a controller. */
  private static Optional<Path> ownV1(String self, List<String[]> mounts, String controller) {
    Optional<String> mount =
        mounts.stream()
            .filter(m -> m[1].equals("cgroup") && List.of(m[2].split(",")).contains(controller))
            .map(m -> m[0])
            .findFirst();
    if (mount.isEmpty()) {
      return Optional.empty();
    }
    for (String line : self.split("\n")) {
      String[] parts = line.split(":", 3);
      if (parts.length == 3 && List.of(parts[1].split(",")).contains(controller)) {
        return Optional.of(Path.of(mount.get(), parts[2].substring(1)));
      }
    }
    return Optional.empty();
  }

  private static Optional<ControlGroups> openV2(
      String self, List<String[]> mounts, ExecConfig.Limits limits) throws IOException {
    Optional<String> mount =
        mounts.stream().filter(m -> m[1].equals("cgroup2")).map(m -> m[0]).findFirst();
    Optional<String> path =
        self.lines().filter(line -> line.startsWith("0::")).map(l -> l.substring(3)).findFirst();
    if (mount.isEmpty() || path.isEmpty()) {
      return Optional.empty();
    }
    Path own = Path.of(mount.get(), path.get().substring(1));
    Path controllers = own.resolve("cgroup.controllers");
    if (!Files.isWritable(own) || !Files.exists(controllers)) {
      return Optional.empty();
    }
    List<String> offered = List.of(Files.readString(controllers).strip().split(" "));
    if (!offered.containsAll(List.of("memory", "pids"))) {
      return Optional.empty();
    }
    removeStale(own);
    String enable = offered.contains("cpu") ? "+memory +pids +cpu" : "+memory +pids";
    try {
      Files.writeString(own.resolve("cgroup.subtree_control"), enable);
    } catch (IOException busy) {
      // The host's own group holds processes, so it may not give controllers to children: the
      // host moves itself into a leaf, when the group holds no process but its own.
      List<String> processes = Files.readAllLines(own.resolve("cgroup.procs"));
      String pid = Long.toString(ProcessHandle.current().pid());
      if (!processes.stream().allMatch(pid::equals)) {
        return Optional.empty();
      }
      Path leaf = own.resolve(PREFIX + "jvm-" + pid);
      Files.createDirectories(leaf);
      Files.writeString(leaf.resolve("cgroup.procs"), pid);
      Files.writeString(own.resolve("cgroup.subtree_control"), enable);
    }
    Path group =
        own.resolve(PREFIX + ProcessHandle.current().pid() + "-" + HOSTS.incrementAndGet());
    Files.createDirectories(group);
    Files.writeString(group.resolve("cgroup.subtree_control"), enable);
    ControlGroups groups = new ControlGroups(true, Map.of("", group), limits);
    try {
      writeTo(group, "memory.max", Long.toString(limits.hostMemoryBytes()), false);
      writeTo(group, "memory.swap.max", "0", true);
    } catch (IOException | RuntimeException e) {
      groups.close();
      throw e;
    }
    return Optional.of(groups);
  }

  /** Which kind of cgroups these are, for the log. */
  String kind() {
    return v2 ? "cgroup v2" : "cgroup v1 (" + String.join(", ", host.keySet()) + ")";
  }

  /**
   * A new group for one call, with its limits written.
   *
   * @throws IOException when it cannot be made: the call must not run without it
   */
  Call enter() throws IOException {
    String name = "call-" + calls.incrementAndGet();
    Map<String, Path> made = new LinkedHashMap<>();
    try {
      for (Map.Entry<String, Path> each : host.entrySet()) {
        Path group = each.getValue().resolve(name);
        Files.createDirectory(group);
        made.put(each.getKey(), group);
      }
      Call call = new Call(made);
      long memory = limits.memoryBytes();
      if (v2) {
        call.write("", "memory.max", Long.toString(memory));
        writeTo(made.get(""), "memory.swap.max", "0", true);
        call.write("", "memory.oom.group", "1");
        call.write("", "pids.max", Integer.toString(limits.processes()));
        writeTo(made.get(""), "cpu.weight", Integer.toString(limits.cpuWeight()), true);
      } else {
        call.write("memory", "memory.limit_in_bytes", Long.toString(memory));
        writeTo(made.get("memory"), "memory.memsw.limit_in_bytes", Long.toString(memory), true);
        call.write("pids", "pids.max", Integer.toString(limits.processes()));
        if (made.containsKey("cpu")) {
          // v1 shares: 1024 is the host's other work, as weight 100 is on v2.
          call.write(
              "cpu", "cpu.shares", Long.toString(Math.max(2, limits.cpuWeight() * 1024L / 100)));
        }
      }
      return call;
    } catch (IOException e) {
      made.values().forEach(ControlGroups::removeQuietly);
      throw e;
    }
  }

  /**
   * One call's groups: the files a process joins them by, what limit ended it, and its end, which
   * kills whatever still runs in them and removes them.
   */
  final class Call implements AutoCloseable {
    private final Map<String, Path> groups;

    private Call(Map<String, Path> groups) {
      this.groups = groups;
    }

    /** The {@code cgroup.procs} files a process writes its pid to, to join every group. */
    List<Path> joins() {
      return groups.values().stream().map(group -> group.resolve("cgroup.procs")).toList();
    }

    /**
     * The limit that has stopped something in the call: {@code memory} when the kernel killed a
     * process for it, {@code processes} when a fork was refused for it; empty otherwise.
     */
    Optional<String> limitReached() {
      Path memory = groups.get(v2 ? "" : "memory");
      String oom = read(memory.resolve(v2 ? "memory.events" : "memory.oom_control"));
      if (counter(oom, "oom_kill") > 0) {
        return Optional.of("memory");
      }
      Path pids = groups.get(v2 ? "" : "pids");
      if (counter(read(pids.resolve("pids.events")), "max") > 0) {
        return Optional.of("processes");
      }
      return Optional.empty();
    }

    /** The most memory the call used at once, when the kernel says. */
    Optional<Long> peakMemory() {
      Path memory = groups.get(v2 ? "" : "memory");
      String peak = read(memory.resolve(v2 ? "memory.peak" : "memory.max_usage_in_bytes")).strip();
      try {
        return peak.isEmpty() ? Optional.empty() : Optional.of(Long.parseLong(peak));
      } catch (NumberFormatException e) {
        return Optional.empty();
      }
    }

    /** Kills every process in the call's groups, until none is left or the time is up. */
    void kill(Duration within) {
      long end = System.nanoTime() + within.toNanos();
      Path procs = joins().getFirst();
      while (System.nanoTime() < end) {
        List<String> pids = lines(procs);
        if (pids.isEmpty()) {
          return;
        }
        for (String pid : pids) {
          try {
            ProcessHandle.of(Long.parseLong(pid.strip())).ifPresent(ProcessHandle::destroyForcibly);
          } catch (NumberFormatException e) {
            // Not a pid: nothing to kill.
          }
        }
        try {
          Thread.sleep(5);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
      }
    }

    private void write(String controller, String file, String value) throws IOException {
      writeTo(groups.get(controller), file, value, false);
    }

    /** Kills what is left and removes the groups. */
    @Override
    public void close() {
      kill(Duration.ofSeconds(5));
      groups.values().forEach(ControlGroups::removeQuietly);
    }
  }

  private static void writeTo(Path group, String file, String value, boolean optional)
      throws IOException {
    Path path = group.resolve(file);
    if (optional && !Files.exists(path)) {
      return;
    }
    Files.writeString(path, value);
  }

  private static String read(Path file) {
    try {
      return Files.readString(file);
    } catch (IOException e) {
      return "";
    }
  }

  private static List<String> lines(Path file) {
    String text = read(file).strip();
    return text.isEmpty() ? List.of() : List.of(text.split("\n"));
  }

  /** The number after a key in a flat-keyed cgroup file ("oom_kill 1"), 0 when absent. */
  private static long counter(String text, String key) {
    for (String line : text.split("\n")) {
      String[] parts = line.strip().split(" ");
      if (parts.length == 2 && parts[0].equals(key)) {
        try {
          return Long.parseLong(parts[1]);
        } catch (NumberFormatException e) {
          return 0;
        }
      }
    }
    return 0;
  }

  /**
   * Removes the groups of hosts that are gone (their pid no longer runs, or is this host's own from
   * an earlier life), killing what still runs in them first.
   */
  private static void removeStale(Path own) throws IOException {
    try (DirectoryStream<Path> groups = Files.newDirectoryStream(own, PREFIX + "*")) {
      for (Path group : groups) {
        String rest = group.getFileName().toString().substring(PREFIX.length());
        long pid;
        try {
          // toolhost-<pid>-<n>, or toolhost-jvm-<pid>: the leaf a v2 host moved itself into.
          pid = Long.parseLong(rest.replaceFirst("^jvm-", "").split("-", 2)[0]);
        } catch (NumberFormatException e) {
          continue; // not a host's
        }
        if (ProcessHandle.of(pid).isPresent()) {
          continue;
        }
        LOG.info("Removing the cgroup {} of a host that is gone", group);
        removeTree(group);
      }
    }
  }

  /** Kills every process in a group and its children, then removes them, deepest first. */
  private static void removeTree(Path group) throws IOException {
    try (DirectoryStream<Path> children = Files.newDirectoryStream(group, Files::isDirectory)) {
      for (Path child : children) {
        removeTree(child);
      }
    }
    for (int attempt = 0;
        attempt < 100 && !lines(group.resolve("cgroup.procs")).isEmpty();
        attempt++) {
      for (String pid : lines(group.resolve("cgroup.procs"))) {
        ProcessHandle.of(Long.parseLong(pid.strip())).ifPresent(ProcessHandle::destroyForcibly);
      }
      try {
        Thread.sleep(10);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
    }
    removeQuietly(group);
  }

  private static void removeQuietly(Path group) {
    try {
      // A cgroup directory is removed with rmdir while it still lists its control files.
      Files.deleteIfExists(group);
    } catch (IOException e) {
      LOG.debug("The cgroup {} stays: {}", group, e.getMessage());
    }
  }

  /**
   * What empties the host's groups the moment the host dies: a shell, not tied to the host's life,
   * that reads its stdin (a pipe from the host) until the end, which comes when the host closes it
   * or the kernel does because the host died ({@code kill -9} included); then it kills every
   * process in the call groups, again until none is left, and removes the groups. So the processes
   * of a call never outlive their host even where bubblewrap's own parent-death signal was lost (it
   * is cleared by a change of credentials, and the sandbox changes them), and a host that never
   * starts again leaves nothing; a host that does start also removes a dead one's groups.
   */
  private static Optional<Process> startReaper(java.util.Collection<Path> groups) {
    List<String> command = new ArrayList<>();
    command.addAll(
        List.of(
            "/bin/sh",
            "-c",
            "while read -r _; do :; done;"
                + " for i in 1 2 3 4 5 6 7 8 9 10; do"
                + " for g in \"$@\"; do for f in \"$g\"/*/cgroup.procs; do"
                + " [ -f \"$f\" ] && xargs -r kill -9 < \"$f\" 2>/dev/null; done; done;"
                + " sleep 0.1; done;"
                + " for g in \"$@\"; do rmdir \"$g\"/*/ \"$g\" 2>/dev/null; done; exit 0",
            "toolhost-cgroup-reaper"));
    groups.forEach(group -> command.add(group.toString()));
    try {
      return Optional.of(
          new ProcessBuilder(command)
              .redirectOutput(ProcessBuilder.Redirect.DISCARD)
              .redirectError(ProcessBuilder.Redirect.DISCARD)
              .start());
    } catch (IOException e) {
      LOG.warn(
          "The reaper of the host's cgroups did not start ({}): if the host is killed, its calls'"
              + " processes are ended only when a host starts again",
          e.getMessage());
      return Optional.empty();
    }
  }

  /** The reaper, for tests that stand in for the host's death by closing its stdin. */
  Optional<Process> reaper() {
    return reaper;
  }

  /** The host's group of a controller ({@code memory}, {@code pids}, {@code cpu}; "" on v2). */
  Optional<Path> hostGroup(String controller) {
    return Optional.ofNullable(host.get(v2 ? "" : controller));
  }

  /** Removes the host's groups; calls still running are killed first. */
  @Override
  public void close() {
    reaper.ifPresent(
        process -> {
          try {
            process.getOutputStream().close();
            process.waitFor(5, java.util.concurrent.TimeUnit.SECONDS);
          } catch (IOException e) {
            process.destroyForcibly();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        });
    for (Path group : host.values()) {
      try {
        removeTree(group);
      } catch (IOException e) {
        LOG.debug("The cgroup {} stays: {}", group, e.getMessage());
      }
    }
  }
}
