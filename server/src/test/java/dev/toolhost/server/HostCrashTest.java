package dev.toolhost.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.toolhost.core.spi.ChildProcesses;
import dev.toolhost.mcp.NpmPackages;
import dev.toolhost.testing.FakeSite;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A host killed with {@code kill -9} leaves nothing running: a {@code toolhost serve} in a JVM of
 * its own, with a browser open, a sandboxed shell command running and a stdio MCP server connected,
 * is killed, and within five seconds no process it started is left; the host started after it
 * deletes the browser profiles it left.
 */
@Timeout(180)
class HostCrashTest {

  private static final Pattern LISTENING = Pattern.compile("^Toolhost listening on (\\S+) ");

  @TempDir Path dir;

  private final List<ToolhostProcess> hosts = new ArrayList<>();

  @AfterEach
  void stopHosts() throws Exception {
    for (ToolhostProcess host : hosts) {
      host.close();
    }
  }

  @Test
  void aHostKilledWithSigkillLeavesNoBrowserShellOrMcpServerAndItsSuccessorDeletesItsProfiles()
      throws Exception {
    String mark = "crash" + UUID.randomUUID().toString().substring(0, 8);
    // A fraction of a second no other sleep has: the sandboxed command's own mark.
    String sleep = "sleep 300." + ThreadLocalRandom.current().nextInt(100_000, 1_000_000);
    Path profiles = dir.resolve(mark + "-profiles");
    // The sandbox user reaches the workspaces through it.
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
    Path config = Files.createDirectories(dir.resolve("config")).resolve("toolhost.yaml");
    try (FakeSite page =
            FakeSite.on("127.0.0.4")
                .page("/", FakeSite.Page.ok("text/html", "<title>Here</title><p>here</p>"));
        HttpClient client = HttpClient.newHttpClient()) {
      Files.writeString(
          config,
          NpmPackages.everythingSection()
              + "web:\n"
              + "  outbound: {allow: ['127.0.0.4/32']}\n"
              + "browser: {profile_dir: '"
              + profiles
              + "', screenshot_dir: '"
              + dir.resolve(mark + "-shots")
              + "'}\n"
              + "exec: {workspace_root: '"
              + dir.resolve(mark + "-workspaces")
              + "', max_timeout: 10m}\n");
      ToolhostProcess host = serve("first", config);
      URI base = listening(host);

      HttpResponse<String> browsed =
          invoke(
              client,
              base,
              "browser",
              "{\"arguments\": {\"action\": \"navigate\", \"url\": \""
                  + page.url()
                  + "/\"}, \"session_id\": \"open\"}");
      assertThat(browsed.body()).contains("\"is_error\":false");
      // Answered when the host dies, if ever.
      client.sendAsync(
          post(
              base,
              "shell",
              "{\"arguments\": {\"command\": \""
                  + sleep
                  + "\", \"timeout_seconds\": 300}, \"session_id\": \"running\"}"),
          HttpResponse.BodyHandlers.discarding());

      String owner = ChildProcesses.OWNER_VARIABLE + "=" + host.pid() + "-";
      await()
          .atMost(Duration.ofSeconds(60))
          .untilAsserted(
              () ->
                  assertThat(theirs(owner, mark, sleep))
                      .as("the host's browser, shell command and MCP server")
                      .anyMatch(p -> p.commandLine().contains("--user-data-dir=" + profiles))
                      .anyMatch(p -> p.commandLine().contains("--type=renderer"))
                      .anyMatch(p -> p.commandLine().contains("mcp-server-everything"))
                      .anyMatch(p -> p.commandLine().equals(sleep)));
      List<ProcessHandle> started =
          ProcessHandle.of(host.pid()).orElseThrow().descendants().toList();
      Path left = profiles.resolve("toolhost-browsers-" + host.pid());
      assertThat(left.resolve("owner")).exists();

      assertThat(ProcessHandle.of(host.pid()).orElseThrow().destroyForcibly()).isTrue();

      // A leaked process never ends; Chromium's helpers end on their own schedule once their
      // browser is gone, which on a busy machine takes seconds.
      await()
          .atMost(Duration.ofSeconds(15))
          .pollInterval(Duration.ofMillis(100))
          .untilAsserted(
              () -> {
                assertThat(host.alive()).isFalse();
                assertThat(started.stream().filter(ProcessHandle::isAlive).map(Marked::of))
                    .as("processes the host had started")
                    .isEmpty();
                assertThat(theirs(owner, mark, sleep))
                    .as("processes marked as the host's")
                    .isEmpty();
              });
      assertThat(left).as("the killed host's profiles, until a host starts").exists();

      ToolhostProcess next = serve("second", config);
      listening(next);
      assertThat(left).as("the killed host's profiles, once the next one started").doesNotExist();
      assertThat(profiles.resolve("toolhost-browsers-" + next.pid()).resolve("owner")).exists();
      assertThat(next.stop(Duration.ofSeconds(30))).as(next.err()).isZero();
      try (Stream<Path> rest = Files.list(profiles)) {
        assertThat(rest).as("profiles left by a host that stopped").isEmpty();
      }
    }
  }

  private ToolhostProcess serve(String name, Path config) throws IOException {
    ToolhostProcess host =
        ToolhostProcess.start(
            dir, name, List.of("serve", "--config", config.toString(), "--port", "0"));
    hosts.add(host);
    return host;
  }

  /** Where the host listens, once it says so; its standard error when it does not. */
  private static URI listening(ToolhostProcess host) {
    try {
      return URI.create(host.awaitOut(LISTENING, Duration.ofSeconds(60)).group(1));
    } catch (ConditionTimeoutException e) {
      throw new AssertionError("toolhost did not listen: " + host.out() + host.err(), e);
    }
  }

  private static HttpRequest post(URI base, String tool, String body) {
    return HttpRequest.newBuilder(base.resolve("/v1/tools/" + tool + "/invoke"))
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(body))
        .build();
  }

  private static HttpResponse<String> invoke(HttpClient client, URI base, String tool, String body)
      throws Exception {
    return client.send(post(base, tool, body), HttpResponse.BodyHandlers.ofString());
  }

  /** A process with its command line, as /proc shows it. */
  record Marked(long pid, String commandLine, String environment) {
    static Marked of(ProcessHandle process) {
      Path proc = Path.of("/proc", Long.toString(process.pid()));
      return new Marked(
          process.pid(), read(proc.resolve("cmdline")), read(proc.resolve("environ")));
    }

    private static String read(Path file) {
      try {
        return new String(Files.readAllBytes(file), StandardCharsets.UTF_8)
            .replace('\0', ' ')
            .strip();
      } catch (IOException e) {
        return "";
      }
    }
  }

  /**
   * The running processes the host started: those with its owner mark in their environment (the
   * browser, its helpers, the MCP server), or the test's marks on their command line (the sandbox
   * names the workspace; the command names its sleep).
   */
  private static List<Marked> theirs(String owner, String mark, String sleep) {
    return ProcessHandle.allProcesses()
        .filter(p -> p.pid() != ProcessHandle.current().pid())
        .map(Marked::of)
        .filter(
            p ->
                (" " + p.environment() + " ").contains(" " + owner)
                    || p.commandLine().contains(mark)
                    || p.commandLine().contains(sleep))
        .toList();
  }
}
