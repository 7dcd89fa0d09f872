package dev.toolhost.agent;

import dev.toolhost.core.ToolGuides;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolSet;
import dev.toolhost.testing.ScriptedModelServer;
import dev.toolhost.testing.ScriptedReply;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The context budget's own cost per model request (issue 34): counting the request and deciding
 * whether to compact it, on a conversation of 10, 100 and 1,000 messages, beside a bare request of
 * the same messages to the scripted model server. {@code decide} is the steady state (the history's
 * texts were counted by an earlier request and only the new ones are tokenized); {@code decideCold}
 * counts every text (a conversation's first request); {@code bareRequest} is the baseline, the same
 * body posted with the JDK client and the streamed answer read. The window is set large, so the
 * decision is "send as it is": this is the price every request pays, not that of a compaction,
 * which is a model request of its own. {@code model} picks the counter: jtokkit's o200k_base for
 * gpt-4o-mini, the estimate for llama3.1.
 *
 * <p>In the agent module's package, as the compactor is the module's own.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class ContextBenchmark {

  @Param({"10", "100", "1000"})
  public int messages;

  @Param({"gpt-4o-mini", "llama3.1:8b"})
  public String model;

  private ScriptedModelServer server;
  private ModelClient client;
  private Compactor compactor;
  private ToolSet tools;
  private List<ChatMessage> history;
  private Conversation conversation;
  private List<ObjectNode> wireTools;
  private final List<ChatMessage> added = List.of(new ChatMessage.UserMessage("What now?"));
  private HttpClient http;
  private HttpRequest bare;

  @Setup(Level.Trial)
  public void setUp() {
    server = ScriptedModelServer.start();
    server.respondWith(request -> ScriptedReply.answer("Noted."));
    client =
        ModelClient.builder(new ModelEndpoint(server.baseUrl(), model, "NO_KEY"))
            .environment(Map.of())
            .build();
    AgentDefinition definition =
        AgentDefinition.of("bench", client.endpoint())
            .withContext(ContextBudget.DEFAULT.withWindow(4_000_000));
    compactor = new Compactor(definition, client, TokenCounter.forModel(model), Optional.empty());
    ToolRegistry registry = new ToolRegistry();
    registry.registerAll(new ToolGuides().tools());
    tools = ToolSet.of(registry, ToolProfiles.MAIN);
    wireTools = ToolAliases.of(tools.specs()).wireTools();
    history = history(messages);
    conversation = conversation();
    http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    ObjectNode body = JsonMapper.shared().createObjectNode();
    body.put("model", model).put("stream", true);
    ArrayNode wire = body.putArray("messages");
    wire.add(new ChatMessage.SystemMessage("Be brief.").toWire());
    history.forEach(message -> wire.add(message.toWire()));
    added.forEach(message -> wire.add(message.toWire()));
    ArrayNode offered = body.putArray("tools");
    wireTools.forEach(offered::add);
    bare =
        HttpRequest.newBuilder(URI.create(server.baseUrl() + "/chat/completions"))
            .POST(HttpRequest.BodyPublishers.ofString(body.toString()))
            .build();
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    http.close();
    client.close();
    server.close();
  }

  // Turns of four messages: a question, a tool call, its result of 1,000 characters, an answer.
  private static List<ChatMessage> history(int size) {
    List<ChatMessage> messages = new ArrayList<>(size);
    for (int turn = 0; messages.size() < size; turn++) {
      String id = "call_" + turn;
      List<ChatMessage> four =
          List.of(
              new ChatMessage.UserMessage(
                  "Question " + turn + ": " + "what about the stores? ".repeat(8)),
              new ChatMessage.AssistantMessage(
                  Optional.empty(),
                  List.of(new ModelToolCall(id, "list_tool_guides", "{\"day\":" + turn + "}"))),
              new ChatMessage.ToolMessage(
                  id,
                  ("store " + turn + " sold 42 widgets at 3.50; ").repeat(40).substring(0, 1_000)),
              new ChatMessage.AssistantMessage(
                  Optional.of("Store " + turn + " did well. ".repeat(10)), List.of()));
      messages.addAll(four.subList(0, Math.min(four.size(), size - messages.size())));
    }
    return messages;
  }

  private Conversation conversation() {
    Conversation fresh = Conversation.of("bench", tools);
    fresh.append(history);
    return fresh;
  }

  /** Counting the next request and deciding to send it, its history counted before. */
  @Benchmark
  public TokenCount decide() throws InterruptedException {
    return compactor.prepare(conversation, "Be brief.", added, wireTools, RunListener.NONE).count();
  }

  /** The same on a conversation whose texts were never counted (its first request). */
  @Benchmark
  public TokenCount decideCold() throws InterruptedException {
    return compactor
        .prepare(conversation(), "Be brief.", added, wireTools, RunListener.NONE)
        .count();
  }

  /** The baseline: the same request posted to the scripted model server, its stream read. */
  @Benchmark
  public long bareRequest() throws Exception {
    try (InputStream body = http.send(bare, HttpResponse.BodyHandlers.ofInputStream()).body()) {
      return body.readAllBytes().length;
    }
  }
}
