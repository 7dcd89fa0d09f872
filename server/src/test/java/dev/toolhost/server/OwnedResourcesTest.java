package dev.toolhost.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.host.HostConfig;
import dev.toolhost.testing.FakeSite;
import dev.toolhost.testing.ScriptedModelServer;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Comparator;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * What a call reaches by its session is its user's: two principals, alice and bob, who send one
 * session id over HTTP, or reach the host over MCP, get two workspaces, two whiteboards and two
 * browsers, and bob's recall never returns alice's long-term memories. An MCP session is the
 * principal's that opened it: another's id is an unknown session.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class OwnedResourcesTest {

  private static final HttpClient CLIENT =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private static final JsonMapper JSON = JsonMapper.shared();

  private static final String ALICE = "alice-token-5e1b";
  private static final String BOB = "bob-token-8d0c";
  private static final Map<String, String> TOKENS = Map.of("ALICE_TOKEN", ALICE, "BOB_TOKEN", BOB);

  private static final String PRINCIPALS =
      """
      http:
        port: 0
      auth:
        principals:
          alice:
            token_env: ALICE_TOKEN
            user: alice
            profiles: [main]
          bob:
            token_env: BOB_TOKEN
            user: bob
            profiles: [main]
      """;

  private static final String INITIALIZE =
      "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"initialize\", \"params\":"
          + " {\"protocolVersion\": \"2025-06-18\", \"capabilities\": {}, \"clientInfo\":"
          + " {\"name\": \"raw\", \"version\": \"1\"}}}";

  private Path directory;
  private Host host;
  private URI base;
  private ScriptedModelServer model;

  @BeforeEach
  void makeDirectory() throws IOException {
    // Under /tmp and open to others: the sandbox user reaches the workspaces beneath it.
    directory = Files.createTempDirectory(Path.of("/tmp"), "owned-resources");
    Files.setPosixFilePermissions(directory, PosixFilePermissions.fromString("rwxr-xr-x"));
  }

  @AfterEach
  void closeHost() throws IOException {
    if (host != null) {
      host.close();
    }
    if (model != null) {
      model.close();
    }
    try (Stream<Path> walk = Files.walk(directory)) {
      walk.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
    }
  }

  @AfterAll
  static void closeClient() {
    CLIENT.close();
  }

  /** A host of the principals, the exec tools, long-term memory and the whiteboard, and more. */
  private void start(String more) throws IOException {
    // The config's directory is protected from the file tool: the workspaces lie beside it.
    Path config = Files.createDirectories(directory.resolve("config"));
    model = ScriptedModelServer.start();
    String yaml =
        PRINCIPALS
            + "exec:\n  workspace_root: "
            + directory.resolve("workspaces")
            + "\nlong_term_memory:\n  state_dir: "
            + directory.resolve("long-term-memory")
            + "\n"
            + ScriptedModelServer.agentSection(model.baseUrl(), "helper", "helper-model")
            + more;
    host =
        Host.builder(HostConfig.parse(yaml, "toolhost.yaml", config)).environment(TOKENS).build();
    base = host.start();
  }

  @Test
  void aFileAliceWritesInHerSessionIsNotInBobsOfTheSameId() throws Exception {
    start("");
    String write =
        "{\"session_id\": \"s-1\", \"arguments\": {\"operation\": \"write\", \"path\":"
            + " \"plan.txt\", \"content\": \"alice's plan\"}}";
    String read =
        "{\"session_id\": \"s-1\", \"arguments\": {\"operation\": \"read\", \"path\":"
            + " \"plan.txt\"}}";
    String list =
        "{\"session_id\": \"s-1\", \"arguments\": {\"operation\": \"list\", \"path\": \".\"}}";

    assertThat(content(invoke(ALICE, "file", write))).contains("plan.txt");
    HttpResponse<String> bobReads = invoke(BOB, "file", read);
    HttpResponse<String> bobLists = invoke(BOB, "file", list);

    assertThat(content(invoke(ALICE, "file", read))).contains("alice's plan");
    assertThat(bobReads.body()).doesNotContain("alice's plan");
    assertThat(JSON.readTree(bobReads.body()).get("is_error").asBoolean()).isTrue();
    assertThat(content(bobLists)).doesNotContain("plan.txt");
  }

  @Test
  void overMcpAFileAliceWritesIsNotInBobsWorkspaceAndHerSessionIsNotHis() throws Exception {
    start("");
    String alices = open(ALICE);
    String bobs = open(BOB);

    String written =
        mcpCall(
            ALICE,
            alices,
            "file",
            "{\"operation\": \"write\", \"path\": \"mcp.txt\", \"content\": \"from alice\"}");
    String bobLists = mcpCall(BOB, bobs, "file", "{\"operation\": \"list\", \"path\": \".\"}");
    HttpResponse<String> hijacked =
        mcp(
            BOB,
            alices,
            "{\"jsonrpc\": \"2.0\", \"id\": 3, \"method\": \"tools/call\", \"params\": {\"name\":"
                + " \"file\", \"arguments\": {\"operation\": \"read\", \"path\": \"mcp.txt\"}}}");
    // Nor does bob reach it by naming alice's MCP session as his session over HTTP.
    HttpResponse<String> named =
        invoke(
            BOB,
            "file",
            "{\"session_id\": \""
                + alices
                + "\", \"arguments\": {\"operation\": \"read\", \"path\": \"mcp.txt\"}}");

    assertThat(written).contains("mcp.txt");
    assertThat(mcpCall(ALICE, alices, "file", "{\"operation\": \"read\", \"path\": \"mcp.txt\"}"))
        .contains("from alice");
    assertThat(bobLists).doesNotContain("mcp.txt");
    assertThat(hijacked.statusCode()).isEqualTo(404);
    assertThat(hijacked.body()).contains("Unknown MCP session").doesNotContain("from alice");
    assertThat(named.body()).doesNotContain("from alice");
  }

  @Test
  void aBoardAliceWritesIsNotBobsOfTheSameSessionId() throws Exception {
    start("");

    content(
        invoke(
            ALICE,
            "whiteboard_write",
            "{\"session_id\": \"s-1\", \"arguments\": {\"key\": \"plan\", \"text\": \"alice's"
                + " plan\"}}"));
    String bobReads =
        content(invoke(BOB, "whiteboard_read", "{\"session_id\": \"s-1\", \"arguments\": {}}"));
    String aliceReads =
        content(invoke(ALICE, "whiteboard_read", "{\"session_id\": \"s-1\", \"arguments\": {}}"));

    assertThat(aliceReads).contains("alice's plan");
    assertThat(bobReads).isEqualTo("The whiteboard is empty.");
  }

  @Test
  void bobsRecallNeverReturnsAlicesMemoriesOverHttpOrMcp() throws Exception {
    start("");

    content(
        invoke(
            ALICE,
            "memory_save",
            "{\"session_id\": \"s-1\", \"arguments\": {\"content\": \"The code of alice's locker is"
                + " 4711.\", \"memory_type\": \"fact\"}}"));
    String aliceRecalls =
        content(
            invoke(
                ALICE,
                "memory_recall",
                "{\"session_id\": \"s-1\", \"arguments\": {\"query\": \"locker code\"}}"));
    String bobRecalls =
        content(
            invoke(
                BOB,
                "memory_recall",
                "{\"session_id\": \"s-1\", \"arguments\": {\"query\": \"locker code\"}}"));
    String bobRecallsOverMcp =
        mcpCall(BOB, open(BOB), "memory_recall", "{\"query\": \"alice's locker code\"}");

    assertThat(aliceRecalls).contains("4711");
    assertThat(bobRecalls).doesNotContain("4711");
    assertThat(bobRecallsOverMcp).doesNotContain("4711");
  }

  @Test
  void aPageAliceOpenedIsNotBobsCurrentPage() throws Exception {
    try (FakeSite site =
        FakeSite.on("127.0.0.4")
            .page(
                "/alice",
                FakeSite.Page.ok("text/html", "<title>Alice's inbox</title><p>Dear alice</p>"))) {
      start(
          "web: {outbound: {allow: ['127.0.0.4/32']}}\nbrowser:\n  binary: "
              + System.getProperty("toolhost.chromium", "/usr/bin/chromium")
              + "\n  profile_dir: "
              + directory.resolve("profiles")
              + "\n  screenshot_dir: "
              + directory.resolve("shots")
              + "\n");

      String opened =
          content(
              invoke(
                  ALICE,
                  "browser",
                  "{\"session_id\": \"s-1\", \"arguments\": {\"action\": \"navigate\", \"url\": \""
                      + site.url()
                      + "/alice\"}}"));
      String bobsTabs =
          content(
              invoke(
                  BOB,
                  "browser",
                  "{\"session_id\": \"s-1\", \"arguments\": {\"action\": \"tab_list\"}}"));
      String bobsPage =
          content(
              invoke(
                  BOB,
                  "browser",
                  "{\"session_id\": \"s-1\", \"arguments\": {\"action\": \"content\"}}"));
      String alicesPage =
          content(
              invoke(
                  ALICE,
                  "browser",
                  "{\"session_id\": \"s-1\", \"arguments\": {\"action\": \"content\"}}"));

      assertThat(opened).contains("Alice's inbox");
      assertThat(alicesPage).contains("Dear alice");
      assertThat(bobsTabs).doesNotContain("Alice's inbox").doesNotContain("/alice");
      assertThat(bobsPage).doesNotContain("Dear alice");
    }
  }

  @Test
  void aTaskAliceSchedulesOverMcpIsNotBobsToListReplaceOrCancelOverHttpOrMcp() throws Exception {
    start("scheduling:\n  state_dir: " + directory.resolve("schedules") + "\n");
    String remind =
        "{\"name\": \"remind\", \"cron\": \"0 9 * * *\", \"description\": \"%s\","
            + " \"tool\": \"list_tool_guides\", \"arguments\": {}}";
    String alices = open(ALICE);
    String bobs = open(BOB);

    assertThat(mcpCall(ALICE, alices, "schedule_task", remind.formatted("alice's secret plan")))
        .contains("Scheduled task 'remind'");
    String bobListsOverMcp = mcpCall(BOB, bobs, "list_scheduled_tasks", "{}");
    String bobListsOverHttp = invoke(BOB, "list_scheduled_tasks", "{}").body();
    String bobCancels =
        invoke(BOB, "cancel_scheduled_task", "{\"arguments\": {\"name\": \"remind\"}}").body();
    String bobSchedules = mcpCall(BOB, bobs, "schedule_task", remind.formatted("bob's own plan"));
    HttpResponse<String> bobsRoute =
        CLIENT.send(
            HttpRequest.newBuilder(base.resolve("/v1/schedules"))
                .header("Authorization", "Bearer " + BOB)
                .GET()
                .build(),
            HttpResponse.BodyHandlers.ofString());
    String aliceLists = mcpCall(ALICE, alices, "list_scheduled_tasks", "{}");

    assertThat(bobListsOverMcp).contains("No scheduled tasks.").doesNotContain("secret plan");
    assertThat(bobListsOverHttp).contains("No scheduled tasks.").doesNotContain("secret plan");
    assertThat(bobCancels).contains("No scheduled task named 'remind'");
    // Bob's task of the same name is his own, not a replacement of alice's.
    assertThat(bobSchedules).contains("Scheduled task 'remind'");
    assertThat(bobsRoute.body()).contains("bob's own plan").doesNotContain("secret plan");
    assertThat(aliceLists).contains("alice's secret plan").doesNotContain("bob's own plan");
  }

  private HttpResponse<String> invoke(String token, String tool, String body) throws Exception {
    return CLIENT.send(
        HttpRequest.newBuilder(base.resolve("/v1/tools/" + tool + "/invoke"))
            .header("Authorization", "Bearer " + token)
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /** The text of a successful result. */
  private static String content(HttpResponse<String> response) {
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    JsonNode result = JSON.readTree(response.body());
    assertThat(result.get("is_error").asBoolean()).as(response.body()).isFalse();
    return result.get("content").asString();
  }

  /** Opens an MCP session on /mcp for the token's principal and answers its id. */
  private String open(String token) throws Exception {
    HttpResponse<String> opened = mcp(token, null, INITIALIZE);
    assertThat(opened.statusCode()).as(opened.body()).isEqualTo(200);
    String session = opened.headers().firstValue("mcp-session-id").orElseThrow();
    mcp(token, session, "{\"jsonrpc\": \"2.0\", \"method\": \"notifications/initialized\"}");
    return session;
  }

  /** The body of a tools/call in the MCP session. */
  private String mcpCall(String token, String session, String tool, String arguments)
      throws Exception {
    HttpResponse<String> called =
        mcp(
            token,
            session,
            "{\"jsonrpc\": \"2.0\", \"id\": 2, \"method\": \"tools/call\", \"params\": {\"name\":"
                + " \""
                + tool
                + "\", \"arguments\": "
                + arguments
                + "}}");
    assertThat(called.statusCode()).as(called.body()).isEqualTo(200);
    return called.body();
  }

  private HttpResponse<String> mcp(String token, String session, String body) throws Exception {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(base.resolve("/mcp"))
            .header("Authorization", "Bearer " + token)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .POST(HttpRequest.BodyPublishers.ofString(body));
    if (session != null) {
      request.header("Mcp-Session-Id", session);
    }
    return CLIENT.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }
}
