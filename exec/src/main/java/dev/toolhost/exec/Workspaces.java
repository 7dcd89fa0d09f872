package dev.toolhost.exec;

import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ToolException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Workspaces are the per-session directories under the configured root, and the one place that
 * decides whether a path a model names lies inside what it may touch: its workspace and the
 * configured writable paths, never through a symbolic link that leads out, never a file with other
 * hard links, never a protected path (the host's own files, a repository's {@code .git/hooks} and
 * {@code .git/config}).
 *
 * <p>A session's directory is named after the session id when that is a plain name, else after a
 * hash of it; a call with no session uses {@code default}. When sandboxed processes run as another
 * user than the host (a root host), the directories and files made here are given to that user, so
 * that the sandbox can write what the file tool wrote.
 */
final class Workspaces {

  private static final Pattern PLAIN = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.-]{0,63}");

  private final Path root;
  private final List<Path> writable;
  private final List<Path> protectedPaths;
  private final Optional<Integer> owner;

  Workspaces(ExecConfig config, Optional<Integer> owner) {
    this.root = config.workspaceRoot();
    this.writable = config.writablePaths();
    this.protectedPaths = config.protectedPaths();
    this.owner = owner;
  }

  /**
   * Makes the root if it is missing (traversable by the sandbox user, not listable).
   *
   * @throws IOException when it cannot be made, or the sandbox user cannot reach it
   */
  void prepare() throws IOException {
    Files.createDirectories(root);
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

  /** The session's workspace (its real path), made when missing. */
  Path session(Optional<String> sessionId) {
    String name = sessionId.filter(id -> PLAIN.matcher(id).matches()).orElse(null);
    if (name == null) {
      name = sessionId.map(Workspaces::hashed).orElse("default");
    }
    if (name.equals(".") || name.equals("..")) {
      name = hashed(name);
    }
    Path workspace = root.resolve(name);
    try {
      if (!Files.isDirectory(workspace, LinkOption.NOFOLLOW_LINKS)) {
        Files.createDirectories(workspace);
        Files.setPosixFilePermissions(workspace, PosixFilePermissions.fromString("rwx------"));
        own(workspace);
      }
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
