package dev.toolhost.exec;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.core.ToolResult;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The file tool against a process of its own session that swaps a directory of the path with a
 * symbolic link to a host directory ({@code renameat2(RENAME_EXCHANGE)} in a loop), for read,
 * write, append and list at once: no operation may reach the host directory. The race runs for
 * {@code toolhost.test.raceSeconds} seconds (15 by default).
 */
@Timeout(180)
class FileRaceTest {

  private static final int SECONDS = Integer.getInteger("toolhost.test.raceSeconds", 15);

  /** Swaps d and l (a link to the host directory) until its time is up; prints the swaps. */
  private static final String RACER =
      """
      import ctypes, os, time
      libc = ctypes.CDLL(None, use_errno=True)
      libc.renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                                 ctypes.c_uint]
      AT_FDCWD, RENAME_EXCHANGE = -100, 2
      end, swaps = time.time() + %d, 0
      print('racing', flush=True)
      while time.time() < end:
          if libc.renameat2(AT_FDCWD, b'd', AT_FDCWD, b'l', RENAME_EXCHANGE) == 0:
              swaps += 1
      # Leave d as the directory.
      if os.path.islink('d'):
          libc.renameat2(AT_FDCWD, b'd', AT_FDCWD, b'l', RENAME_EXCHANGE)
      print('swaps', swaps)
      """;

  @RegisterExtension static final ExecFixture fixture = ExecFixture.create();
  private static Path host;

  @BeforeAll
  static void start() throws Exception {
    // A host directory the sandbox may not write (shown read-only inside), as root's would be.
    host = Files.createDirectory(fixture.outside.resolve("host-dir"));
    Files.setPosixFilePermissions(host, PosixFilePermissions.fromString("rwxr-xr-x"));
    Files.writeString(host.resolve("f"), "HOST FILE\n");
    Files.writeString(host.resolve("host-only-entry"), "x");
  }

  @Test
  void aRenameRaceNeverTakesReadWriteAppendOrListOutOfTheWorkspace() throws Exception {
    fixture.call(
        "file",
        Map.of("operation", "write", "path", "racer.py", "content", RACER.formatted(SECONDS)));
    assertThat(
            fixture
                .shell("mkdir -p d && printf 'inside\\n' > d/f && ln -sfn " + host + " l")
                .get("exit_code")
                .asInt())
        .isZero();
    Thread racer = Thread.ofVirtual().start(() -> fixture.shell("python3 racer.py", SECONDS + 20));
    // The race is on once d has been seen as a link at least once.
    long waitUntil = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (!Files.isSymbolicLink(fixture.workspace().resolve("d"))
        && System.nanoTime() < waitUntil) {
      Thread.onSpinWait();
    }

    AtomicInteger done = new AtomicInteger();
    AtomicInteger refused = new AtomicInteger();
    ConcurrentLinkedQueue<String> escapes = new ConcurrentLinkedQueue<>();
    long end = System.nanoTime() + Duration.ofSeconds(SECONDS - 2).toNanos();
    // Each calls the file tool over and over until the end, counting what went through and not.
    Function<Operation, Thread> calling = operation -> loop(end, done, refused, operation);
    List<Thread> workers =
        List.of(
            calling.apply(
                i -> {
                  ToolResult read =
                      fixture.call("file", Map.of("operation", "read", "path", "d/f"));
                  if (read.text().contains("HOST FILE")) {
                    escapes.add("read returned the host's file");
                  }
                  return read;
                }),
            calling.apply(
                i ->
                    fixture.call(
                        "file",
                        Map.of("operation", "write", "path", "d/w-" + i, "content", "written\n"))),
            calling.apply(
                i ->
                    fixture.call(
                        "file",
                        Map.of("operation", "append", "path", "d/f", "content", "appended\n"))),
            calling.apply(
                i -> {
                  ToolResult list = fixture.call("file", Map.of("operation", "list", "path", "d"));
                  if (list.text().contains("host-only-entry")) {
                    escapes.add("list showed the host's directory");
                  }
                  return list;
                }));
    for (Thread worker : workers) {
      worker.join();
    }
    racer.join(Duration.ofSeconds(SECONDS + 30));

    try (Stream<Path> entries = Files.list(host)) {
      assertThat(entries.map(path -> path.getFileName().toString()))
          .containsExactlyInAnyOrder("f", "host-only-entry");
    }
    assertThat(host.resolve("f")).hasContent("HOST FILE");
    assertThat(escapes).isEmpty();
    // The race was live: some operations met the link and were refused, others went through.
    assertThat(refused.get()).isPositive();
    assertThat(done.get()).isPositive();
  }

  private interface Operation {
    ToolResult run(int i) throws IOException;
  }

  private static Thread loop(
      long end, AtomicInteger done, AtomicInteger refused, Operation operation) {
    return Thread.ofVirtual()
        .start(
            () -> {
              for (int i = 0; System.nanoTime() < end; i++) {
                try {
                  ToolResult result = operation.run(i);
                  (result instanceof ToolResult.Success ? done : refused).incrementAndGet();
                } catch (IOException e) {
                  throw new java.io.UncheckedIOException(e);
                }
              }
            });
  }
}
