package dev.toolhost.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.host.HostConfig;
import dev.toolhost.mcp.NpmPackages;
import dev.toolhost.testing.FakeSite;
import dev.toolhost.testing.ScriptedModelServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * An embedded host lets its JVM exit: started with every extension on (working memory in Redis, an
 * MCP server as a child process, the web and OpenRouter clients, a browser open mid-session, the
 * sandbox, the scheduler's database, an agent, secrets), used over HTTP and over the MCP gateway,
 * then closed, it leaves no non-daemon thread, no child process and no thread of its own behind.
 */
@Timeout(120)
class HostShutdownTest {

  private static Set<Thread> nonDaemon() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(Thread::isAlive)
        .filter(thread -> !thread.isDaemon())
        .collect(Collectors.toSet());
  }

  @TempDir Path workspaces;

  @Test
  void aHostWithEveryExtensionLeavesNoNonDaemonThreadAndNoChildProcessWhenClosed()
      throws Exception {
    Set<Thread> before = nonDaemon();
    try (ScriptedModelServer model = ScriptedModelServer.start();
        FakeSite page =
            FakeSite.on("127.0.0.4")
                .page("/", FakeSite.Page.ok("text/html", "<title>Here</title><p>here</p>"));
        HttpClient client = HttpClient.newHttpClient()) {
      String yaml =
          "http: {port: 0}\n"
              + "memory: {store: redis, key_prefix: 'toolhost-test:shutdown:'}\n"
              + NpmPackages.everythingSection()
              + "web:\n"
              + "  search: {provider: searxng, url: 'http://127.0.0.2:9'}\n"
              + "  outbound: {allow: ['127.0.0.4/32']}\n"
              + "browser: {profile_dir: '"
              + workspaces.resolve("browser-profiles")
              + "', screenshot_dir: '"
              + workspaces.resolve("screenshots")
              + "'}\n"
              + "openrouter: {base_url: 'http://127.0.0.2:9/api/v1'}\n"
              + "exec: {workspace_root: '"
              + workspaces
              + "'}\n"
              + "scheduling: {state_dir: '"
              + workspaces.resolve("schedules")
              + "', agent: assistant}\n"
              + "long_term_memory: {state_dir: '"
              + workspaces.resolve("memories")
              + "'}\n"
              + "a2a:\n"
              + "  agents: {remote: {url: 'http://127.0.0.2:9'}}\n"
              + "  server: {public_url: 'https://toolhost.example.com'}\n"
              + "agents:\n"
              + "  assistant:\n"
              + "    base_url: "
              + model.baseUrl()
              + "\n"
              + "    model: scripted\n"
              // Its model writes the services' summaries, on a thread of the host's.
              + "    writes_summaries: true\n";
      Host host =
          Host.builder(HostConfig.parse(yaml, "shutdown.yaml"))
              .environment(Map.of("OPENAI_API_KEY", "sk-test", "OPENROUTER_API_KEY", "or-test"))
              .build();
      URI base = host.start();
      assertThat(ProcessHandle.current().children().count()).isPositive();
      HttpResponse<String> health =
          client.send(
              HttpRequest.newBuilder(base.resolve("/healthz")).build(),
              HttpResponse.BodyHandlers.ofString());
      assertThat(health.statusCode()).isEqualTo(200);
      HttpResponse<String> initialize =
          client.send(
              HttpRequest.newBuilder(base.resolve("/mcp"))
                  .header("Content-Type", "application/json")
                  .header("Accept", "application/json, text/event-stream")
                  .POST(
                      HttpRequest.BodyPublishers.ofString(
                          "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
                              + "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
                              + "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}"))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertThat(initialize.statusCode()).isEqualTo(200);
      HttpResponse<String> saved =
          client.send(
              HttpRequest.newBuilder(base.resolve("/v1/tools/memory_save/invoke"))
                  .header("Content-Type", "application/json")
                  .POST(
                      HttpRequest.BodyPublishers.ofString(
                          "{\"arguments\": {\"content\": \"The user prefers dark mode.\"}}"))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertThat(saved.body()).contains("\"is_error\":false");
      // A browser open mid-session when the host closes.
      HttpResponse<String> browsed =
          client.send(
              HttpRequest.newBuilder(base.resolve("/v1/tools/browser/invoke"))
                  .header("Content-Type", "application/json")
                  .POST(
                      HttpRequest.BodyPublishers.ofString(
                          "{\"arguments\": {\"action\": \"navigate\", \"url\": \""
                              + page.url()
                              + "/\"}, \"session_id\": \"mid\"}"))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertThat(browsed.body()).contains("\"is_error\":false");
      Path profiles = workspaces.resolve("browser-profiles");
      try (var open = java.nio.file.Files.list(profiles)) {
        assertThat(open.count()).isEqualTo(1);
      }
      for (String[] invoke :
          new String[][] {
            {"save_skill", "{\"name\": \"s\", \"description\": \"d\", \"content\": \"c\"}"},
            {"whiteboard_write", "{\"key\": \"k\", \"text\": \"t\"}"}
          }) {
        HttpResponse<String> kit =
            client.send(
                HttpRequest.newBuilder(base.resolve("/v1/tools/" + invoke[0] + "/invoke"))
                    .header("Content-Type", "application/json")
                    .POST(
                        HttpRequest.BodyPublishers.ofString(
                            "{\"arguments\": " + invoke[1] + ", \"session_id\": \"s1\"}"))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(kit.body()).as(invoke[0]).contains("\"is_error\":false");
      }

      host.close();
      model.close();
      page.close();

      Instant deadline = Instant.now().plusSeconds(10);
      List<String> left = List.of();
      while (Instant.now().isBefore(deadline)) {
        left =
            nonDaemon().stream()
                .filter(thread -> !before.contains(thread))
                .map(Thread::getName)
                .sorted()
                .toList();
        if (left.isEmpty() && ProcessHandle.current().children().findAny().isEmpty()) {
          break;
        }
        Thread.sleep(50);
      }
      assertThat(left).as("non-daemon threads left after close").isEmpty();
      assertThat(ProcessHandle.current().children().map(p -> p.info().commandLine().orElse("?")))
          .as("child processes left after close")
          .isEmpty();
      try (var open = java.nio.file.Files.list(profiles)) {
        assertThat(open.toList()).as("browser profiles left after close").isEmpty();
      }
      assertThat(
              ProcessHandle.allProcesses()
                  .filter(p -> p.info().commandLine().orElse("").contains(profiles.toString())))
          .as("browser processes left after close")
          .isEmpty();
    }
  }
}
