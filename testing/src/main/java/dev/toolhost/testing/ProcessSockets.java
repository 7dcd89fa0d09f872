package dev.toolhost.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;
import java.util.stream.Stream;

/**
 * Process sockets are this process's own TCP sockets, read from Linux's {@code /proc}: the socket
 * inodes of its descriptors, matched against the kernel's tables. A test counts what this process
 * holds, so another build using the same server beside it changes nothing, and sees a server on
 * virtual threads, which the JVM does not list among its threads. Empty where there is no {@code
 * /proc}.
 */
public final class ProcessSockets {

  private static final String LISTEN = "0A";
  private static final String ESTABLISHED = "01";

  private ProcessSockets() {}

  /** The sockets this process listens on, as {@code inode local-address}. */
  public static Set<String> listening() {
    return matching(fields -> fields[3].equals(LISTEN));
  }

  /** How many connections this process holds to the given port on any host. */
  public static long connectedTo(int port) {
    String remote = String.format(":%04X", port);
    return matching(fields -> fields[3].equals(ESTABLISHED) && fields[2].endsWith(remote)).size();
  }

  private static Set<String> matching(Predicate<String[]> row) {
    Path fds = Path.of("/proc/self/fd");
    if (!Files.isDirectory(fds)) {
      return Set.of();
    }
    Set<String> inodes = new HashSet<>();
    try (Stream<Path> descriptors = Files.list(fds)) {
      descriptors.forEach(
          descriptor -> {
            try {
              String target = Files.readSymbolicLink(descriptor).toString();
              if (target.startsWith("socket:[")) {
                inodes.add(target.substring(8, target.length() - 1));
              }
            } catch (IOException closedMeanwhile) {
              // Closed while the list was read: not open any more.
            }
          });
      Set<String> found = new HashSet<>();
      for (String table : List.of("/proc/self/net/tcp", "/proc/self/net/tcp6")) {
        for (String line : Files.readAllLines(Path.of(table))) {
          // local address, remote address, state and inode, in the kernel's hex.
          String[] fields = line.strip().split("\\s+");
          if (fields.length > 9 && inodes.contains(fields[9]) && row.test(fields)) {
            found.add(fields[9] + " " + fields[1]);
          }
        }
      }
      return found;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
