package dev.toolhost.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.knuddels.jtokkit.Encodings;
import com.knuddels.jtokkit.api.Encoding;
import com.knuddels.jtokkit.api.EncodingType;
import dev.toolhost.core.MethodTools;
import dev.toolhost.core.Param;
import dev.toolhost.core.Tool;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolSet;
import dev.toolhost.memory.InProcessWorkingMemory;
import dev.toolhost.memory.MemoryEntry;
import dev.toolhost.testing.RecordedRequest;
import dev.toolhost.testing.ScriptedModelServer;
import dev.toolhost.testing.ScriptedReply;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.JsonNode;

@Timeout(60)
class ContextTest {

  private static final Encoding O200K =
      Encodings.newLazyEncodingRegistry().getEncoding(EncodingType.O200K_BASE);
  private static final Pattern DECISION = Pattern.compile("DECISION-\\d+:[^\\n\"]*");
  private static final Pattern DAY = Pattern.compile("day (\\d+)");

  private final ScriptedModelServer server = ScriptedModelServer.start();
  private final ToolRegistry registry = new ToolRegistry();
  private final InProcessWorkingMemory memory = new InProcessWorkingMemory();
  private final List<ModelClient> clients = new ArrayList<>();

  ContextTest() {
    registry.registerAll(MethodTools.of(new Reports(), "builtin:reports"));
  }

  @AfterEach
  void close() {
    clients.forEach(ModelClient::close);
    server.close();
    memory.close();
  }

  /** A tool whose every result is a report of 20 KB. */
  public static final class Reports {
    @Tool(name = "fetch_report", description = "The sales report of one day.")
    public String fetchReport(@Param(description = "The day's number") int day) {
      return report(day);
    }
  }

  static String report(int day) {
    StringBuilder report = new StringBuilder("Sales report of day " + day + "\n");
    for (int row = 0; report.length() < 20_000; row++) {
      report
          .append("store-")
          .append(row % 37)
          .append(", widget ")
          .append((row * 7 + day) % 101)
          .append(", sold ")
          .append((row * 13 + day) % 97)
          .append(" at ")
          .append((row * 31 + day) % 1000)
          .append(" cents, returned ")
          .append(row % 5)
          .append('\n');
    }
    return report.substring(0, 20_000);
  }

  private Agent agent(String model, ContextBudget budget) {
    ModelClient client =
        ModelClient.builder(new ModelEndpoint(server.baseUrl(), model, "KEY"))
            .environment(Map.of())
            .maxRetries(0)
            .build();
    clients.add(client);
    return new Agent(
            AgentDefinition.of("assistant", client.endpoint())
                .withInstructions("You keep the sales reports.")
                .withContext(budget),
            client,
            ToolDispatcher.create())
        .withWorkingMemory(memory);
  }

  private Conversation conversation() {
    return Conversation.of("session-1", ToolSet.of(registry, ToolProfiles.MAIN));
  }

  static boolean isSummaryRequest(JsonNode request) {
    return request
        .path("messages")
        .path(0)
        .path("content")
        .asString("")
        .startsWith("You compact a conversation");
  }

  // A model that summarises by keeping every decision it is shown, calls fetch_report for the day
  // a user names, and answers once the report is in.
  static ScriptedReply script(RecordedRequest request) {
    JsonNode json = request.json();
    if (isSummaryRequest(json)) {
      Matcher decisions =
          DECISION.matcher(json.path("messages").path(1).path("content").asString());
      List<String> kept = new ArrayList<>();
      while (decisions.find()) {
        if (!kept.contains(decisions.group())) {
          kept.add(decisions.group());
        }
      }
      return ScriptedReply.answer("Decisions:\n" + String.join("\n", kept));
    }
    JsonNode messages = json.path("messages");
    JsonNode last = messages.get(messages.size() - 1);
    if (last.path("role").asString().equals("tool")) {
      Matcher day = DAY.matcher(last.path("content").asString());
      return ScriptedReply.answer("Noted day " + (day.find() ? day.group(1) : "?") + ".");
    }
    Matcher day = DAY.matcher(last.path("content").asString());
    day.find();
    return ScriptedReply.toolCalls(
        ScriptedReply.call(
            "call_" + day.group(1), "fetch_report", "{\"day\":" + day.group(1) + "}"));
  }

  @Test
  @Timeout(300)
  void twoHundredTurnsOfTwentyKilobyteResultsStayInASixteenThousandTokenWindow() {
    int window = 16_384;
    AtomicInteger largest = new AtomicInteger();
    AtomicReference<String> lastTurnRequest = new AtomicReference<>("");
    server.respondWith(
        request -> {
          // Counted on the whole body, JSON and tools included: more than the model would count.
          largest.accumulateAndGet(O200K.countTokensOrdinary(request.body()), Math::max);
          if (!isSummaryRequest(request.json())) {
            lastTurnRequest.set(request.body());
          }
          return script(request);
        });
    Agent agent = agent("gpt-4o-mini", ContextBudget.DEFAULT.withWindow(window));
    Conversation conversation = conversation();
    List<Compaction> compactions = Collections.synchronizedList(new ArrayList<>());
    RunListener listener =
        new RunListener() {
          @Override
          public void onCompaction(Compaction compaction) {
            compactions.add(compaction);
          }
        };

    for (int turn = 1; turn <= 200; turn++) {
      String message =
          turn == 3
              ? "Fetch the report of day 3. DECISION-3: we ship the release on Friday."
              : "Fetch the report of day " + turn + ".";
      RunResult result = agent.run(conversation, message, listener);

      assertThat(result.stop()).as("turn %d", turn).isEqualTo(RunResult.Stop.COMPLETED);
      assertThat(result.text()).as("turn %d", turn).isEqualTo("Noted day " + turn + ".");
    }

    assertThat(largest.get()).isLessThanOrEqualTo(window);
    assertThat(lastTurnRequest.get())
        .contains("DECISION-3: we ship the release on Friday.")
        .contains("Fetch the report of day 200.");
    assertThat(compactions).isNotEmpty();
    assertThat(compactions).allSatisfy(c -> assertThat(c.after().tokens()).isLessThan(window));
    assertThat(compactions).anySatisfy(c -> assertThat(c.summarisedMessages()).isPositive());
    // Nothing is lost: the history holds every message whole.
    List<ChatMessage> history = conversation.history();
    assertThat(history).hasSize(800);
    assertThat(history.get(2)).isEqualTo(new ChatMessage.ToolMessage("call_1", report(1)));
  }

  @Test
  void aTurnRefusedAsTooLongIsRecoveredByTrimmingAndCompaction() {
    // The model's real window is 6,000 tokens; the agent believes it has 100,000.
    server.contextWindow(6_000);
    server.respondWith(ContextTest::script);
    Agent agent = agent("local-model", ContextBudget.DEFAULT.withWindow(100_000));
    Conversation conversation = conversation();
    agent.run(conversation, "Hello, day 0 first.", RunListener.NONE);
    server.enqueue(
        ScriptedReply.toolCalls(
            ScriptedReply.call("call_c", "fetch_report", "{\"day\":3}"),
            ScriptedReply.call("call_d", "fetch_report", "{\"day\":4}")));
    List<Compaction> compactions = Collections.synchronizedList(new ArrayList<>());

    RunResult result =
        agent.run(
            conversation,
            "Fetch days 3 and 4.",
            new RunListener() {
              @Override
              public void onCompaction(Compaction compaction) {
                compactions.add(compaction);
              }
            });

    assertThat(result.stop()).isEqualTo(RunResult.Stop.COMPLETED);
    assertThat(result.text()).startsWith("Noted day");
    assertThat(compactions).hasSize(1);
    Compaction compaction = compactions.getFirst();
    assertThat(compaction.reason()).isEqualTo(Compaction.Reason.OVERFLOW);
    assertThat(compaction.window()).isEqualTo(6_000);
    assertThat(compaction.trimmedResults()).isGreaterThanOrEqualTo(2);
    assertThat(compaction.summarisedMessages()).isPositive();
    // The trimmed results are whole in working memory, under the keys the model is told.
    assertThat(compaction.memoryKeys()).isNotEmpty();
    for (String key : compaction.memoryKeys()) {
      assertThat(memory.get(key).map(MemoryEntry::value).orElseThrow())
          .startsWith("Sales report of day")
          .hasSize(20_000);
    }
    // The next turn is fitted to the window the refusal named, before it is sent.
    int before = server.requestCount();
    agent.run(conversation, "Fetch the report of day 5.", RunListener.NONE);
    assertThat(server.requestCount() - before).isBetween(2, 4);
  }

  @Test
  void aSecondRefusalIsAnErrorThatSaysWhatWasTried() {
    server.contextWindow(1_100);
    ModelClient client =
        ModelClient.builder(new ModelEndpoint(server.baseUrl(), "local-model", "KEY"))
            .environment(Map.of())
            .build();
    clients.add(client);
    Agent agent =
        new Agent(
                AgentDefinition.of("assistant", client.endpoint())
                    .withInstructions("Be thorough. ".repeat(400)),
                client,
                ToolDispatcher.create())
            .withWorkingMemory(memory);

    assertThatThrownBy(() -> agent.run(conversation(), "Hello.", RunListener.NONE))
        .isInstanceOfSatisfying(ModelException.class, e -> assertThat(e.contextOverflow()).isTrue())
        .hasMessageContaining("refused the request as longer than its context window twice")
        .hasMessageContaining("moved the largest tool results to working memory")
        .hasMessageContaining("context_window")
        .hasMessageContaining("maximum context length is 1100 tokens");
    assertThat(server.requestCount()).isEqualTo(2);
  }

  @Test
  void oldToolResultsAreSentAsTheirKeyAndADigest() {
    server.respondWith(ContextTest::script);
    Agent agent = agent("gpt-4o-mini", ContextBudget.DEFAULT.withToolResultTurns(1));
    Conversation conversation = conversation();
    agent.run(conversation, "Fetch the report of day 1.", RunListener.NONE);
    agent.run(conversation, "Fetch the report of day 2.", RunListener.NONE);

    List<RecordedRequest> requests = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      requests.add(server.takeRequest());
    }
    JsonNode messages = requests.getLast().json().path("messages");
    String old = messages.get(3).path("content").asString();
    assertThat(old)
        .startsWith("[Result of 'fetch_report' (20000 chars) moved out of the conversation")
        .contains("`session/session-1/context-call_1`")
        .contains("It begins: Sales report of day 1");
    assertThat(messages.get(7).path("content").asString()).isEqualTo(report(2));
    assertThat(memory.get("session/session-1/context-call_1").orElseThrow().value())
        .isEqualTo(report(1));
    assertThat(conversation.history().get(2))
        .isEqualTo(new ChatMessage.ToolMessage("call_1", report(1)));
  }
}
