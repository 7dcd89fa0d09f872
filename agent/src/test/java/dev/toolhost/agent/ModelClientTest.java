package dev.toolhost.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.toolhost.testing.RecordedRequest;
import dev.toolhost.testing.ScriptedModelServer;
import dev.toolhost.testing.ScriptedReply;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

@Timeout(20)
class ModelClientTest {

  private final ScriptedModelServer server = ScriptedModelServer.start();
  private final ModelClient client =
      ModelClient.builder(new ModelEndpoint(server.baseUrl(), "gpt-test", "TEST_KEY"))
          .environment(Map.of("TEST_KEY", "sk-test"))
          .backoff(Duration.ofMillis(10))
          .build();

  @AfterEach
  void close() {
    client.close();
    server.close();
  }

  /** A listener that hands each piece of the answer's text to the consumer. */
  private static ModelListener texts(Consumer<String> consumer) {
    return new ModelListener() {
      @Override
      public void onText(String delta) {
        consumer.accept(delta);
      }
    };
  }

  /** A listener that hands each tool call to the consumer once it has finished streaming. */
  private static ModelListener toolCalls(Consumer<ModelToolCall> consumer) {
    return new ModelListener() {
      @Override
      public void onToolCall(ModelToolCall call) {
        consumer.accept(call);
      }
    };
  }

  private static ModelRequest request(boolean stream) {
    ObjectNode tool = JsonNodeFactory.instance.objectNode().put("type", "function");
    tool.putObject("function").put("name", "get_weather").putObject("parameters");
    return new ModelRequest(
        List.of(new ChatMessage.UserMessage("Weather in Paris?")),
        List.of(tool),
        ModelRequest.ToolChoice.AUTO,
        stream);
  }

  @Test
  void streamedTextArrivesAsDeltasAndReasoningIsIgnored() throws Exception {
    server.enqueue(ScriptedReply.answer("Hello there, Paris is sunny."));
    List<String> deltas = new ArrayList<>();

    ModelReply reply = client.complete(request(true), texts(deltas::add));

    assertThat(deltas).hasSizeGreaterThan(3);
    assertThat(String.join("", deltas)).isEqualTo("Hello there, Paris is sunny.");
    assertThat(reply.content()).contains("Hello there, Paris is sunny.");
    assertThat(reply.finishReason()).isEqualTo("stop");
    assertThat(reply.toolCalls()).isEmpty();
  }

  @Test
  void requestCarriesModelToolsToolChoiceParallelCallsAndTheKey() throws Exception {
    server.enqueue(ScriptedReply.answer("ok"));

    client.complete(request(true), ModelListener.NONE);

    RecordedRequest recorded = server.takeRequest();
    assertThat(recorded.path()).isEqualTo("/v1/chat/completions");
    assertThat(recorded.header("Authorization")).contains("Bearer sk-test");
    JsonNode body = recorded.json();
    assertThat(body.get("model").asString()).isEqualTo("gpt-test");
    assertThat(body.get("stream").asBoolean()).isTrue();
    assertThat(body.get("tool_choice").asString()).isEqualTo("auto");
    assertThat(body.get("parallel_tool_calls").asBoolean()).isTrue();
    assertThat(body.get("tools").get(0).get("function").get("name").asString())
        .isEqualTo("get_weather");
    assertThat(body.get("messages").get(0).get("role").asString()).isEqualTo("user");
  }

  @Test
  void interleavedToolCallsSplitMidTokenAreAccumulatedByIndex() throws Exception {
    server.enqueue(
        ScriptedReply.toolCalls(
            ScriptedReply.call("call_a", "get_weather", "{\"city\":\"Paris\",\"unit\":\"C\"}"),
            ScriptedReply.call("call_b", "get_time", "{\"zone\":\"Europe/Paris\"}"),
            ScriptedReply.call("call_c", "list_tool_guides", "{}")));
    List<ModelToolCall> handedOn = Collections.synchronizedList(new ArrayList<>());

    ModelReply reply = client.complete(request(true), toolCalls(handedOn::add));

    assertThat(reply.finishReason()).isEqualTo("tool_calls");
    assertThat(reply.toolCalls())
        .containsExactly(
            new ModelToolCall("call_a", "get_weather", "{\"city\":\"Paris\",\"unit\":\"C\"}"),
            new ModelToolCall("call_b", "get_time", "{\"zone\":\"Europe/Paris\"}"),
            new ModelToolCall("call_c", "list_tool_guides", "{}"));
    assertThat(handedOn).containsExactlyInAnyOrderElementsOf(reply.toolCalls());
  }

  @Test
  void aToolCallIsHandedOnAsSoonAsItsArgumentsCloseBeforeTheStreamEnds() throws Exception {
    server.enqueue(
        ScriptedReply.stream()
            .toolCallStart(0, "call_1", "first")
            .toolCallArguments(0, "{\"a\": \"}{\\\"\"")
            .toolCallArguments(0, "}")
            .pause(Duration.ofSeconds(2))
            .toolCallStart(1, "call_2", "second")
            .toolCallArguments(1, "{}")
            .finish("tool_calls")
            .done()
            .build());
    List<Long> handedOnAt = new ArrayList<>();
    long start = System.nanoTime();

    client.complete(
        request(true), toolCalls(call -> handedOnAt.add((System.nanoTime() - start) / 1_000_000)));

    assertThat(handedOnAt).hasSize(2);
    assertThat(handedOnAt.get(0)).isLessThan(1500);
    assertThat(handedOnAt.get(1)).isGreaterThanOrEqualTo(1900);
  }

  @Test
  void nonStreamedAnswerGivesTheSameReply() throws Exception {
    server.enqueue(
        ScriptedReply.toolCalls(
            ScriptedReply.call("call_a", "get_weather", "{\"city\":\"Oslo\"}")));

    ModelReply reply = client.complete(request(false), ModelListener.NONE);

    assertThat(server.takeRequest().json().get("stream").asBoolean()).isFalse();
    assertThat(reply.toolCalls())
        .containsExactly(new ModelToolCall("call_a", "get_weather", "{\"city\":\"Oslo\"}"));
    assertThat(reply.finishReason()).isEqualTo("tool_calls");
    assertThat(reply.usage()).contains(new TokenUsage(20, 15));
    assertThat(reply.responseId()).contains("chatcmpl-scripted");
    assertThat(reply.responseModel()).contains(client.endpoint().model());
  }

  @Test
  void theUsageChunkAfterTheFinishComesWithTheReply() throws Exception {
    server.enqueue(
        ScriptedReply.stream().text("Sunny.").finish("stop").usage(1234, 56).done().build());

    ModelReply reply = client.complete(request(true), ModelListener.NONE);

    assertThat(server.takeRequest().json().get("stream_options").get("include_usage").asBoolean())
        .isTrue();
    assertThat(reply.content()).contains("Sunny.");
    assertThat(reply.usage()).contains(new TokenUsage(1234, 56));
  }

  @Test
  void usageOnTheLastChunkWithChoicesCountsAndNullUsageOnTheOthersIsIgnored() throws Exception {
    server.enqueue(
        ScriptedReply.stream()
            .raw(
                "data: {\"object\": \"chat.completion.chunk\", \"choices\": [{\"index\": 0,"
                    + " \"delta\": {\"content\": \"Sunny.\"}, \"finish_reason\": null}],"
                    + " \"usage\": null}")
            .raw(
                "data: {\"object\": \"chat.completion.chunk\", \"choices\": [{\"index\": 0,"
                    + " \"delta\": {}, \"finish_reason\": \"stop\"}], \"usage\":"
                    + " {\"prompt_tokens\": 40, \"completion_tokens\": 2, \"total_tokens\": 42}}")
            .done()
            .build());

    ModelReply reply = client.complete(request(true), ModelListener.NONE);

    assertThat(reply.content()).contains("Sunny.");
    assertThat(reply.finishReason()).isEqualTo("stop");
    assertThat(reply.usage()).contains(new TokenUsage(40, 2));
  }

  @Test
  void theLastUsageOfAStreamWins() throws Exception {
    server.enqueue(
        ScriptedReply.stream()
            .text("Sunny.")
            .usage(1, 1)
            .finish("stop")
            .usage(90, 3)
            .done()
            .build());

    ModelReply reply = client.complete(request(true), ModelListener.NONE);

    assertThat(reply.usage()).contains(new TokenUsage(90, 3));
  }

  @Test
  void aServerThatReportsNoUsageGivesAReplyWithoutIt() throws Exception {
    server.enqueue(ScriptedReply.stream().text("Sunny.").finish("stop").done().build());

    ModelReply reply = client.complete(request(true), ModelListener.NONE);

    assertThat(reply.content()).contains("Sunny.");
    assertThat(reply.usage()).isEmpty();
  }

  @ParameterizedTest
  @ValueSource(strings = {"\"many\"", "-5", "1.5", "null", "{}", "99999999999999999999999"})
  void aUsageThatIsNotATokenCountIsIgnoredAndTheAnswerStands(String promptTokens) throws Exception {
    server.enqueue(
        ScriptedReply.stream()
            .text("Sunny.")
            .finish("stop")
            .raw(
                "data: {\"object\": \"chat.completion.chunk\", \"choices\": [], \"usage\":"
                    + " {\"prompt_tokens\": "
                    + promptTokens
                    + ", \"completion_tokens\": 3, \"total_tokens\": 3}}")
            .done()
            .build());

    ModelReply reply = client.complete(request(true), ModelListener.NONE);

    assertThat(reply.content()).contains("Sunny.");
    assertThat(reply.finishReason()).isEqualTo("stop");
    assertThat(reply.usage()).isEmpty();
  }

  @Test
  void rateLimitIsRetriedAfterRetryAfter() throws Exception {
    server.enqueue(
        ScriptedReply.status(429, "{\"error\":{\"message\":\"slow down\"}}")
            .header("Retry-After", "1"));
    server.enqueue(ScriptedReply.answer("done"));
    long start = System.nanoTime();

    ModelReply reply = client.complete(request(true), ModelListener.NONE);

    assertThat(reply.content()).contains("done");
    assertThat(Duration.ofNanos(System.nanoTime() - start))
        .isGreaterThanOrEqualTo(Duration.ofMillis(950));
    assertThat(server.requestCount()).isEqualTo(2);
  }

  @Test
  void serverErrorsAreRetriedABoundedNumberOfTimes() {
    for (int i = 0; i < 4; i++) {
      server.enqueue(ScriptedReply.status(500, "{\"error\":{\"message\":\"upstream broke\"}}"));
    }

    assertThatThrownBy(() -> client.complete(request(true), ModelListener.NONE))
        .isInstanceOf(ModelException.class)
        .hasMessageContaining("HTTP 500")
        .hasMessageContaining("after 3 retries")
        .hasMessageContaining("upstream broke");
    assertThat(server.requestCount()).isEqualTo(4);
  }

  @Test
  void openAisContextLengthRefusalIsAnOverflowNamingTheWindow() {
    server.enqueue(ScriptedReply.contextLengthExceeded(16_385, 17_243));

    assertThatThrownBy(() -> client.complete(request(true), ModelListener.NONE))
        .isInstanceOfSatisfying(
            ModelException.class,
            e -> {
              assertThat(e.contextOverflow()).isTrue();
              assertThat(e.status()).isEqualTo(400);
              assertThat(ModelClient.windowNamedIn(e.getMessage())).hasValue(16_385);
            })
        .hasMessageContaining("refused the request as longer than its context window (400)")
        .hasMessageContaining("maximum context length is 16385 tokens");
  }

  @Test
  void llamaCppsContextRefusalIsAnOverflowAndNeverRetriedAsA5xx() {
    server.enqueue(
        ScriptedReply.status(
            500,
            "{\"error\":{\"code\":500,\"message\":\"the request exceeds the available context"
                + " size, try increasing it\",\"type\":\"exceed_context_size_error\","
                + "\"n_prompt_tokens\":9000,\"n_ctx\":8192}}"));

    assertThatThrownBy(() -> client.complete(request(true), ModelListener.NONE))
        .isInstanceOfSatisfying(
            ModelException.class, e -> assertThat(e.contextOverflow()).isTrue());
    assertThat(server.requestCount()).isEqualTo(1);
  }

  @Test
  void otherServersRefusalsAreRecognisedAndTheirWindowsRead() {
    assertThat(ModelClient.contextOverflow("prompt is too long: 210000 tokens > 200000 maximum"))
        .isTrue();
    assertThat(ModelClient.windowNamedIn("prompt is too long: 210000 tokens > 200000 maximum"))
        .hasValue(200_000);
    assertThat(
            ModelClient.windowNamedIn(
                "This endpoint's maximum context length is 131072 tokens. However, you requested"
                    + " about 140000 tokens"))
        .hasValue(131_072);
    assertThat(
            ModelClient.contextOverflow(
                "Prompt contains 40000 tokens and 0 draft tokens, too large for model with 32768"
                    + " maximum context length"))
        .isTrue();
    assertThat(ModelClient.contextOverflow("{\"error\":{\"message\":\"upstream broke\"}}"))
        .isFalse();
    assertThat(new ModelException("upstream broke", 500).contextOverflow()).isFalse();
  }

  @Test
  void serverErrorFollowedBySuccessSucceeds() throws Exception {
    server.enqueue(ScriptedReply.status(503, ""));
    server.enqueue(ScriptedReply.answer("back"));

    assertThat(client.complete(request(true), ModelListener.NONE).content()).contains("back");
  }

  @Test
  void refusedKeyNamesTheVariable() {
    server.enqueue(ScriptedReply.status(401, "{\"error\":{\"message\":\"Incorrect API key\"}}"));

    assertThatThrownBy(() -> client.complete(request(true), ModelListener.NONE))
        .isInstanceOf(ModelException.class)
        .hasMessageContaining("TEST_KEY")
        .hasMessageContaining("Incorrect API key");
  }

  @Test
  void missingKeySaysTheVariableIsNotSet() {
    server.enqueue(ScriptedReply.status(401, ""));
    try (ModelClient keyless =
        ModelClient.builder(new ModelEndpoint(server.baseUrl(), "gpt-test", "NO_SUCH_KEY_VAR"))
            .environment(Map.of())
            .build()) {
      assertThatThrownBy(() -> keyless.complete(request(true), ModelListener.NONE))
          .hasMessageContaining("NO_SUCH_KEY_VAR is not set");
    }
    assertThat(server.takeRequest().header("Authorization")).isEmpty();
  }

  @Test
  void unknownModelIsNamed() {
    server.enqueue(ScriptedReply.status(404, "{\"error\":{\"message\":\"no such model\"}}"));

    assertThatThrownBy(() -> client.complete(request(true), ModelListener.NONE))
        .isInstanceOf(ModelException.class)
        .hasMessageContaining("'gpt-test' was not found");
  }

  @Test
  void truncatedStreamIsAnError() {
    server.enqueue(ScriptedReply.stream().text("Half an ans").build());

    assertThatThrownBy(() -> client.complete(request(true), ModelListener.NONE))
        .isInstanceOf(ModelException.class)
        .hasMessageContaining("ended before the answer finished");
  }

  @Test
  void aStreamCutBeforeAnyContentIsSentAgainOnce() throws Exception {
    server.enqueue(ScriptedReply.stream().reasoning("Thinking").toolCallStart(0, "c", "x").build());
    server.enqueue(ScriptedReply.answer("Whole answer."));
    List<String> deltas = new ArrayList<>();

    ModelReply reply = client.complete(request(true), texts(deltas::add));

    assertThat(reply.content()).contains("Whole answer.");
    assertThat(String.join("", deltas)).isEqualTo("Whole answer.");
    assertThat(reply.toolCalls()).isEmpty();
    assertThat(server.requestCount()).isEqualTo(2);
  }

  @Test
  void aConnectionClosedBeforeAnyAnswerIsSentAgainOnceOnANewOne() throws Exception {
    String completion =
        "{\"id\":\"c1\",\"model\":\"gpt-test\",\"choices\":[{\"index\":0,\"message\":"
            + "{\"role\":\"assistant\",\"content\":\"Sunny.\"},\"finish_reason\":\"stop\"}]}";
    AtomicInteger connections = new AtomicInteger();
    try (ServerSocket listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      Thread serving =
          Thread.ofVirtual()
              .start(
                  () -> {
                    for (int i = 0; i < 2; i++) {
                      try (Socket socket = listener.accept()) {
                        connections.incrementAndGet();
                        readHead(socket.getInputStream());
                        if (i == 0) {
                          continue; // closed with no answer, as a stale keep-alive would be
                        }
                        byte[] body = completion.getBytes(StandardCharsets.UTF_8);
                        socket
                            .getOutputStream()
                            .write(
                                ("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                        + "Content-Length: "
                                        + body.length
                                        + "\r\nConnection: close\r\n\r\n")
                                    .getBytes(StandardCharsets.US_ASCII));
                        socket.getOutputStream().write(body);
                      } catch (IOException e) {
                        return;
                      }
                    }
                  });
      try (ModelClient closing =
          ModelClient.builder(
                  new ModelEndpoint(
                      URI.create("http://127.0.0.1:" + listener.getLocalPort() + "/v1"),
                      "gpt-test",
                      "K"))
              .environment(Map.of("K", "sk-test"))
              .build()) {
        ModelReply reply = closing.complete(request(false), ModelListener.NONE);

        assertThat(reply.content()).contains("Sunny.");
        assertThat(connections).hasValue(2);
      }
      serving.join(5_000);
    }
  }

  /** Reads a request's head and body (by its Content-Length) off the stream. */
  private static void readHead(InputStream in) throws IOException {
    StringBuilder head = new StringBuilder();
    while (!head.toString().endsWith("\r\n\r\n")) {
      int b = in.read();
      if (b < 0) {
        return;
      }
      head.append((char) b);
    }
    Matcher length = Pattern.compile("(?i)content-length: *(\\d+)").matcher(head);
    if (length.find()) {
      in.readNBytes(Integer.parseInt(length.group(1)));
    }
  }

  @Test
  void aStreamCutTwiceBeforeAnyContentIsAnError() {
    server.enqueue(ScriptedReply.stream().reasoning("Thinking").build());
    server.enqueue(ScriptedReply.stream().reasoning("Thinking again").build());

    assertThatThrownBy(() -> client.complete(request(true), ModelListener.NONE))
        .isInstanceOf(ModelException.class)
        .hasMessageContaining("ended before the answer finished");
    assertThat(server.requestCount()).isEqualTo(2);
  }

  @Test
  void aStreamCutAfterTextIsNotSentAgain() {
    server.enqueue(ScriptedReply.stream().text("Half an ans").build());
    server.enqueue(ScriptedReply.answer("Never asked for."));

    assertThatThrownBy(() -> client.complete(request(true), ModelListener.NONE))
        .isInstanceOf(ModelException.class)
        .hasMessageContaining("after 11 characters of text");
    assertThat(server.requestCount()).isEqualTo(1);
  }

  @Test
  void malformedChunkIsQuoted() {
    server.enqueue(
        ScriptedReply.stream().text("ok").raw("data: {\"choices\": [{\"delta\": ").done().build());

    assertThatThrownBy(() -> client.complete(request(true), ModelListener.NONE))
        .isInstanceOf(ModelException.class)
        .hasMessageContaining("malformed chunk")
        .hasMessageContaining("data: {\"choices\": [{\"delta\": ");
  }

  @Test
  void interruptingTheCallerStopsTheStream() throws Exception {
    server.enqueue(
        ScriptedReply.stream().text("slow").pause(Duration.ofSeconds(30)).done().build());
    List<Throwable> thrown = new ArrayList<>();
    CountDownLatch streaming = new CountDownLatch(1);
    ModelListener listener = texts(delta -> streaming.countDown());
    Thread caller =
        Thread.ofVirtual()
            .start(
                () -> {
                  try {
                    client.complete(request(true), listener);
                  } catch (Throwable e) {
                    thrown.add(e);
                  }
                });
    server.takeRequest();
    // The first chunk is in: the caller now waits on the stream's pause.
    assertThat(streaming.await(10, TimeUnit.SECONDS)).isTrue();

    caller.interrupt();
    caller.join(Duration.ofSeconds(5));

    assertThat(caller.isAlive()).isFalse();
    assertThat(thrown).singleElement().isInstanceOf(InterruptedException.class);
  }

  @Test
  void retryAfterReadsSecondsAndDates() {
    assertThat(ModelClient.retryAfter("2")).contains(Duration.ofSeconds(2));
    assertThat(ModelClient.retryAfter("0.5")).contains(Duration.ofMillis(500));
    assertThat(ModelClient.retryAfter("Wed, 21 Oct 2015 07:28:00 GMT")).contains(Duration.ZERO);
    assertThat(ModelClient.retryAfter("soon")).isEmpty();
  }
}
