package dev.toolhost.exec;

import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ToolException;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Workspaces are the per-session directories under the configured root, and the one place that
 * decides whether a path a model names lies inside what it may touch: its workspace and the
 * configured writable paths, never through a symbolic link that leads out, never a file with other
 * hard links, never a protected path (the host's own files, a repository's {@code .git/hooks} and
 * {@code .git/config}).
 *
 * <p>A workspace is its user's and its session's: a call that acts for a user reaches the directory
 * named after a hash of its user and session ({@code _u-} and hex, a name no session id is given),
 * so that two users who send one session id, or who both send none, share no workspace. A call with
 * no user (the operator's, an agent's own run) reaches the directory named after its session id
 * when that is a plain name, else after a hash of it; with no session either, {@code default}. When
 * sandboxed processes run as another user than the host (a root host), the directories and files
 * made here are given to that user, so that the sandbox can write what the file tool wrote.
 *
 * <p>Each workspace holds at most {@link ExecConfig.Limits#workspaceBytes}. On a root host with
 * loop devices, the kernel keeps that: a new workspace is a file system of its own (an ext4 image
 * of that size under {@code .images/} in the root, mounted {@code nosuid,nodev} on the workspace),
 * so a write past it fails with {@code ENOSPC}, for the file tool and sandboxed processes alike,
 * and nothing else is lost. Elsewhere (or for a workspace made before the quota) the file tool
 * counts the workspace before it writes, and sandboxed processes are held to the size of a file;
 * the log says so once.
 */
final class Workspaces implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(Workspaces.class);

  private static final Pattern PLAIN = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.-]{0,63}");

  private final Path root;
  private final List<Path> writable;
  private final List<Path> protectedPaths;
  private final Optional<Integer> owner;
  private final long quota;
  private final java.time.Duration ttl;
  private final Set<Path> mounted = ConcurrentHashMap.newKeySet();
  private final Map<Path, java.nio.file.FileStore> stores = new ConcurrentHashMap<>();
  private volatile boolean kernelQuota;

  Workspaces(ExecConfig config, Optional<Integer> owner) {
    this.root = config.workspaceRoot();
    this.writable = config.writablePaths();
    this.protectedPaths = config.protectedPaths();
    this.owner = owner;
    this.quota = config.limits().workspaceBytes();
    this.ttl = config.workspaceTtl();
  }

  /** Where a checked path lies, for {@link Beneath}. */
  record Location(
      Path workspace, Path base, List<String> directories, Optional<String> name, Path path) {}

  /**
   * The path a model names, checked as {@link #file} checks it, split into the trusted directory it
   * lies beneath (the workspace, or the configured writable path that holds it), the names of the
   * directories on the way, and its own name (none for the base itself).
   */
  Location locate(Path workspace, String named) {
    Path candidate = file(workspace, named);
    Path base =
        candidate.startsWith(workspace)
            ? workspace
            : writable.stream()
                .filter(candidate::startsWith)
                .max(java.util.Comparator.comparingInt(Path::getNameCount))
                .orElseThrow();
    Path relative = base.relativize(candidate);
    List<String> names = new ArrayList<>();
    for (Path name : relative) {
      if (!name.toString().isEmpty()) {
        names.add(name.toString());
      }
    }
    if (names.isEmpty()) {
      return new Location(workspace, base, List.of(), Optional.empty(), candidate);
    }
    return new Location(
        workspace,
        base,
        List.copyOf(names.subList(0, names.size() - 1)),
        Optional.of(names.getLast()),
        candidate);
  }

  /** The most a workspace holds. */
  long quotaBytes() {
    return quota;
  }

  /** Whether the kernel keeps each new workspace's quota (a file system of its own). */
  boolean kernelQuota() {
    return kernelQuota;
  }

  /**
   * Refuses a write of {@code bytes} that would take the location's workspace past its quota, with
   * a clear message; a workspace of its own file system is asked for its free space, any other is
   * counted (links not followed). Writes to a writable path outside the workspace are not counted.
   */
  void requireRoom(Location location, long bytes) throws IOException {
    if (!location.base().equals(location.workspace())) {
      return;
    }
    long free;
    if (mountedOn(location.workspace())) {
      // The store is looked up once (that reads the mount table); its free space each time.
      free =
          stores
              .computeIfAbsent(
                  location.workspace(),
                  workspace -> {
                    try {
                      return Files.getFileStore(workspace);
                    } catch (IOException e) {
                      throw new java.io.UncheckedIOException(e);
                    }
                  })
              .getUsableSpace();
    } else {
      free = quota - usage(location.workspace());
    }
    if (bytes > free) {
      throw ToolException.invalidArguments(
          "The write needs "
              + bytes
              + " bytes but the workspace has "
              + Math.max(0, free)
              + " left of its quota ("
              + (quota >> 20)
              + " MiB); nothing was changed. Remove files first.");
    }
  }

  /** The bytes of the regular files under a directory, links not followed. */
  private static long usage(Path directory) throws IOException {
    long[] total = {0};
    Files.walkFileTree(
        directory,
        new java.nio.file.SimpleFileVisitor<>() {
          @Override
          public java.nio.file.FileVisitResult visitFile(
              Path file, java.nio.file.attribute.BasicFileAttributes attributes) {
            total[0] += attributes.isRegularFile() ? attributes.size() : 0;
            return java.nio.file.FileVisitResult.CONTINUE;
          }

          @Override
          public java.nio.file.FileVisitResult visitFileFailed(Path file, IOException e) {
            return java.nio.file.FileVisitResult.CONTINUE;
          }
        });
    return total[0];
  }

  /**
   * Makes the root if it is missing (traversable by the sandbox user, not listable).
   *
   * @throws IOException when it cannot be made, or the sandbox user cannot reach it
   */
  void prepare() throws IOException {
    Files.createDirectories(root);
    Optional<String> why = quotaUnavailable();
    kernelQuota = why.isEmpty();
    if (kernelQuota) {
      Path images = root.resolve(IMAGES);
      Files.createDirectories(images);
      Files.setPosixFilePermissions(images, PosixFilePermissions.fromString("rwx------"));
      adoptMounts();
    } else {
      LOG.warn(
          "Workspace quotas ({} MiB) are kept by the file tool only, and sandboxed processes are"
              + " held to the size of a file: {}",
          quota >> 20,
          why.get());
    }
    removeUnused();
    if (owner.isPresent()) {
      Files.setPosixFilePermissions(root, PosixFilePermissions.fromString("rwx--x--x"));
      for (Path parent = root.toRealPath().getParent();
          parent != null;
          parent = parent.getParent()) {
        Set<PosixFilePermission> permissions = Files.getPosixFilePermissions(parent);
        if (!permissions.contains(PosixFilePermission.OTHERS_EXECUTE)) {
          throw new IOException(
              "the workspace root "
                  + root
                  + " cannot be reached by the sandbox user (uid "
                  + owner.get()
                  + "): its parent "
                  + parent
                  + " has mode "
                  + PosixFilePermissions.toString(permissions)
                  + "; give it o+x (chmod o+x "
                  + parent
                  + ") or choose a root elsewhere");
        }
      }
    }
  }

  /** The workspace of a session of no user (its real path), made when missing. */
  Path session(Optional<String> sessionId) {
    return session(Optional.empty(), sessionId);
  }

  /** The workspace of the user's session (its real path), made when missing. */
  Path session(Optional<String> user, Optional<String> sessionId) {
    String name = name(user, sessionId);
    Path workspace = root.resolve(name);
    try {
      if (!Files.isDirectory(workspace, LinkOption.NOFOLLOW_LINKS)) {
        Files.createDirectories(workspace);
        Files.setPosixFilePermissions(workspace, PosixFilePermissions.fromString("rwx------"));
        own(workspace);
      }
      if (kernelQuota && !mountedOn(workspace)) {
        mount(name, workspace);
      }
      // Its time of last use, for removeUnused (the image's, which the sandbox cannot touch).
      Path image = root.resolve(IMAGES).resolve(name + ".img");
      Files.setLastModifiedTime(
          Files.exists(image) ? image : workspace,
          java.nio.file.attribute.FileTime.from(java.time.Instant.now()));
      return workspace.toRealPath();
    } catch (IOException e) {
      throw new ToolException(
          ErrorCode.EXECUTION_FAILED, "The session's workspace cannot be made: " + e.getMessage());
    }
  }

  /** Gives a path the host made inside a workspace to the sandbox user, when that is another. */
  void own(Path path) throws IOException {
    if (owner.isPresent()) {
      Files.setAttribute(path, "unix:uid", owner.get(), LinkOption.NOFOLLOW_LINKS);
      Files.setAttribute(path, "unix:gid", owner.get(), LinkOption.NOFOLLOW_LINKS);
    }
  }

  /** Gives a file the host made in a directory to the sandbox user, by descriptor. */
  void own(Beneath directory, String name) throws IOException {
    if (owner.isPresent()) {
      directory.own(
          name,
          root.getFileSystem()
              .getUserPrincipalLookupService()
              .lookupPrincipalByName(Integer.toString(owner.get())));
    }
  }

  /**
   * The real path of an existing directory the model names (relative to the workspace, or absolute
   * within it or a writable path), for a working directory.
   *
   * @throws ToolException as {@code invalid_arguments} when it is outside, missing or not a
   *     directory
   */
  Path directory(Path workspace, String named) {
    Path candidate = lexical(workspace, named);
    Path real;
    try {
      real = candidate.toRealPath();
    } catch (IOException e) {
      throw ToolException.invalidArguments(
          "The directory '" + named + "' does not exist in the workspace.");
    }
    requireInside(workspace, real, named);
    if (!Files.isDirectory(real)) {
      throw ToolException.invalidArguments("'" + named + "' is not a directory.");
    }
    return real;
  }

  /**
   * The path a model names, checked for the file tool: inside the workspace or a writable path
   * lexically and, through every link that exists, in reality; not protected. The path returned is
   * the lexical one (normalized, absolute), whose existing part resolves inside.
   *
   * @throws ToolException as {@code invalid_arguments} naming why the path is refused
   */
  Path file(Path workspace, String named) {
    Path candidate = lexical(workspace, named);
    // The nearest part that exists must resolve inside: a symlink anywhere on the way that leads
    // out is refused, whether the rest exists yet or not.
    Path existing = candidate;
    while (existing != null && !Files.exists(existing, LinkOption.NOFOLLOW_LINKS)) {
      existing = existing.getParent();
    }
    if (existing != null) {
      Path real;
      try {
        real = existing.toRealPath();
      } catch (IOException e) {
        throw ToolException.invalidArguments(
            "The path '" + named + "' leads through a broken link; refused.");
      }
      requireInside(workspace, real, named);
      if (Files.isSymbolicLink(existing) && existing.equals(candidate)) {
        throw ToolException.invalidArguments(
            "The path '" + named + "' is a symbolic link; the file tool does not follow links.");
      }
      requireUnprotected(workspace, real, named);
    }
    requireUnprotected(workspace, candidate, named);
    return candidate;
  }

  /** The folder under the root that holds the workspaces' images, which no session can be named. */
  private static final String IMAGES = ".images";

  /** Why the kernel cannot keep the quota here; empty when it can. */
  private Optional<String> quotaUnavailable() {
    if (owner.isEmpty()) {
      return Optional.of("the host does not run as root, so it cannot mount a workspace");
    }
    if (!Files.exists(Path.of("/dev/loop-control"))) {
      return Optional.of("this machine has no loop devices (/dev/loop-control)");
    }
    for (String tool : List.of("mkfs.ext4", "mount", "umount")) {
      if (Sandbox.executable(tool).isEmpty()) {
        return Optional.of("'" + tool + "' is not installed");
      }
    }
    return Optional.empty();
  }

  /**
   * Removes the workspaces (and their images) no call used for longer than the config's {@code
   * workspace_ttl}, when the host starts: before any call of this host runs, so no sandboxed
   * process races the removal, which follows no link.
   */
  private void removeUnused() throws IOException {
    java.time.Instant before = java.time.Instant.now().minus(ttl);
    List<Path> old = new ArrayList<>();
    try (java.util.stream.Stream<Path> entries = Files.list(root)) {
      entries
          .filter(path -> !path.getFileName().toString().equals(IMAGES))
          .filter(path -> Files.isDirectory(path, LinkOption.NOFOLLOW_LINKS))
          .forEach(
              path -> {
                Path image = root.resolve(IMAGES).resolve(path.getFileName() + ".img");
                try {
                  Path used = Files.exists(image) ? image : path;
                  if (Files.getLastModifiedTime(used, LinkOption.NOFOLLOW_LINKS)
                      .toInstant()
                      .isBefore(before)) {
                    old.add(path);
                  }
                } catch (IOException e) {
                  LOG.debug("The workspace {} is kept: {}", path, e.getMessage());
                }
              });
    }
    for (Path workspace : old) {
      LOG.info("Removing the workspace {}: unused for longer than {}", workspace, ttl);
      if (mounted.remove(workspace) || mountedOn(workspace)) {
        command("umount", "--lazy", workspace.toString());
      }
      deleteTree(workspace);
      Files.deleteIfExists(root.resolve(IMAGES).resolve(workspace.getFileName() + ".img"));
    }
  }

  private static void deleteTree(Path directory) throws IOException {
    Files.walkFileTree(
        directory,
        new java.nio.file.SimpleFileVisitor<>() {
          @Override
          public java.nio.file.FileVisitResult visitFile(
              Path file, java.nio.file.attribute.BasicFileAttributes attributes)
              throws IOException {
            Files.delete(file);
            return java.nio.file.FileVisitResult.CONTINUE;
          }

          @Override
          public java.nio.file.FileVisitResult postVisitDirectory(Path dir, IOException e)
              throws IOException {
            Files.delete(dir);
            return java.nio.file.FileVisitResult.CONTINUE;
          }
        });
  }

  /**
   * Takes over the workspaces a host that died left mounted, so that this one unmounts them when it
   * closes (they stay usable meanwhile: their images hold what they held).
   */
  private void adoptMounts() throws IOException {
    Path real = root.toRealPath();
    for (String line : Files.readAllLines(Path.of("/proc/self/mountinfo"))) {
      String[] fields = line.split(" ");
      if (fields.length > 4) {
        // Octal escapes (\\040 for a space) are left as they are: no session name has them.
        Path point = Path.of(fields[4]);
        if (real.equals(point.getParent())) {
          mounted.add(root.resolve(point.getFileName()));
        }
      }
    }
  }

  /**
   * Whether a file system of its own is mounted on the workspace (its device is not the root's).
   */
  private boolean mountedOn(Path workspace) throws IOException {
    return !Files.getAttribute(workspace, "unix:dev", LinkOption.NOFOLLOW_LINKS)
        .equals(Files.getAttribute(root, "unix:dev"));
  }

  /**
   * Mounts the workspace's image on it, made first when the workspace is new (an empty directory);
   * a workspace that already holds files and has no image (made before quotas) is left as it is.
   */
  private synchronized void mount(String name, Path workspace) throws IOException {
    if (mountedOn(workspace)) {
      return;
    }
    Path image = root.resolve(IMAGES).resolve(name + ".img");
    if (!Files.exists(image)) {
      try (java.util.stream.Stream<Path> entries = Files.list(workspace)) {
        if (entries.findAny().isPresent()) {
          return;
        }
      }
      try (FileChannel file =
          FileChannel.open(image, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
        Files.setPosixFilePermissions(image, PosixFilePermissions.fromString("rw-------"));
        // Sparse: the image takes only what the workspace holds.
        file.write(java.nio.ByteBuffer.allocate(1), quota - 1);
      }
      String id = Integer.toString(owner.orElseThrow());
      command(
          "mkfs.ext4",
          "-q",
          "-F",
          "-m",
          "0",
          "-E",
          "root_owner=" + id + ":" + id,
          image.toString());
    }
    command("mount", "-o", "loop,nosuid,nodev", image.toString(), workspace.toString());
    mounted.add(workspace);
    Path lost = workspace.resolve("lost+found");
    if (Files.isDirectory(lost, LinkOption.NOFOLLOW_LINKS)) {
      Files.delete(lost);
    }
    Files.setPosixFilePermissions(workspace, PosixFilePermissions.fromString("rwx------"));
  }

  private static void command(String... command) throws IOException {
    Process process =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
            .start();
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    try {
      if (!process.waitFor(60, java.util.concurrent.TimeUnit.SECONDS)) {
        process.destroyForcibly();
        throw new IOException(String.join(" ", command) + " did not end in 60 s");
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
      throw new java.io.InterruptedIOException(command[0] + " was interrupted");
    }
    if (process.exitValue() != 0) {
      throw new IOException(command[0] + " failed: " + output.strip());
    }
  }

  /** Unmounts the workspaces this host mounted; their images keep what they hold. */
  @Override
  public void close() {
    for (Path workspace : mounted) {
      try {
        command("umount", "--lazy", workspace.toString());
      } catch (IOException e) {
        LOG.warn("The workspace {} stays mounted: {}", workspace, e.getMessage());
      }
      mounted.remove(workspace);
      stores.remove(workspace);
    }
  }

  /** Refuses a regular file with more than one hard link: its other name may lie outside. */
  static void requireSingleLink(Path file, String named) throws IOException {
    Object links = Files.getAttribute(file, "unix:nlink", LinkOption.NOFOLLOW_LINKS);
    if (links instanceof Integer count && count > 1) {
      throw ToolException.invalidArguments(
          "The file '"
              + named
              + "' has "
              + count
              + " hard links; a file linked from elsewhere may lie outside the workspace, so the"
              + " file tool refuses it.");
    }
  }

  private Path lexical(Path workspace, String named) {
    if (named.indexOf('\0') >= 0) {
      throw ToolException.invalidArguments("A path may not hold a NUL byte.");
    }
    if (named.isBlank()) {
      throw ToolException.invalidArguments("The path is empty.");
    }
    if (named.getBytes(StandardCharsets.UTF_8).length > 4096) {
      throw ToolException.invalidArguments("The path is longer than 4096 bytes.");
    }
    Path candidate = workspace.resolve(named).normalize();
    if (!candidate.startsWith(workspace) && writable.stream().noneMatch(candidate::startsWith)) {
      throw ToolException.invalidArguments(
          "The path '"
              + named
              + "' is outside the workspace; paths are relative to the workspace ("
              + workspace
              + ")"
              + (writable.isEmpty() ? "." : " or within a configured writable path."));
    }
    return candidate;
  }

  private void requireInside(Path workspace, Path real, String named) {
    boolean inside =
        real.startsWith(workspace)
            || writable.stream().anyMatch(path -> real.startsWith(realOrSelf(path)));
    if (!inside) {
      throw ToolException.invalidArguments(
          "The path '" + named + "' leads out of the workspace through a symbolic link; refused.");
    }
  }

  private void requireUnprotected(Path workspace, Path path, String named) {
    for (Path guarded : protectedPaths) {
      if (path.startsWith(guarded) || path.startsWith(realOrSelf(guarded))) {
        throw ToolException.invalidArguments(
            "The path '" + named + "' is protected (the host's own files); refused.");
      }
    }
    Path relative = path.startsWith(workspace) ? workspace.relativize(path) : path;
    for (int i = 0; i + 1 < relative.getNameCount(); i++) {
      if (relative.getName(i).toString().equals(".git")) {
        String next = relative.getName(i + 1).toString();
        if (next.equals("hooks") || next.equals("config")) {
          throw ToolException.invalidArguments(
              "The path '"
                  + named
                  + "' is protected: a repository's .git/hooks and .git/config run code on the"
                  + " next git command; refused.");
        }
      }
    }
  }

  private static Path realOrSelf(Path path) {
    try {
      return path.toRealPath();
    } catch (IOException e) {
      return path;
    }
  }

  /**
   * The directory name of a user's session: a hash of both for a user (after {@code _}, which no
   * plain session id starts with, so no caller names another user's workspace), else the session id
   * when it is plain, else its hash.
   */
  static String name(Optional<String> user, Optional<String> sessionId) {
    Optional<String> owner = user.filter(named -> !named.isBlank());
    if (owner.isPresent()) {
      // The user, a NUL (which neither holds), and the session: one pair, one name.
      return "_u-" + hashed(owner.get() + "\0" + sessionId.orElse("default")).substring(2);
    }
    String name = sessionId.filter(id -> PLAIN.matcher(id).matches()).orElse(null);
    if (name == null) {
      name = sessionId.map(Workspaces::hashed).orElse("default");
    }
    if (name.equals(".") || name.equals("..")) {
      name = hashed(name);
    }
    return name;
  }

  private static String hashed(String sessionId) {
    try {
      byte[] digest =
          MessageDigest.getInstance("SHA-256").digest(sessionId.getBytes(StandardCharsets.UTF_8));
      return "s-" + HexFormat.of().formatHex(digest, 0, 12);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is always there", e);
    }
  }
}
