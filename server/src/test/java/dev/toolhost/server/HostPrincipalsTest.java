package dev.toolhost.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.RSASSASigner;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.jwk.gen.RSAKeyGenerator;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import dev.toolhost.core.MethodTools;
import dev.toolhost.core.Param;
import dev.toolhost.core.Tool;
import dev.toolhost.core.ToolCall;
import dev.toolhost.host.HostConfig;
import dev.toolhost.testing.ScriptedModelServer;
import dev.toolhost.testing.ScriptedReply;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Principals over HTTP and MCP: a call's user and profile come from its credential, not its body; a
 * principal keeps to its profiles on /v1 and /mcp alike; OAuth bearer tokens are checked and a
 * refused one says why in its challenge.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class HostPrincipalsTest {

  private static final HttpClient CLIENT =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private static final JsonMapper JSON = JsonMapper.shared();

  private static final Map<String, String> TOKENS =
      Map.of("ALICE_TOKEN", "alice-token-1f3e", "GATEWAY_TOKEN", "gateway-token-9c2d");

  private static final String PRINCIPALS =
      """
      http:
        port: 0
      profiles:
        reviewer: {extends: main}
      auth:
        principals:
          alice:
            token_env: ALICE_TOKEN
            user: alice
            profiles: [main]
          gateway:
            token_env: GATEWAY_TOKEN
            profiles: [main, reviewer]
            act_as_users: true
            audit: true
      """;

  private static final String INITIALIZE =
      "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"initialize\", \"params\":"
          + " {\"protocolVersion\": \"2025-06-18\", \"capabilities\": {}, \"clientInfo\":"
          + " {\"name\": \"raw\", \"version\": \"1\"}}}";

  /** A tool that says who its call is made as. */
  public static final class WhoAmI {
    @Tool(description = "Says the user this call is made as.")
    public String whoami(ToolCall call) {
      return call.user().orElse("(none)");
    }

    @Tool(description = "Answers the text it is given.")
    public String echo(@Param(description = "The text to answer.") String text) {
      return text;
    }

    @Tool(description = "Writes a report too large to answer whole.")
    public String report() {
      return ("## Section\n\n" + "A line of the report. ".repeat(40) + "\n\n").repeat(200);
    }
  }

  @TempDir Path directory;
  private Host host;
  private URI base;

  @AfterEach
  void closeHost() {
    if (host != null) {
      host.close();
    }
  }

  @AfterAll
  static void closeClient() {
    CLIENT.close();
  }

  private void start(String yaml, Map<String, String> environment) {
    host =
        Host.builder(HostConfig.parse(yaml, "toolhost.yaml", directory))
            .environment(environment)
            .build();
    host.registry().registerAll(MethodTools.of(new WhoAmI(), "builtin:test"));
    base = host.start();
  }

  @Test
  void aPrincipalsCallsAreMadeAsItsUserAndAnotherUserInTheBodyIsRefused() throws Exception {
    start(PRINCIPALS, TOKENS);

    HttpResponse<String> plain = invoke("alice-token-1f3e", "", "{}");
    HttpResponse<String> same = invoke("alice-token-1f3e", "", "{\"user\": \"alice\"}");
    HttpResponse<String> other = invoke("alice-token-1f3e", "", "{\"user\": \"bob\"}");

    assertThat(text(plain)).isEqualTo("alice");
    assertThat(text(same)).isEqualTo("alice");
    assertThat(other.statusCode()).isEqualTo(403);
    assertThat(error(other, "forbidden"))
        .isEqualTo(
            "The principal 'alice' makes its calls as the user 'alice' and may not act as"
                + " another: leave 'user' out, or send 'alice'.");
  }

  @Test
  void aTrustedFrontEndNamesTheUserPerCall() throws Exception {
    start(PRINCIPALS, TOKENS);

    assertThat(text(invoke("gateway-token-9c2d", "", "{\"user\": \"bob\"}"))).isEqualTo("bob");
    assertThat(text(invoke("gateway-token-9c2d", "?profile=reviewer", "{\"user\": \"carol\"}")))
        .isEqualTo("carol");
  }

  @Test
  void twoUsersWhoSendOneSessionIdShareNothing() throws Exception {
    start(PRINCIPALS, TOKENS);

    // Alice's large result is chunked into her session's working memory.
    HttpResponse<String> alices =
        invoke("alice-token-1f3e", "", "{\"session_id\": \"s-1\"}", "report");
    HttpResponse<String> alicesList =
        invoke("alice-token-1f3e", "", "{\"session_id\": \"s-1\"}", "list_working_memory");
    HttpResponse<String> bobsList =
        invoke(
            "gateway-token-9c2d",
            "",
            "{\"session_id\": \"s-1\", \"user\": \"bob\"}",
            "list_working_memory");

    assertThat(text(alices)).contains("chunk0");
    assertThat(text(alicesList)).contains("tool-report");
    assertThat(text(bobsList)).doesNotContain("tool-report");
  }

  @Test
  void aProfileOutsideThePrincipalsListIsRefusedNamingTheAllowedOnes() throws Exception {
    start(PRINCIPALS, TOKENS);

    HttpResponse<String> invoked = invoke("alice-token-1f3e", "?profile=reviewer", "{}");
    HttpResponse<String> listed = get("/v1/tools?profile=reviewer", "alice-token-1f3e");
    HttpResponse<String> profiles = get("/v1/profiles", "alice-token-1f3e");

    assertThat(invoked.statusCode()).isEqualTo(403);
    assertThat(error(invoked, "forbidden"))
        .isEqualTo(
            "The principal 'alice' may not use the profile 'reviewer': its profiles are main.");
    assertThat(listed.statusCode()).isEqualTo(403);
    assertThat(JSON.readTree(profiles.body()).get("profiles").findValuesAsString("name"))
        .containsExactly("main");
    assertThat(
            JSON.readTree(get("/v1/profiles", "gateway-token-9c2d").body())
                .get("profiles")
                .findValuesAsString("name"))
        .containsExactly("main", "reviewer");
  }

  @Test
  void overMcpAPrincipalKeepsToItsProfilesAndCallsAsItsUser() throws Exception {
    start(PRINCIPALS, TOKENS);

    HttpResponse<String> refused = mcp("/mcp/reviewer", "alice-token-1f3e", null, INITIALIZE);
    HttpResponse<String> opened = mcp("/mcp", "alice-token-1f3e", null, INITIALIZE);
    String session = opened.headers().firstValue("mcp-session-id").orElseThrow();
    mcp(
        "/mcp",
        "alice-token-1f3e",
        session,
        "{\"jsonrpc\": \"2.0\", \"method\": \"notifications/initialized\"}");
    HttpResponse<String> called =
        mcp(
            "/mcp",
            "alice-token-1f3e",
            session,
            "{\"jsonrpc\": \"2.0\", \"id\": 2, \"method\": \"tools/call\", \"params\":"
                + " {\"name\": \"whoami\", \"arguments\": {}}}");

    assertThat(refused.statusCode()).isEqualTo(403);
    assertThat(error(refused, "forbidden")).contains("may not use the profile 'reviewer'");
    assertThat(opened.statusCode()).as(opened.body()).isEqualTo(200);
    assertThat(called.body()).contains("\"text\":\"alice\"");
  }

  @Test
  void aPrincipalCannotResumeAnothersEventStream() throws Exception {
    start(PRINCIPALS, TOKENS);
    String alices = mcpSession("alice-token-1f3e");
    String bobs = mcpSession("gateway-token-9c2d");
    HttpResponse<String> called =
        mcp(
            "/mcp",
            "alice-token-1f3e",
            alices,
            "{\"jsonrpc\": \"2.0\", \"id\": 2, \"method\": \"tools/call\", \"params\":"
                + " {\"name\": \"whoami\", \"arguments\": {}}}");
    String eventId =
        called
            .body()
            .lines()
            .filter(line -> line.startsWith("id:"))
            .map(line -> line.substring(3).strip())
            .findFirst()
            .orElseThrow(() -> new AssertionError("no event id in " + called.body()));

    HttpResponse<String> resumed =
        CLIENT.send(
            HttpRequest.newBuilder(base.resolve("/mcp"))
                .header("Authorization", "Bearer gateway-token-9c2d")
                .header("Accept", "text/event-stream")
                .header("Mcp-Session-Id", bobs)
                .header("Last-Event-ID", eventId)
                .GET()
                .build(),
            HttpResponse.BodyHandlers.ofString());

    assertThat(resumed.statusCode()).isEqualTo(400);
    assertThat(resumed.body()).doesNotContain("alice").contains("invalid_request");
  }

  private String mcpSession(String token) throws Exception {
    String session =
        mcp("/mcp", token, null, INITIALIZE).headers().firstValue("mcp-session-id").orElseThrow();
    mcp(
        "/mcp",
        token,
        session,
        "{\"jsonrpc\": \"2.0\", \"method\": \"notifications/initialized\"}");
    return session;
  }

  @Test
  void theOperatorsTokenStaysBesideThePrincipalsWithEveryProfile() throws Exception {
    start(
        PRINCIPALS,
        Map.of(
            "ALICE_TOKEN",
            "alice-token-1f3e",
            "GATEWAY_TOKEN",
            "g-2",
            "TOOLHOST_TOKEN",
            "operator-7a"));

    assertThat(text(invoke("operator-7a", "?profile=reviewer", "{\"user\": \"dave\"}")))
        .isEqualTo("dave");
    assertThat(invoke("someone-else", "", "{}").statusCode()).isEqualTo(401);
  }

  @Test
  void jwtsAreCheckedAndARefusedOneSaysWhyInItsChallenge() throws Exception {
    RSAKey key = new RSAKeyGenerator(2048).keyID("k1").generate();
    Path jwks = directory.resolve("jwks.json");
    Files.writeString(jwks, new JWKSet(key.toPublicJWK()).toString());
    start(
        """
        http:
          port: 0
        auth:
          jwt:
            issuer: https://id.example.com
            audience: toolhost
            jwks_file: jwks.json
        """,
        Map.of());

    HttpResponse<String> good = invoke(jwt(key, "toolhost", 600), "", "{}");
    HttpResponse<String> expired = invoke(jwt(key, "toolhost", -3600), "", "{}");
    HttpResponse<String> elsewhere = invoke(jwt(key, "another", 600), "", "{}");
    HttpResponse<String> none = get("/v1/tools", null);
    HttpResponse<String> metadata = get("/.well-known/oauth-protected-resource", null);

    assertThat(text(good)).isEqualTo("alice");
    assertThat(expired.statusCode()).isEqualTo(401);
    assertThat(expired.headers().firstValue("www-authenticate").orElseThrow())
        .contains("error=\"invalid_token\"")
        .contains("error_description=\"The token has expired.\"")
        .contains(
            "resource_metadata=\"http://127.0.0.1:"
                + host.port()
                + "/.well-known/oauth-protected-resource\"");
    assertThat(elsewhere.headers().firstValue("www-authenticate").orElseThrow())
        .contains("The token is not for this host: its audience is another.");
    assertThat(none.statusCode()).isEqualTo(401);
    assertThat(none.headers().firstValue("www-authenticate").orElseThrow())
        .doesNotContain("invalid_token")
        .contains("resource_metadata=");
    assertThat(metadata.statusCode()).isEqualTo(200);
    JsonNode document = JSON.readTree(metadata.body());
    assertThat(document.get("resource").asString())
        .isEqualTo("http://127.0.0.1:" + host.port() + "/");
    assertThat(document.get("authorization_servers").get(0).asString())
        .isEqualTo("https://id.example.com");
  }

  @Test
  void aConversationIsItsStartersAndAnAgentOutsideAPrincipalsProfilesIsRefused() throws Exception {
    try (ScriptedModelServer model = ScriptedModelServer.start()) {
      model.enqueue(ScriptedReply.answer("Hello, alice."));
      start(
          PRINCIPALS
              + """
                agents:
                  helper:
                    base_url: %s
                    model: helper-model
                    api_key_env: NO_SUCH_KEY
                  reviewing:
                    base_url: %s
                    model: helper-model
                    api_key_env: NO_SUCH_KEY
                    profile: reviewer
                """
                  .formatted(model.baseUrl(), model.baseUrl()),
          TOKENS);

      HttpResponse<String> started =
          post("/v1/agents/helper/turns", "alice-token-1f3e", "{\"message\": \"Hi\"}");
      String session = JSON.readTree(started.body()).get("session_id").asString();
      HttpResponse<String> hijacked =
          post(
              "/v1/agents/helper/turns",
              "gateway-token-9c2d",
              "{\"message\": \"What did alice say?\", \"session_id\": \"" + session + "\"}");
      HttpResponse<String> outside =
          post("/v1/agents/reviewing/turns", "alice-token-1f3e", "{\"message\": \"Hi\"}");

      assertThat(started.statusCode()).as(started.body()).isEqualTo(200);
      assertThat(hijacked.statusCode()).isEqualTo(404);
      assertThat(error(hijacked, "not_found")).contains("There is no session '" + session + "'");
      assertThat(outside.statusCode()).isEqualTo(403);
      assertThat(error(outside, "forbidden"))
          .isEqualTo(
              "The principal 'alice' may not use the profile 'reviewer': its profiles are main.");
      // The model was asked once: by alice's own turn.
      assertThat(model.requestCount()).isEqualTo(1);
    }
  }

  private static final String AUDIT = "audit:\n  state_dir: state/audit\n";

  @Test
  void aConversationsToolCallsAreMadeAsItsPrincipalsUserAndJournalledInItsName() throws Exception {
    try (ScriptedModelServer model = ScriptedModelServer.start()) {
      model.enqueue(ScriptedReply.toolCalls(ScriptedReply.call("call_1", "whoami", "{}")));
      model.enqueue(ScriptedReply.answer("You are alice."));
      start(
          PRINCIPALS
              + AUDIT
              + """
                agents:
                  helper:
                    base_url: %s
                    model: helper-model
                    api_key_env: NO_SUCH_KEY
                """
                  .formatted(model.baseUrl()),
          TOKENS);

      HttpResponse<String> turn =
          post("/v1/agents/helper/turns", "alice-token-1f3e", "{\"message\": \"Who am I?\"}");
      model.takeRequest();
      String second = model.takeRequest().body();

      assertThat(turn.statusCode()).as(turn.body()).isEqualTo(200);
      // The tool's answer, the call's user, reached the model.
      assertThat(second).contains("\"content\":\"alice\"");
      await()
          .atMost(Duration.ofSeconds(30))
          .until(
              () ->
                  JSON.readTree(get("/v1/audit?tool=whoami", "gateway-token-9c2d").body())
                          .get("entries")
                          .size()
                      == 1);
      JsonNode entry =
          JSON.readTree(get("/v1/audit?tool=whoami", "gateway-token-9c2d").body())
              .get("entries")
              .get(0);
      assertThat(entry.get("principal").asString()).isEqualTo("alice");
      assertThat(entry.get("user").asString()).isEqualTo("alice");
      assertThat(entry.get("agent").asString()).isEqualTo("helper");
    }
  }

  @Test
  void theJournalHoldsOneLinePerCallWithItsPrincipalAndNoArgumentValue() throws Exception {
    start(PRINCIPALS + AUDIT, TOKENS);
    String arguments = "{\"arguments\": {\"text\": \"tangerine-4417\"}}";

    assertThat(text(invoke("alice-token-1f3e", "", arguments, "echo"))).isEqualTo("tangerine-4417");
    assertThat(
            text(
                invoke(
                    "gateway-token-9c2d",
                    "",
                    "{\"user\": \"bob\", " + arguments.substring(1),
                    "echo")))
        .isEqualTo("tangerine-4417");
    assertThat(invoke("alice-token-1f3e", "", arguments, "ehco").body()).contains("tool_not_found");
    String session =
        mcp("/mcp", "alice-token-1f3e", null, INITIALIZE)
            .headers()
            .firstValue("mcp-session-id")
            .orElseThrow();
    mcp(
        "/mcp",
        "alice-token-1f3e",
        session,
        "{\"jsonrpc\": \"2.0\", \"method\": \"notifications/initialized\"}");
    assertThat(
            mcp(
                    "/mcp",
                    "alice-token-1f3e",
                    session,
                    "{\"jsonrpc\": \"2.0\", \"id\": 2, \"method\": \"tools/call\", \"params\":"
                        + " {\"name\": \"echo\", \"arguments\": {\"text\": \"plum-2231\"}}}")
                .body())
        .contains("plum-2231");

    // The writer appends behind the calls: wait for its four lines.
    Path journal = directory.resolve("state/audit/audit.jsonl");
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> Files.exists(journal) && Files.readAllLines(journal).size() == 4);
    String lines = Files.readString(journal);
    assertThat(lines).doesNotContain("tangerine").doesNotContain("plum");
    JsonNode entries = JSON.readTree(get("/v1/audit", "gateway-token-9c2d").body()).get("entries");
    assertThat(entries.findValuesAsString("principal"))
        .containsExactly("alice", "gateway", "alice", "alice");
    assertThat(entries.findValuesAsString("user"))
        .containsExactly("alice", "bob", "alice", "alice");
    assertThat(entries.findValuesAsString("tool")).containsExactly("echo", "echo", "ehco", "echo");
    assertThat(entries.findValuesAsString("outcome"))
        .containsExactly("ok", "ok", "tool_not_found", "ok");
    assertThat(entries.findValuesAsString("profile")).containsOnly("main");
    assertThat(entries.get(0).get("source").asString()).isEqualTo("builtin:test");
    assertThat(entries.get(2).has("source")).isFalse();
    assertThat(entries.get(1).get("session")).isNull();
    // The same arguments, the same digest; others, another; never the value.
    List<String> digests = entries.findValuesAsString("arguments_digest");
    assertThat(digests.get(0)).startsWith("hmac-sha256:").isEqualTo(digests.get(1));
    assertThat(digests.get(3)).isNotEqualTo(digests.get(0));
    assertThat(entries.get(3).get("session").asString()).isEqualTo("alice/" + session);
  }

  @Test
  void onlyAPrincipalWithAuditReadsTheJournalAndItsQueriesFilter() throws Exception {
    Files.writeString(directory.resolve("toolhost.yaml"), PRINCIPALS + AUDIT);
    start(PRINCIPALS + AUDIT, TOKENS);
    invoke("alice-token-1f3e", "", "{\"arguments\": {\"text\": \"a\"}}", "echo");
    invoke(
        "gateway-token-9c2d", "", "{\"user\": \"bob\", \"arguments\": {\"text\": \"b\"}}", "echo");
    invoke("gateway-token-9c2d", "", "{\"user\": \"bob\"}", "whoami");
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                JSON.readTree(get("/v1/audit", "gateway-token-9c2d").body()).get("entries").size()
                    == 3);

    HttpResponse<String> refused = get("/v1/audit", "alice-token-1f3e");
    JsonNode bobs = JSON.readTree(get("/v1/audit?user=bob", "gateway-token-9c2d").body());
    JsonNode latest = JSON.readTree(get("/v1/audit?user=bob&limit=1", "gateway-token-9c2d").body());
    JsonNode later =
        JSON.readTree(
            get("/v1/audit?since=" + Instant.now().plusSeconds(60), "gateway-token-9c2d").body());
    HttpResponse<String> badSince = get("/v1/audit?since=yesterday", "gateway-token-9c2d");
    HttpResponse<String> badLimit = get("/v1/audit?limit=0", "gateway-token-9c2d");
    CommandRun tail =
        CommandRun.of(
            "audit", "tail", "--config", directory.resolve("toolhost.yaml").toString(), "-n", "2");

    assertThat(refused.statusCode()).isEqualTo(403);
    assertThat(error(refused, "forbidden"))
        .isEqualTo(
            "The principal 'alice' may not read the audit journal: only one with 'audit: true' in"
                + " auth.principals may.");
    assertThat(bobs.get("entries").findValuesAsString("tool")).containsExactly("echo", "whoami");
    assertThat(latest.get("entries").findValuesAsString("tool")).containsExactly("whoami");
    assertThat(later.get("entries").size()).isZero();
    assertThat(error(badSince, "invalid_request"))
        .isEqualTo(
            "'since' is 'yesterday' (expected an ISO-8601 instant such as 2026-11-27T09:00:00Z)");
    assertThat(error(badLimit, "invalid_request")).isEqualTo("'limit' is 0 (expected 1 to 10000)");
    assertThat(tail.exitCode()).as(tail.err()).isZero();
    assertThat(tail.out().lines().map(line -> JSON.readTree(line).get("tool").asString()))
        .containsExactly("echo", "whoami");
  }

  private HttpResponse<String> post(String path, String token, String body) throws Exception {
    return CLIENT.send(
        HttpRequest.newBuilder(base.resolve(path))
            .header("Authorization", "Bearer " + token)
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private static String jwt(RSAKey key, String audience, long secondsLeft) throws Exception {
    SignedJWT token =
        new SignedJWT(
            new JWSHeader.Builder(JWSAlgorithm.RS256)
                .keyID(key.getKeyID())
                .type(new JOSEObjectType("at+jwt"))
                .build(),
            new JWTClaimsSet.Builder()
                .issuer("https://id.example.com")
                .audience(audience)
                .subject("alice")
                .expirationTime(Date.from(Instant.now().plusSeconds(secondsLeft)))
                .build());
    token.sign(new RSASSASigner(key));
    return token.serialize();
  }

  private HttpResponse<String> invoke(String token, String query, String body) throws Exception {
    return invoke(token, query, body, "whoami");
  }

  private HttpResponse<String> invoke(String token, String query, String body, String tool)
      throws Exception {
    return CLIENT.send(
        HttpRequest.newBuilder(base.resolve("/v1/tools/" + tool + "/invoke" + query))
            .header("Authorization", "Bearer " + token)
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private HttpResponse<String> get(String path, String token) throws Exception {
    HttpRequest.Builder request = HttpRequest.newBuilder(base.resolve(path)).GET();
    if (token != null) {
      request.header("Authorization", "Bearer " + token);
    }
    return CLIENT.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  private HttpResponse<String> mcp(String path, String token, String session, String body)
      throws Exception {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(base.resolve(path))
            .header("Authorization", "Bearer " + token)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .POST(HttpRequest.BodyPublishers.ofString(body));
    if (session != null) {
      request.header("Mcp-Session-Id", session);
    }
    return CLIENT.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  private static String text(HttpResponse<String> response) {
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    JsonNode result = JSON.readTree(response.body());
    return result.get("content").asString();
  }

  private static String error(HttpResponse<String> response, String code) {
    JsonNode error = JSON.readTree(response.body()).get("error");
    assertThat(error.get("code").asString()).isEqualTo(code);
    return error.get("message").asString();
  }
}
