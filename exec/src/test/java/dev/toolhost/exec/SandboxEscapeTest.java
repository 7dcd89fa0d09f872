package dev.toolhost.exec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpServer;
import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ToolResult;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import tools.jackson.databind.JsonNode;

/**
 * The escape suite: one test per way out of the sandbox, each against the real bubblewrap on this
 * machine and asserting the exact outcome. The host runs these tests as root, so the sandbox runs
 * as the unprivileged sandbox user; a test that needs root to mean anything says so.
 */
@Timeout(60)
class SandboxEscapeTest {

  @RegisterExtension static final ExecFixture fixture = ExecFixture.create();

  @BeforeAll
  static void start() throws Exception {
    assertThat(fixture.sandbox.unavailable()).isEmpty();
  }

  // ---- the file system ----

  @Test
  void writesOutsideTheWorkspaceFailOnAReadOnlyFileSystem() {
    JsonNode json =
        fixture.shell(
            "echo x > /usr/escaped; echo x > /etc/escaped; echo x > "
                + fixture.outside
                + "/escaped; echo done");

    assertThat(json.get("stderr").asString())
        .isEqualTo(
            "/bin/sh: 1: cannot create /usr/escaped: Read-only file system\n"
                + "/bin/sh: 1: cannot create /etc/escaped: Read-only file system\n"
                + "/bin/sh: 1: cannot create "
                + fixture.outside
                + "/escaped: Read-only file system\n");
    assertThat(fixture.outside.resolve("escaped")).doesNotExist();
    assertThat(Path.of("/usr/escaped")).doesNotExist();
  }

  @Test
  void theHostsOwnDirectoriesAndOtherSessionsAreNotThere() {
    fixture.workspaces.session(java.util.Optional.of("another-session"));

    JsonNode json =
        fixture.shell(
            "ls /root /home /work /var /opt 2>&1 | sort; ls "
                + fixture.base
                + "; ls "
                + fixture.root);

    assertThat(json.get("stdout").asString())
        .isEqualTo(
            "ls: cannot access '/home': No such file or directory\n"
                + "ls: cannot access '/opt': No such file or directory\n"
                + "ls: cannot access '/root': No such file or directory\n"
                + "ls: cannot access '/var': No such file or directory\n"
                + "ls: cannot access '/work': No such file or directory\n"
                // Only the mount points of what is shown: the readable path and the workspace.
                + "outside\nworkspaces\ns1\n");
    assertThat(fixture.root.resolve("another-session")).isDirectory();
  }

  @Test
  void aSymlinkMadeInsideThatLeadsOutCannotBeWrittenThrough() throws IOException {
    JsonNode json =
        fixture.shell("ln -s " + fixture.outside + " out-link && echo x > out-link/escaped");

    assertThat(json.get("exit_code").asInt()).isEqualTo(2);
    assertThat(json.get("stderr").asString())
        .isEqualTo("/bin/sh: 1: cannot create out-link/escaped: Read-only file system\n");
    assertThat(fixture.outside.resolve("escaped")).doesNotExist();
    // The file tool refuses the link in Java, without the sandbox.
    ToolResult viaFile =
        fixture.call(
            "file", Map.of("operation", "write", "path", "out-link/escaped", "content", "x"));
    assertThat(viaFile.isError()).isTrue();
    assertThat(viaFile.text())
        .isEqualTo(
            "The path 'out-link/escaped' leads out of the workspace through a symbolic link;"
                + " refused.");
    assertThat(fixture.outside.resolve("escaped")).doesNotExist();
  }

  @Test
  void aHardLinkToAFileOutsideCannotBeMadeInsideNorWrittenThroughWhenTheHostMadeIt()
      throws IOException {
    JsonNode json = fixture.shell("ln " + fixture.outside + "/public.txt hard");

    assertThat(json.get("exit_code").asInt()).isEqualTo(1);
    assertThat(json.get("stderr").asString())
        .isEqualTo(
            "ln: failed to create hard link 'hard' => '"
                + fixture.outside
                + "/public.txt': Invalid cross-device link\n");

    // A hard link that exists anyway (made on the host; a workspace of its own file system
    // holds none to a file outside, so this one links a file of the workspace): refused.
    Path original = Files.writeString(fixture.workspace().resolve("original"), "anyone may read");
    Files.createLink(fixture.workspace().resolve("host-made-link"), original);
    ToolResult write =
        fixture.call(
            "file", Map.of("operation", "write", "path", "host-made-link", "content", "changed"));
    assertThat(write.isError()).isTrue();
    assertThat(write.text())
        .isEqualTo(
            "The file 'host-made-link' has 2 hard links; a file linked from elsewhere may lie"
                + " outside the workspace, so the file tool refuses it.");
    assertThat(original).hasContent("anyone may read");
    assertThat(fixture.outside.resolve("public.txt")).hasContent("anyone may read");
  }

  @Test
  void aFileOnlyRootMayReadCannotBeRead() throws IOException {
    assertThat(Files.getAttribute(fixture.outside.resolve("root-only.txt"), "unix:uid"))
        .as("the test runs as root, so the file is root's")
        .isEqualTo(0);

    JsonNode json = fixture.shell("id -u; cat " + fixture.outside + "/root-only.txt");

    assertThat(json.get("stdout").asString()).isEqualTo("65534\n");
    assertThat(json.get("stderr").asString())
        .isEqualTo("cat: " + fixture.outside + "/root-only.txt: Permission denied\n");
    assertThat(json.get("exit_code").asInt()).isEqualTo(1);
  }

  // ---- privileges ----

  @Test
  void mountIsRefusedByTheKernel() {
    JsonNode json =
        fixture.shell(
            "mount -t tmpfs none /usr; "
                + python(
                    "print(libc.mount(b'none', b'/usr', b'tmpfs', 0, None), ctypes.get_errno())")
                + "; "
                + python(
                    "print(libc.mount(None, b'/usr', None, 0x20 | 0x1000, None), ctypes.get_errno())"));

    assertThat(json.get("stderr").asString())
        .startsWith("mount: /usr: must be superuser to use mount.\n");
    // mount(2) itself: -1 with EPERM, for a new mount and for a remount read-write.
    assertThat(json.get("stdout").asString()).isEqualTo("-1 1\n-1 1\n");
  }

  @Test
  void umountIsRefusedByTheKernel() {
    JsonNode json =
        fixture.shell(
            "umount /tmp; " + python("print(libc.umount2(b'/tmp', 2), ctypes.get_errno())"));

    assertThat(json.get("stderr").asString())
        .isEqualTo("umount: /tmp: must be superuser to unmount.\n");
    assertThat(json.get("stdout").asString()).isEqualTo("-1 1\n");
  }

  @Test
  void mknodOfABlockDeviceIsNotPermitted() {
    JsonNode json = fixture.shell("mknod disk b 8 0");

    assertThat(json.get("exit_code").asInt()).isEqualTo(1);
    assertThat(json.get("stderr").asString()).isEqualTo("mknod: disk: Operation not permitted\n");
    assertThat(fixture.workspace().resolve("disk")).doesNotExist();
  }

  @Test
  void aSetuidCopyOfAShellGainsNothing() throws IOException {
    JsonNode json =
        fixture.shell("cp /bin/sh ./suid-sh && chmod u+s ./suid-sh && ./suid-sh -p -c 'id -u'");

    // The bit can be set on one's own file, but it makes the sandbox user, never root.
    assertThat(json.get("stdout").asString()).isEqualTo("65534\n");
    assertThat(
            Files.getAttribute(
                fixture.workspace().resolve("suid-sh"), "unix:uid", LinkOption.NOFOLLOW_LINKS))
        .isEqualTo(65534);
  }

  @Test
  void unshareOfNewNamespacesIsRefused() {
    JsonNode json =
        fixture.shell(
            "unshare -U true; echo user=$?; unshare -m true; echo mount=$?; unshare -n true; echo net=$?");

    assertThat(json.get("stdout").asString()).isEqualTo("user=1\nmount=1\nnet=1\n");
    assertThat(json.get("stderr").asString())
        .isEqualTo(
            "unshare: unshare failed: Operation not permitted\n"
                + "unshare: unshare failed: Operation not permitted\n"
                + "unshare: unshare failed: Operation not permitted\n");
  }

  @Test
  void theSeccompFilterDeniesPtraceIoUringAndReadingAnotherProcess() {
    assertThat(fixture.sandbox.filtered()).isTrue();

    JsonNode json =
        fixture.shell(
            python(
                    "def call(number, *args):\n"
                        + "    result = libc.syscall(number, *args)\n"
                        + "    return result, ctypes.get_errno()\n"
                        + "print('ptrace', call(101, 0, 0, 0, 0))\n"
                        + "print('io_uring_setup', call(425, 8, ctypes.create_string_buffer(128)))\n"
                        + "print('process_vm_readv', call(310, 1, 0, 0, 0, 0, 0))\n"
                        + "print('bpf', call(321, 0, 0, 0))\n"
                        + "print('clone3', call(435, 0, 0))\n"
                        + "import socket, subprocess\n"
                        + "socket.socketpair()\n"
                        + "print('unix sockets and subprocesses work:',"
                        + " subprocess.run(['true']).returncode)")
                + "; ls /proc/self/fd");

    assertThat(json.get("stdout").asString())
        .isEqualTo(
            "ptrace (-1, 1)\n"
                + "io_uring_setup (-1, 1)\n"
                + "process_vm_readv (-1, 1)\n"
                + "bpf (-1, 1)\n"
                + "clone3 (-1, 38)\n"
                + "unix sockets and subprocesses work: 0\n"
                // stdin, stdout, stderr and ls's own directory: the filter's descriptor is closed.
                + "0\n1\n2\n3\n");
  }

  // ---- the network ----

  @Test
  void aTcpConnectionToTheHostsOwnHttpPortIsRefused() throws IOException {
    AtomicInteger requests = new AtomicInteger();
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext(
        "/",
        exchange -> {
          requests.incrementAndGet();
          exchange.sendResponseHeaders(200, -1);
          exchange.close();
        });
    server.start();
    try {
      int port = server.getAddress().getPort();
      JsonNode json =
          fixture.shell(
              python(
                      "import socket\n"
                          + "try:\n"
                          + "    socket.create_connection(('127.0.0.1', "
                          + port
                          + "), timeout=5)\n"
                          + "    print('connected')\n"
                          + "except OSError as e:\n"
                          + "    print(type(e).__name__, e.errno)")
                  + "; curl -sS -m 5 http://127.0.0.1:"
                  + port
                  + "/ ; echo curl=$?");

      // No socket but AF_UNIX may even be made (the seccomp filter); the namespace has no route.
      assertThat(json.get("stdout").asString()).isEqualTo("PermissionError 1\ncurl=7\n");
      assertThat(requests).hasValue(0);
    } finally {
      server.stop(0);
    }
  }

  @Test
  void aTcpConnectionToAnOutsideAddressFindsNoNetwork() {
    JsonNode json =
        fixture.shell(
            python(
                "import socket\n"
                    + "try:\n"
                    + "    socket.create_connection(('1.1.1.1', 80), timeout=5)\n"
                    + "    print('connected')\n"
                    + "except OSError as e:\n"
                    + "    print(type(e).__name__, e.errno)"));

    assertThat(json.get("stdout").asString()).isEqualTo("PermissionError 1\n");
  }

  @Test
  void dnsResolvesNothing() {
    JsonNode json = fixture.shell("getent hosts example.com; echo getent=$?");

    assertThat(json.get("stdout").asString()).isEqualTo("getent=2\n");
  }

  @Test
  void bashDevTcpFindsNoNetwork() {
    JsonNode json =
        fixture.shell(
            "bash -c 'exec 3<>/dev/tcp/1.1.1.1/80'; echo outside=$?;"
                + " bash -c 'exec 3<>/dev/tcp/127.0.0.1/5672'; echo broker=$?");

    assertThat(json.get("stdout").asString()).isEqualTo("outside=1\nbroker=1\n");
    assertThat(json.get("stderr").asString())
        .isEqualTo(
            "bash: socket: Operation not permitted\n"
                + "bash: line 1: /dev/tcp/1.1.1.1/80: Operation not permitted\n"
                + "bash: socket: Operation not permitted\n"
                + "bash: line 1: /dev/tcp/127.0.0.1/5672: Operation not permitted\n");
  }

  // ---- processes ----

  @Test
  void procShowsOnlyTheSandboxsProcessesAndNoHostEnvironment() {
    JsonNode json =
        fixture.shell(
            "ls -d /proc/[0-9]* | wc -l; cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n'"
                + " | cut -d= -f1 | sort -u");

    List<String> lines = json.get("stdout").asString().lines().toList();
    // bwrap's init, sh, ls's pipeline at most: never the host's hundreds.
    assertThat(Integer.parseInt(lines.getFirst().strip())).isBetween(2, 6);
    assertThat(lines.subList(1, lines.size()))
        .isSubsetOf("HOME", "LANG", "LC_ALL", "PATH", "PWD", "TMPDIR", "TZ");
    assertThat(json.get("stdout").asString()).doesNotContain(ExecFixture.HOST_SECRET);
  }

  @Test
  void aBackgroundJobIsGoneOneSecondAfterTheCallReturns() {
    assertGoneAfterCall("sleep 987001 & echo started", "987001");
  }

  @Test
  void aSetsidProcessIsGoneOneSecondAfterTheCallReturns() {
    assertGoneAfterCall("setsid sleep 987002 > /dev/null 2>&1 & echo started", "987002");
  }

  @Test
  void aNohupProcessIsGoneOneSecondAfterTheCallReturns() {
    assertGoneAfterCall("nohup sleep 987003 > /dev/null 2>&1 & echo started", "987003");
  }

  @Test
  void aDoubleForkedDaemonIsGoneOneSecondAfterTheCallReturns() {
    assertGoneAfterCall("( ( sleep 987004 & ) & ) ; echo started", "987004");
  }

  @Test
  void aProcessThatIgnoresSigtermIsGoneOneSecondAfterItsTimeout() {
    JsonNode json =
        fixture.shell("trap '' TERM; sh -c \"trap '' TERM; sleep 987005\" & sleep 987006", 1);

    assertThat(json.get("timed_out").asBoolean()).isTrue();
    assertThat(json.get("exit_code").asInt()).isEqualTo(137);
    await()
        .pollDelay(Duration.ofSeconds(1))
        .atMost(Duration.ofMillis(1500))
        .until(() -> processesMentioning("98700").isEmpty());
  }

  @Test
  void aForkBombEndsAtItsTimeoutAndLeavesTheHostHealthy() {
    JsonNode json = fixture.shell("bash -c ':(){ :|:& };:'; sleep 30", 3);

    assertThat(json.get("timed_out").asBoolean()).isTrue();
    assertThat(json.get("exit_code").asInt()).isEqualTo(137);
    // Killed with the call's PID namespace and cgroup; on a loaded machine the kernel may take a
    // few seconds to tear down and reap a few hundred processes.
    await()
        .pollDelay(Duration.ofSeconds(1))
        .atMost(Duration.ofSeconds(20))
        .until(() -> processesOfUser(65534) == 0);
    assertThat(fixture.shell("echo healthy").get("stdout").asString()).isEqualTo("healthy\n");
  }

  @Test
  void aMemoryHogMeetsItsLimit() {
    JsonNode json = fixture.shell("python3 -c 'b = b\"x\" * (2 * 1024 ** 3)'");

    // The call's cgroup (1 GiB): the kernel kills the process and the call ends, saying why.
    assertThat(json.get("exit_code").asInt()).isEqualTo(137);
    assertThat(json.get("limit").asString()).isEqualTo("memory");
  }

  @Test
  void anOutputFloodIsCutAndDrainedUntilItsTimeout() {
    JsonNode json = fixture.shell("yes", 2);

    assertThat(json.get("timed_out").asBoolean()).isTrue();
    assertThat(json.get("truncated").asBoolean()).isTrue();
    long written = json.get("stdout_bytes").asLong();
    assertThat(written).isGreaterThan(10L << 20);
    String stdout = json.get("stdout").asString();
    assertThat(stdout.length()).isLessThan(64 * 1024 + 100);
    int shown = stdout.replaceAll("\n\\[output truncated: \\d+ of \\d+ bytes]\n", "").length();
    assertThat(stdout)
        .startsWith("y\ny\n")
        .endsWith("y\ny\n")
        .contains("\n[output truncated: " + (written - shown) + " of " + written + " bytes]\n");
  }

  @Test
  void stdinReadsGetEndOfFileAtOnce() {
    JsonNode json = fixture.shell("cat; read line; echo read=$?", 5);

    assertThat(json.get("stdout").asString()).isEqualTo("read=1\n");
    assertThat(json.get("elapsed_ms").asLong()).isLessThan(3000);
  }

  // ---- the environment ----

  @Test
  void theEnvironmentHoldsNoHostSecretEvenWhenTheConfigPassesItsName() {
    JsonNode json = fixture.shell("env | sort");

    assertThat(json.get("stdout").asString())
        .isEqualTo(
            "HOME="
                + fixture.workspace()
                + "\nLANG=C.UTF-8\nLC_ALL=C.UTF-8\nPATH="
                + ChildEnvironment.PATH
                + "\nPWD="
                + fixture.workspace()
                + "\nTMPDIR=/tmp\nTZ=Europe/Paris\n");
    ToolResult carried =
        fixture.call(
            "exec",
            Map.of("program", "env", "env", Map.of("HARMLESS", "x" + ExecFixture.HOST_SECRET)));
    assertThat(carried.isError()).isTrue();
    assertThat(carried.text())
        .isEqualTo("Refused: an environment variable would carry one of the host's secrets.");
  }

  @Test
  void aBlockedVariableIsRefusedInAnyLetterCase() {
    for (String name :
        List.of(
            "LD_PRELOAD",
            "ld_preload",
            "Ld_Library_Path",
            "pythonPath",
            "node_options",
            "BASH_FUNC_x%%",
            "bash_env",
            "git_config_global",
            "Java_Tool_Options",
            "ifs")) {
      ToolResult result =
          fixture.call("exec", Map.of("program", "true", "env", Map.of(name, "/tmp/x")));

      assertThat(result).as(name).isInstanceOf(ToolResult.Failure.class);
      assertThat(((ToolResult.Failure) result).error().code())
          .isEqualTo(ErrorCode.INVALID_ARGUMENTS);
      assertThat(result.text())
          .as(name)
          .startsWith("Refused: the environment variable '" + name + "' is blocked");
    }
    for (String name : List.of("", "A=B", "A\0B")) {
      ToolResult result = fixture.call("exec", Map.of("program", "true", "env", Map.of(name, "x")));
      assertThat(result.isError()).as("'%s'", name).isTrue();
      assertThat(result.text()).as("'%s'", name).startsWith("Refused: ");
    }
  }

  // ---- helpers ----

  private static void assertGoneAfterCall(String command, String marker) {
    JsonNode json = fixture.shell(command, 10);

    assertThat(json.get("stdout").asString()).isEqualTo("started\n");
    assertThat(json.get("timed_out").asBoolean()).isFalse();
    assertThat(json.get("elapsed_ms").asLong()).isLessThan(5000);
    await()
        .pollDelay(Duration.ofSeconds(1))
        .atMost(Duration.ofMillis(1500))
        .until(() -> processesMentioning(marker).isEmpty());
  }

  private static String python(String code) {
    String prelude = "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n";
    return "python3 -c '" + (prelude + code).replace("'", "'\"'\"'") + "'";
  }

  /** The host's processes whose command line holds the text. */
  static List<Long> processesMentioning(String text) throws IOException {
    List<Long> found = new ArrayList<>();
    for (Path process : processes()) {
      try {
        String cmdline =
            new String(Files.readAllBytes(process.resolve("cmdline")), StandardCharsets.UTF_8)
                .replace('\0', ' ');
        if (cmdline.contains(text) && !cmdline.contains("surefire")) {
          found.add(Long.parseLong(process.getFileName().toString()));
        }
      } catch (IOException e) {
        // Gone while we looked.
      }
    }
    return found;
  }

  /** How many of the host's processes run as the uid. */
  static long processesOfUser(int uid) throws IOException {
    Set<String> owned = new TreeSet<>();
    for (Path process : processes()) {
      try {
        boolean ours =
            Files.readAllLines(process.resolve("status")).stream()
                .filter(line -> line.startsWith("Uid:"))
                .anyMatch(line -> Arrays.asList(line.split("\\s+")).get(1).equals("" + uid));
        if (ours) {
          owned.add(process.getFileName().toString());
        }
      } catch (IOException e) {
        // Gone while we looked.
      }
    }
    return owned.size();
  }

  /** The directories of the host's processes under /proc. */
  private static List<Path> processes() throws IOException {
    try (Stream<Path> entries = Files.list(Path.of("/proc"))) {
      return entries
          .filter(entry -> entry.getFileName().toString().chars().allMatch(Character::isDigit))
          .toList();
    }
  }
}
