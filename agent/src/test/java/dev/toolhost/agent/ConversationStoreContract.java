package dev.toolhost.agent;

import static org.assertj.core.api.Assertions.assertThat;

import com.knuddels.jtokkit.Encodings;
import com.knuddels.jtokkit.api.Encoding;
import com.knuddels.jtokkit.api.EncodingType;
import dev.toolhost.core.MethodTools;
import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.core.spi.Principal;
import dev.toolhost.core.spi.Route;
import dev.toolhost.memory.WorkingMemoryExtension;
import dev.toolhost.testing.ScriptedModelServer;
import dev.toolhost.testing.ScriptedReply;
import dev.toolhost.testing.StartingExtension;
import dev.toolhost.testing.TestHost;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The conversations of the conversation API outlive their host, written once and run on each real
 * store (the embedded H2 file, PostgreSQL): a host closed between two turns and a new one started
 * on the same store continue the conversation, its principal's only; a conversation of 200 turns of
 * 20 KB tool results against a 16k window, with a restart halfway, never sends more than the
 * window, answers every turn, still tells the model at turn 200 what was decided at turn 3, and
 * shows its compactions on the turn's answer, its events and its transcript.
 */
@Timeout(120)
abstract class ConversationStoreContract {

  private static final Encoding O200K =
      Encodings.newLazyEncodingRegistry().getEncoding(EncodingType.O200K_BASE);
  private static final JsonMapper MAPPER = JsonMapper.shared();
  private static final int WINDOW = 16_384;

  protected final ScriptedModelServer model = ScriptedModelServer.start();
  private final List<TestHost> hosts = new ArrayList<>();

  /** The {@code conversations:} section of every host of a test: one store they all open. */
  protected abstract String section();

  @AfterEach
  void closeHosts() {
    hosts.forEach(TestHost::close);
    model.close();
  }

  /** A host on the store with the agent {@code keeper} and the tool {@code fetch_report}. */
  protected TestHost host() {
    List<HostExtension<?>> extensions =
        List.of(
            new WorkingMemoryExtension(),
            new ConversationsExtension(),
            new AgentsExtension(),
            new StartingExtension(
                "reports",
                host ->
                    host.registry()
                        .registerAll(MethodTools.of(new ContextTest.Reports(), "test:reports"))));
    TestHost host =
        TestHost.start(
            ScriptedModelServer.agentSection(
                    model.baseUrl(),
                    "keeper",
                    "gpt-4o-mini",
                    "instructions: You keep the sales reports.",
                    "context_window: " + WINDOW)
                + "conversations:\n"
                + section().indent(2),
            extensions);
    hosts.add(host);
    return host;
  }

  protected static JsonNode turn(TestHost host, String message, Optional<String> session)
      throws Exception {
    Route.Answer answer = turnAnswer(host, message, session, Principal.operator("local"));
    assertThat(answer.status()).as(text(answer)).isEqualTo(200);
    return MAPPER.readTree(text(answer));
  }

  private static Route.Answer turnAnswer(
      TestHost host, String message, Optional<String> session, Principal principal)
      throws Exception {
    var body = MAPPER.createObjectNode().put("message", message);
    session.ifPresent(id -> body.put("session_id", id));
    return route(host, "POST", "/v1/agents/keeper/turns")
        .handler()
        .answer(
            new Route.Request(
                "POST",
                "/v1/agents/keeper/turns",
                Map.of(),
                body.toString().getBytes(StandardCharsets.UTF_8),
                Map.of(),
                principal));
  }

  private static Route.Answer transcript(
      TestHost host, String session, Map<String, List<String>> query, Principal principal)
      throws Exception {
    String path = "/v1/agents/keeper/sessions/" + session;
    return route(host, "GET", path)
        .handler()
        .answer(new Route.Request("GET", path, query, new byte[0], Map.of(), principal));
  }

  private static Route route(TestHost host, String method, String path) {
    return host.runtime().route(method, path).orElseThrow();
  }

  private static String text(Route.Answer answer) {
    return new String(answer.body(), StandardCharsets.UTF_8);
  }

  @Test
  void aHostRestartedBetweenTwoTurnsContinuesTheConversation() throws Exception {
    model.enqueue(ScriptedReply.answer("Noted: the code word is heron."));
    TestHost first = host();
    String session =
        turn(first, "Remember the code word heron.", Optional.empty())
            .path("session_id")
            .asString();
    first.close();

    TestHost second = host();
    model.enqueue(ScriptedReply.answer("It is heron."));
    JsonNode answer = turn(second, "What is the code word?", Optional.of(session));

    assertThat(answer.path("messages").toString()).contains("It is heron.");
    model.takeRequest();
    JsonNode sent = model.takeRequest().json();
    assertThat(sent.path("messages").toString())
        .contains("Remember the code word heron.")
        .contains("Noted: the code word is heron.")
        .contains("What is the code word?");
    // The transcript holds both turns, on the new host.
    JsonNode transcript =
        MAPPER.readTree(text(transcript(second, session, Map.of(), Principal.operator("local"))));
    assertThat(transcript.path("total").asInt()).isEqualTo(4);
    assertThat(transcript.path("messages").path(0).path("content").asString())
        .isEqualTo("Remember the code word heron.");
    assertThat(transcript.path("messages").path(3).path("content").asString())
        .isEqualTo("It is heron.");
  }

  @Test
  void aStoredConversationIsItsPrincipalsOnlyAfterARestart() throws Exception {
    model.enqueue(ScriptedReply.answer("Noted."));
    TestHost first = host();
    String session =
        turn(first, "Remember the code word heron.", Optional.empty())
            .path("session_id")
            .asString();
    first.close();

    TestHost second = host();
    Principal bob = new Principal("bob", Optional.of("bob"), Optional.empty(), false, false);
    Route.Answer stolen = turnAnswer(second, "What is the code word?", Optional.of(session), bob);
    Route.Answer read = transcript(second, session, Map.of(), bob);

    assertThat(stolen.status()).as(text(stolen)).isEqualTo(404);
    assertThat(read.status()).as(text(read)).isEqualTo(404);
    assertThat(text(stolen)).doesNotContain("heron");
    assertThat(
            turnAnswer(
                    second, "And now?", Optional.of("no-such-session"), Principal.operator("local"))
                .status())
        .isEqualTo(404);
  }

  @Test
  @Timeout(600)
  void twoHundredTurnsOfTwentyKilobyteResultsStayInTheWindowAcrossARestart() throws Exception {
    AtomicInteger largest = new AtomicInteger();
    AtomicReference<String> lastTurnRequest = new AtomicReference<>("");
    model.respondWith(
        request -> {
          // Counted on the whole body, JSON and tools included: more than the model would count.
          largest.accumulateAndGet(O200K.countTokensOrdinary(request.body()), Math::max);
          if (!ContextTest.isSummaryRequest(request.json())) {
            lastTurnRequest.set(request.body());
          }
          return ContextTest.script(request);
        });
    TestHost host = host();
    Optional<String> session = Optional.empty();
    List<JsonNode> compactions = new ArrayList<>();
    for (int turn = 1; turn <= 200; turn++) {
      if (turn == 101) {
        host.close();
        host = host();
      }
      String message =
          turn == 3
              ? "Fetch the report of day 3. DECISION-3: we ship the release on Friday."
              : "Fetch the report of day " + turn + ".";
      JsonNode answer = turn(host, message, session);
      session = Optional.of(answer.path("session_id").asString());

      assertThat(answer.path("stop").asString()).as("turn %d", turn).isEqualTo("completed");
      assertThat(answer.path("messages").toString())
          .as("turn %d", turn)
          .contains("Noted day " + turn + ".");
      answer.path("compactions").forEach(compactions::add);
    }

    assertThat(largest.get()).isLessThanOrEqualTo(WINDOW);
    assertThat(lastTurnRequest.get())
        .contains("DECISION-3: we ship the release on Friday.")
        .contains("Fetch the report of day 200.");
    assertThat(compactions).isNotEmpty();
    assertThat(compactions)
        .allSatisfy(c -> assertThat(c.path("tokens_after").asInt()).isLessThan(WINDOW))
        .anySatisfy(c -> assertThat(c.path("summarised_messages").asInt()).isPositive())
        .anySatisfy(c -> assertThat(c.path("at_message").asInt()).isGreaterThan(400));
    // The transcript keeps every message whole, says what is sent in place of the oldest, and
    // lists every compaction, those before the restart too.
    JsonNode page =
        MAPPER.readTree(
            text(
                transcript(
                    host,
                    session.get(),
                    Map.of("from", List.of("0"), "limit", List.of("4")),
                    Principal.operator("local"))));
    assertThat(page.path("total").asInt()).isEqualTo(800);
    assertThat(page.path("next_from").asInt()).isEqualTo(4);
    assertThat(page.path("messages").path(2).path("content").asString())
        .isEqualTo(ContextTest.report(1));
    assertThat(page.path("messages").path(2).path("digest").asString()).contains("Result of");
    assertThat(page.path("summary").asString()).contains("DECISION-3");
    assertThat(page.path("summarised_messages").asInt()).isPositive();
    assertThat(page.path("compactions")).hasSize(compactions.size());
    assertThat(page.path("compactions").path(0)).isEqualTo(compactions.getFirst());
  }
}
