package dev.toolhost.bus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.toolhost.core.ToolCall;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class InvokeRequestTest {

  @Test
  void aRequestReadsBackAsTheCallItWasWrittenFrom() {
    ToolCall call =
        ToolCall.of("add", "{\"a\":2,\"b\":3}")
            .withSessionId("session-1")
            .withUser("ada")
            .withAgent("researcher")
            .withTimeout(Duration.ofSeconds(30));
    ToolCall read = InvokeRequest.parse(new InvokeRequest(call).toJson()).call();
    assertThat(read.callId()).isEqualTo(call.callId());
    assertThat(read.toolName()).isEqualTo("add");
    assertThat(read.arguments()).isEqualTo("{\"a\":2,\"b\":3}");
    assertThat(read.sessionId()).contains("session-1");
    assertThat(read.user()).contains("ada");
    assertThat(read.agent()).contains("researcher");
    assertThat(read.deadline()).isEqualTo(call.deadline());
  }

  @Test
  void aRequestCarriesItsCallKeyAndEveryNewCallGetsAnotherWhateverItsCallId() {
    ToolCall call = ToolCall.of("add", "{\"a\":2}").withCallId("call_0").withUser("ada");
    InvokeRequest request = new InvokeRequest(call);
    assertThat(request.callKey()).matches("[0-9a-f]{64}");
    assertThat(InvokeRequest.parse(request.toJson()).callKey()).isEqualTo(request.callKey());
    assertThat(new InvokeRequest(call).callKey()).isNotEqualTo(request.callKey());
  }

  @Test
  void mintedKeysOfManyCallsOnManyThreadsAreAllDifferent() throws Exception {
    ToolCall call = ToolCall.of("add", "{\"a\":2}").withCallId("call_0").withUser("ada");
    java.util.Set<String> keys = java.util.concurrent.ConcurrentHashMap.newKeySet();
    List<Thread> threads = new java.util.ArrayList<>();
    for (int t = 0; t < 8; t++) {
      threads.add(
          Thread.ofVirtual()
              .start(
                  () -> {
                    for (int i = 0; i < 5_000; i++) {
                      keys.add(CallKey.mint(call));
                    }
                  }));
    }
    for (Thread thread : threads) {
      thread.join(Duration.ofSeconds(30));
    }
    assertThat(keys).hasSize(40_000).allMatch(key -> key.matches("[0-9a-f]{64}"));
  }

  @Test
  void aRequestWithoutACallKeyIsKeyedByItsWholeContent() {
    String head = "{\"tool_call_id\":\"call_0\",\"tool_name\":\"work\",";
    String tail = "\"deadline\":\"2030-01-01T00:00:00Z\"}";
    String alice = head + "\"user\":\"alice\",\"arguments\":{\"tag\":\"alice-order\"}," + tail;
    String key = InvokeRequest.parse(alice).callKey();
    assertThat(InvokeRequest.parse(alice).callKey()).isEqualTo(key);
    assertThat(
            List.of(
                alice.replace("\"user\":\"alice\"", "\"user\":\"bob\""),
                alice.replace("alice-order", "bob-order"),
                alice.replace("\"work\"", "\"play\""),
                alice.replace("\"user\"", "\"session_id\""),
                alice.replace("call_0", "call_1")))
        .allSatisfy(other -> assertThat(InvokeRequest.parse(other).callKey()).isNotEqualTo(key));
  }

  @Test
  void deadlinesReadExactlyAsInstantParseReadsThem() {
    SplittableRandom random = new SplittableRandom(42);
    for (int i = 0; i < 10_000; i++) {
      Instant instant = randomInstant(random, i, 0); // 1970 to 9999
      String text = instant.toString();
      assertThat(InvokeRequest.instant(text)).as(text).isEqualTo(Instant.parse(text));
    }
    for (String text :
        List.of(
            "2026-01-01T00:00:00Z",
            "2026-01-01T00:00:00.5Z",
            "2026-06-30T23:59:60Z",
            "2026-01-01T24:00:00Z",
            "+12026-01-01T00:00:00Z",
            "2026-01-01T00:00:00+01:00",
            "2026-01-01T00:00:00.Z",
            "2026-01-01T00:00:00.123456789Z")) {
      assertThat(InvokeRequest.instant(text)).as(text).isEqualTo(Instant.parse(text));
    }
  }

  @Test
  void aDeadlineThatIsNoInstantIsRefusedAsInstantParseRefusesIt() {
    for (String text :
        List.of(
            "2026-01-01T00:00Z",
            "2026-13-01T00:00:00Z",
            "2026-02-30T00:00:00Z",
            "2026-01-01T25:00:00Z",
            "2026-01-01T00:61:00Z",
            "2026-01-01T00:00:00.1234567890Z",
            "2026-01-01T0a:00:00Z",
            "2026-01-01 00:00:00Z",
            "tomorrow")) {
      assertThatThrownBy(() -> Instant.parse(text)).as(text).isInstanceOf(DateTimeException.class);
      assertThatThrownBy(() -> InvokeRequest.instant(text))
          .as(text)
          .isInstanceOf(DateTimeException.class);
    }
  }

  @Test
  void aRequestWithABadDeadlineNamesTheField() {
    assertThatThrownBy(
            () ->
                InvokeRequest.parse(
                    "{\"tool_call_id\":\"c\",\"tool_name\":\"t\",\"deadline\":\"2026-02-30T00:00:00Z\"}"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'deadline'");
  }

  @Test
  void deadlinesAreWrittenExactlyAsInstantToStringWritesThem() {
    SplittableRandom random = new SplittableRandom(7);
    for (int i = 0; i < 10_000; i++) {
      Instant instant = randomInstant(random, i, -62_167_219_200L); // years 0 to 9999
      assertThat(InvokeRequest.isoInstant(instant)).isEqualTo(instant.toString());
    }
    for (Instant instant :
        List.of(
            Instant.EPOCH,
            Instant.parse("0000-01-01T00:00:00Z"),
            Instant.parse("9999-12-31T23:59:59.999999999Z"),
            Instant.parse("-0001-12-31T23:59:59Z"),
            Instant.parse("+10000-01-01T00:00:00Z"),
            Instant.MIN,
            Instant.MAX,
            Instant.parse("2026-01-01T00:00:00.000001Z"),
            Instant.parse("2026-01-01T00:00:00.100Z"))) {
      assertThat(InvokeRequest.isoInstant(instant)).isEqualTo(instant.toString());
    }
  }

  @Test
  void argumentsAreReadAsTheTextTheyWereSentIn() {
    String body =
        "{\"tool_call_id\":\"c\",\"arguments\": {\"text\" : \"a \\\"quoted\\\" caf\u00e9\","
            + " \"list\": [1, {\"x\": null}]} ,\"tool_name\":\"t\",\"ignored\":{\"deep\":[1,2]},"
            + "\"deadline\":\"2026-01-01T00:00:00Z\"}";
    ToolCall call = InvokeRequest.parse(body).call();
    assertThat(call.arguments())
        .isEqualTo("{\"text\" : \"a \\\"quoted\\\" caf\u00e9\", \"list\": [1, {\"x\": null}]}");
    assertThat(call.toolName()).isEqualTo("t");
    assertThat(call.sessionId()).isEmpty();
  }

  @Test
  void argumentsLongerThanTheParsersBufferAreReadWhole() {
    String arguments = "{\"text\":\"" + "0123456789\u00e9".repeat(20_000) + "\",\"n\":[1,2,3]}";
    ToolCall call = ToolCall.of("echo", arguments).withTimeout(Duration.ofSeconds(30));
    String body =
        new InvokeRequest(call)
            .toJson()
            .replace(
                "{\"tool_call_id\"", "{\"pad\":\"" + "x".repeat(70_000) + "\",\"tool_call_id\"");
    assertThat(InvokeRequest.parse(body).call().arguments()).isEqualTo(arguments);
  }

  @Test
  void argumentsSentAsAStringOfJsonOrAsNullAreAccepted() {
    String head =
        "{\"tool_call_id\":\"c\",\"tool_name\":\"t\",\"deadline\":\"2026-01-01T00:00:00Z\"";
    assertThat(InvokeRequest.parse(head + ",\"arguments\":\"{\\\"a\\\":1}\"}").call().arguments())
        .isEqualTo("{\"a\":1}");
    assertThat(InvokeRequest.parse(head + ",\"arguments\":null}").call().arguments())
        .isEqualTo("{}");
    assertThat(InvokeRequest.parse(head + "}").call().arguments()).isEqualTo("{}");
    // Not an object: carried as its text, for the dispatch path to refuse as invalid_arguments.
    assertThat(InvokeRequest.parse(head + ",\"arguments\":5}").call().arguments()).isEqualTo("5");
  }

  @Test
  void textThatIsNoRequestIsRefusedSayingWhy() {
    assertThatThrownBy(() -> InvokeRequest.parse("not json"))
        .hasMessageStartingWith("not valid JSON");
    assertThatThrownBy(() -> InvokeRequest.parse("[1,2]")).hasMessage("not a JSON object");
    assertThatThrownBy(() -> InvokeRequest.parse("")).hasMessage("not a JSON object");
    assertThatThrownBy(() -> InvokeRequest.parse("{\"tool_call_id\":\"c\"} {}"))
        .hasMessageStartingWith("not valid JSON");
    assertThatThrownBy(() -> InvokeRequest.parse("{\"tool_call_id\":\"c\",\"tool_name\":"))
        .hasMessageStartingWith("not valid JSON");
    assertThatThrownBy(
            () ->
                InvokeRequest.parse(
                    "{\"tool_call_id\":7,\"tool_name\":\"t\",\"deadline\":\"2026-01-01T00:00:00Z\"}"))
        .hasMessage("not a tool invoke request: no string 'tool_call_id'");
  }

  /**
   * An instant from the given epoch second up to 9999-12-31T23:59:59, its fraction in turn none,
   * milliseconds, microseconds and nanoseconds (the shapes {@code Instant.toString} writes).
   */
  private static Instant randomInstant(SplittableRandom random, int i, long fromSecond) {
    return Instant.ofEpochSecond(
        random.nextLong(fromSecond, 253_402_300_799L),
        switch (i % 4) {
          case 0 -> 0;
          case 1 -> random.nextInt(1000) * 1_000_000;
          case 2 -> random.nextInt(1_000_000) * 1_000;
          default -> random.nextInt(1_000_000_000);
        });
  }
}
