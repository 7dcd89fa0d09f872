package dev.toolhost.exec;

import dev.toolhost.core.ToolException;
import java.io.IOException;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NotDirectoryException;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.UserPrincipal;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * A beneath is an open descriptor of a directory reached from a trusted base directory one name at
 * a time, each step an {@code openat} of the previous step's descriptor with {@code O_NOFOLLOW}, so
 * that every file it opens lies beneath the base whatever runs beside it.
 *
 * <p>Why this cannot be raced: a path checked and then opened by name is resolved twice, and a
 * process of the sandbox that renames a directory of the path to a symbolic link between the two (a
 * {@code renameat2(RENAME_EXCHANGE)} loop) sends the open out of the workspace. Here no name is
 * ever resolved from the root of the file system after the base: each step opens one name (never
 * {@code .}, {@code ..} or one holding a slash) relative to the descriptor of the directory the
 * previous step opened, with {@code O_NOFOLLOW}, so a link met at any step fails the open ({@code
 * ELOOP}) instead of being followed; a directory renamed away after it was opened keeps the
 * descriptor on the same directory, still beneath the base (the sandbox cannot move a directory out
 * of its workspace: it sees nothing else writable). The base itself is the session's workspace or a
 * configured writable path, which only the host names. The JDK's {@link SecureDirectoryStream} is
 * the {@code openat}/{@code fstatat}/{@code fchown} API this needs, so no native call is made.
 *
 * <p>What it does not do: a name that is a FIFO when opened blocks the open until a writer comes;
 * callers check the type first ({@link #attributes}), which a swap between check and open can still
 * defeat, leaving that one call's thread waiting (never an open outside the base). Not thread-safe;
 * close it after use.
 */
final class Beneath implements AutoCloseable {

  private final SecureDirectoryStream<Path> directory;
  private final Path path;

  private Beneath(SecureDirectoryStream<Path> directory, Path path) {
    this.directory = directory;
    this.path = path;
  }

  /**
   * Opens the directory at {@code names} beneath {@code base}.
   *
   * @param base a directory only the host names (a workspace, a configured writable path)
   * @param names the names of the directories to walk through, each a single name
   * @param named the path as the model wrote it, for error messages
   * @throws java.nio.file.NoSuchFileException when a directory on the way does not exist
   * @throws ToolException as {@code invalid_arguments} when a name on the way is a link or not a
   *     directory
   */
  static Beneath open(Path base, List<String> names, String named) throws IOException {
    DirectoryStream<Path> opened = Files.newDirectoryStream(base);
    if (!(opened instanceof SecureDirectoryStream<Path> secure)) {
      opened.close();
      throw new IOException(
          "this platform has no descriptor-relative file API; the file tool cannot run safely");
    }
    Beneath current = new Beneath(secure, base);
    try {
      for (String name : names) {
        Beneath next = current.descend(name, named);
        current.close();
        current = next;
      }
      return current;
    } catch (IOException | RuntimeException e) {
      current.close();
      throw e;
    }
  }

  /** The directory's path as the host names it (for messages and structured results). */
  Path path() {
    return path;
  }

  /** The directory named {@code name} in this one, opened without following a link. */
  Beneath descend(String name, String named) throws IOException {
    try {
      SecureDirectoryStream<Path> child =
          directory.newDirectoryStream(single(name), LinkOption.NOFOLLOW_LINKS);
      return new Beneath(child, path.resolve(name));
    } catch (NotDirectoryException e) {
      throw ToolException.invalidArguments(
          "'" + named + "': '" + name + "' on the way is not a directory.");
    } catch (java.nio.file.NoSuchFileException e) {
      throw e;
    } catch (FileSystemException e) {
      throw refusal(e, name, named);
    }
  }

  /**
   * The attributes of {@code name} in this directory, of the name itself ({@code fstatat} with
   * {@code AT_SYMLINK_NOFOLLOW}: a link is described, not followed, and nothing is opened).
   */
  BasicFileAttributes attributes(String name) throws IOException {
    return directory
        .getFileAttributeView(single(name), BasicFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
        .readAttributes();
  }

  /** Opens {@code name} in this directory with the given options, never following a link. */
  SeekableByteChannel channel(String name, Set<? extends OpenOption> options, String named)
      throws IOException {
    Set<OpenOption> all = new HashSet<>(options);
    all.add(LinkOption.NOFOLLOW_LINKS);
    try {
      return directory.newByteChannel(single(name), all);
    } catch (java.nio.file.FileAlreadyExistsException | java.nio.file.NoSuchFileException e) {
      throw e;
    } catch (FileSystemException e) {
      throw refusal(e, name, named);
    }
  }

  /** Gives {@code name} in this directory to the given user, without following a link. */
  void own(String name, UserPrincipal owner) throws IOException {
    directory
        .getFileAttributeView(single(name), PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
        .setOwner(owner);
  }

  /** Removes {@code name} from this directory ({@code unlinkat}), when it is there. */
  void delete(String name) throws IOException {
    try {
      directory.deleteFile(single(name));
    } catch (java.nio.file.NoSuchFileException e) {
      // Already gone.
    }
  }

  /** Renames {@code from} to {@code to} within this directory ({@code renameat}), replacing it. */
  void rename(String from, String to) throws IOException {
    directory.move(single(from), directory, single(to));
  }

  /** The names in this directory, in no order, at most {@code max}; the count of all of them. */
  Listing names(int max) {
    List<String> names = new ArrayList<>();
    int total = 0;
    for (Path entry : directory) {
      total++;
      if (names.size() < max) {
        names.add(entry.getFileName().toString());
      }
    }
    return new Listing(names, total);
  }

  /** A directory's names, at most as many as asked for, and how many it holds. */
  record Listing(List<String> names, int total) {}

  /**
   * The one name as a relative path of one element: the JDK resolves an absolute or many-element
   * path against the root or through links, which this class exists to avoid.
   */
  private static Path single(String name) {
    if (name.isEmpty() || name.equals(".") || name.equals("..") || name.indexOf('/') >= 0) {
      throw new IllegalArgumentException("not a single name: '" + name + "'");
    }
    return Path.of(name);
  }

  private static ToolException refusal(FileSystemException e, String name, String named) {
    String reason = e.getReason() == null ? "" : e.getReason();
    // ELOOP: O_NOFOLLOW met a link.
    if (reason.contains("symbolic links") || reason.contains("ELOOP")) {
      return ToolException.invalidArguments(
          "The path '"
              + named
              + "' leads through a symbolic link ('"
              + name
              + "'); the file tool does not follow links.");
    }
    return ToolException.invalidArguments(
        "'" + named + "' cannot be opened at '" + name + "': " + reason);
  }

  @Override
  public void close() throws IOException {
    directory.close();
  }
}
