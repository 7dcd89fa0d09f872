package dev.toolhost.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.json.JsonMapper;

/**
 * The stdio front of the gateway's calls ({@link GatewayCalls#stdin}) passes the client's lines on
 * as they came, but for a tool call's id, which it puts in the call's {@code _meta}, and a cancel
 * of a running call, which it takes.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class GatewayStdinTest {

  private static final JsonMapper JSON = JsonMapper.shared();

  private final GatewayCalls calls = new GatewayCalls();

  private static List<String> lines(InputStream in) throws IOException {
    return new String(in.readAllBytes(), StandardCharsets.UTF_8).lines().toList();
  }

  private static InputStream of(String... lines) {
    return new ByteArrayInputStream(
        (String.join("\n", lines) + "\n").getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void linesOtherThanToolCallsAndCancelsGoOnByteForByte() throws IOException {
    String initialize =
        "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"x\":1.50}}";
    String notJson = "not json, tools/call";
    String list = "{ \"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"tools/list\" }";

    assertThat(lines(calls.stdin(of(initialize, notJson, list))))
        .containsExactly(initialize, notJson, list);
  }

  @Test
  void aToolCallGetsItsIdInItsMetaAndKeepsItsArgumentsNumbersAsWritten() throws IOException {
    String call =
        "{\"jsonrpc\":\"2.0\",\"id\":\"c-7\",\"method\":\"tools/call\",\"params\":{\"name\":\"add\","
            + "\"arguments\":{\"a\":0.1000000000000000055511151231257827,\"b\":12345678901234567890123}}}";

    String passed = passed(call);

    assertThat(idIn(passed)).isEqualTo("c-7");
    assertThat(passed)
        .contains("\"a\":0.1000000000000000055511151231257827")
        .contains("\"b\":12345678901234567890123");
  }

  @Test
  void aToolCallWhoseMethodIsWrittenWithEscapesGetsItsIdToo() throws IOException {
    String call =
        "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools\\/c\\u0061ll\","
            + "\"params\":{\"name\":\"sleep\"}}";

    assertThat(idIn(passed(call))).isEqualTo("4");
  }

  @Test
  void aClientCannotNameAnotherCallsIdInItsMeta() throws IOException {
    String call =
        "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"sleep\","
            + "\"_meta\":{\"progressToken\":9,\""
            + GatewayCalls.REQUEST_ID
            + "\":\"someone-else\"}}}";

    String passed = passed(call);

    assertThat(idIn(passed)).isEqualTo("3");
    assertThat(JSON.readTree(passed).at("/params/_meta/progressToken").asInt()).isEqualTo(9);
  }

  @Test
  void aCancelOfARunningCallInterruptsItAndGoesNoFurther() throws Exception {
    PipedOutputStream client = new PipedOutputStream();
    InputStream sdk = calls.stdin(new PipedInputStream(client));
    CompletableFuture<Boolean> interrupted = new CompletableFuture<>();
    CompletableFuture<Void> running = new CompletableFuture<>();
    Thread call =
        Thread.ofVirtual()
            .start(
                () -> {
                  try (GatewayCalls.Call ignored = calls.running(GatewayCalls.STDIO_SESSION, "5")) {
                    running.complete(null);
                    Thread.sleep(20_000);
                    interrupted.complete(false);
                  } catch (InterruptedException e) {
                    interrupted.complete(true);
                  }
                });
    running.get(5, TimeUnit.SECONDS);

    String cancel =
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":5}}";
    String unknown =
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":6}}";
    client.write((cancel + "\n" + unknown + "\n").getBytes(StandardCharsets.UTF_8));
    client.close();

    assertThat(lines(sdk)).as("what reaches the SDK").containsExactly(unknown);
    assertThat(interrupted.get(5, TimeUnit.SECONDS)).as("the call was interrupted").isTrue();
    call.join();
  }

  /** The one line the front passes on for the client's line. */
  private String passed(String line) throws IOException {
    return lines(calls.stdin(of(line))).getFirst();
  }

  /** The call id the front put in the passed line's {@code _meta}. */
  private static String idIn(String passed) {
    return JSON.readTree(passed)
        .at("/params/_meta/" + GatewayCalls.REQUEST_ID.replace("~", "~0").replace("/", "~1"))
        .asString();
  }
}
