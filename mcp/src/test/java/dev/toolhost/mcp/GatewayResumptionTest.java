package dev.toolhost.mcp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.ToolAnnotations;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolProgress;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import dev.toolhost.core.ToolSpec;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A client of the gateway whose connection drops mid-call resumes the call's event stream with
 * {@code Last-Event-ID} and gets the rest of it and the call's answer, within the gateway's window:
 * our resume client on the TypeScript SDK, and a raw HTTP client for the window's bounds.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class GatewayResumptionTest {

  private static final JsonMapper JSON = JsonMapper.shared();
  private static final Pattern EVENT_ID = Pattern.compile("(?m)^id: *([0-9a-f]{32})-(\\d+)$");

  @TempDir Path temp;
  private final ToolRegistry registry = new ToolRegistry();
  private final AtomicInteger slowRuns = new AtomicInteger();
  private final HttpClient client =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  private McpGateway gateway;
  private ServedGateway http;

  @AfterEach
  void stop() throws Exception {
    if (http != null) {
      http.close();
    }
    if (gateway != null) {
      gateway.close();
    }
    client.close();
  }

  @Test
  void aClientWhoseStreamIsCutResumesWithLastEventIdAndGetsTheAnswer() throws Exception {
    // Six progress reports, half a second apart: a call of 3 s.
    register("slow", 6, Duration.ofMillis(500), "done after 3 s");
    register("quick", 0, Duration.ZERO, "quick answer");
    serve(GatewayStreams.Window.defaults());

    Process resume =
        new ProcessBuilder(NpmPackages.resumeClient(http.endpoint().toString(), "slow", "quick"))
            .redirectError(temp.resolve("client.err").toFile())
            .start();
    assertThat(resume.waitFor(60, TimeUnit.SECONDS)).as("the client ended").isTrue();
    String printed = new String(resume.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(printed)
        .as("what the client printed; its log: %s", Files.readString(temp.resolve("client.err")))
        .isNotBlank();
    JsonNode ended = JSON.readTree(printed);

    String cut = ended.path("cutAfter").asString();
    assertThat(cut).as("the id of the event the stream was cut after").matches("[0-9a-f]{32}-\\d+");
    assertThat(ended.path("answer").asString()).isEqualTo("done after 3 s");
    assertThat(slowRuns).as("the call ran once").hasValue(1);
    List<Double> progress = new ArrayList<>();
    ended.path("progress").forEach(update -> progress.add(update.asDouble()));
    assertThat(progress)
        .as("every progress, in order")
        .containsExactly(1.0, 2.0, 3.0, 4.0, 5.0, 6.0);
    List<String> resumes = new ArrayList<>();
    ended
        .path("requests")
        .forEach(
            request -> {
              if (request.path("method").asString().equals("GET")
                  && !request.path("lastEventId").isNull()) {
                resumes.add(request.path("lastEventId").asString());
              }
            });
    assertThat(resumes).as("the GETs that resumed, by their Last-Event-ID").containsExactly(cut);
    String stream = cut.substring(0, cut.indexOf('-'));
    List<Long> numbers = new ArrayList<>();
    ended
        .path("ids")
        .forEach(
            id -> {
              assertThat(id.asString()).startsWith(stream + "-");
              numbers.add(Long.parseLong(id.asString().substring(stream.length() + 1)));
            });
    assertThat(numbers).as("the event ids the client saw, across both connections").isSorted();
    assertThat(numbers).doesNotHaveDuplicates();
    assertThat(ended.path("second").asString())
        .as("the session serves the next call")
        .isEqualTo("quick answer");
  }

  @Test
  void anIdPastTheWindowOrOfAnotherSessionIsRefusedWith400() throws Exception {
    register("burst", 6, Duration.ofMillis(10), "burst done");
    register("quick", 0, Duration.ZERO, "quick answer");
    // Three events a stream: of six progress and the answer, the last three.
    serve(new GatewayStreams.Window(3, 1 << 20, Duration.ofMinutes(1), 64 << 20, Optional.empty()));
    String session = initialize();

    String first = postAndDrop(session, "burst");
    String stream = first.substring(0, first.indexOf('-'));
    assertThat(first).as("the first progress event's id").isEqualTo(stream + "-1");
    GatewayStreams streams = gateway.streams().orElseThrow();
    await().atMost(Duration.ofSeconds(20)).until(() -> streams.ended(stream));

    HttpResponse<String> past = resume(session, stream + "-1");
    assertThat(past.statusCode()).isEqualTo(400);
    JsonNode refusal = JSON.readTree(past.body());
    assertThat(refusal.path("error").path("code").asString()).isEqualTo("invalid_request");
    assertThat(refusal.path("error").path("message").asString())
        .contains("older than the events the gateway still holds");
    assertThat(resume(session, stream + "-3").statusCode())
        .as("the event after it is gone")
        .isEqualTo(400);
    assertThat(resume(session, stream + "-99").statusCode()).isEqualTo(400);
    assertThat(resume(session, "not-an-id").statusCode()).isEqualTo(400);
    String other = initialize();
    HttpResponse<String> foreign = resume(other, stream + "-4");
    assertThat(foreign.statusCode()).as("another session's stream").isEqualTo(400);
    assertThat(JSON.readTree(foreign.body()).path("error").path("message").asString())
        .contains("names no event stream of this session");

    HttpResponse<String> rest = resume(session, stream + "-4");
    assertThat(rest.statusCode()).isEqualTo(200);
    assertThat(ids(rest.body(), stream)).containsExactly(5L, 6L, 7L);
    assertThat(rest.body()).contains("burst done");
    HttpResponse<String> none = resume(session, stream + "-7");
    assertThat(none.statusCode()).as("a resume after the answer").isEqualTo(200);
    assertThat(ids(none.body(), stream)).as("nothing follows the answer").isEmpty();

    assertThat(call(session, "quick")).as("the session still serves").contains("quick answer");
  }

  @Test
  void aLongCallWithoutProgressIsPrimedWhenAskedSoThatItsClientCanResume() throws Exception {
    registry.register(
        ExecutableTool.of(
            new ToolSpec(
                "silent",
                "Answers after 2.5 s, with no progress.",
                JSON.createObjectNode().put("type", "object"),
                "test",
                ToolAnnotations.UNSPECIFIED),
            (call, arguments) -> {
              Thread.sleep(2_500);
              return ToolResult.success("silent answer");
            }));
    serve(
        new GatewayStreams.Window(
            1_000, 1 << 20, Duration.ofMinutes(1), 64 << 20, Optional.of(Duration.ofSeconds(1))));
    String session = initialize();

    String primer = postAndDrop(session, "silent");
    String stream = primer.substring(0, primer.indexOf('-'));
    assertThat(primer).as("the primer's id").isEqualTo(stream + "-1");

    HttpResponse<String> rest = resume(session, primer);
    assertThat(rest.statusCode()).isEqualTo(200);
    assertThat(ids(rest.body(), stream)).containsExactly(2L);
    assertThat(rest.body()).contains("silent answer");
  }

  @Test
  void aStreamIsForgottenItsTimeAfterItEnds() throws Exception {
    register("quick", 0, Duration.ZERO, "quick answer");
    Duration keep = Duration.ofMillis(300);
    serve(new GatewayStreams.Window(1_000, 1 << 20, keep, 64 << 20, Optional.empty()));
    String session = initialize();

    String first = postAndDrop(session, "quick");
    String stream = first.substring(0, first.indexOf('-'));
    GatewayStreams streams = gateway.streams().orElseThrow();
    await().atMost(Duration.ofSeconds(20)).until(() -> streams.ended(stream));
    long ended = System.nanoTime();
    assertThat(streams.held()).isEqualTo(1);
    await()
        .atMost(Duration.ofSeconds(5))
        .until(() -> System.nanoTime() - ended > keep.toNanos() + 50_000_000L);

    HttpResponse<String> late = resume(session, first);
    assertThat(late.statusCode()).isEqualTo(400);
    assertThat(JSON.readTree(late.body()).path("error").path("message").asString())
        .contains("names no event stream of this session");
    assertThat(streams.held()).isZero();
  }

  /** Registers a tool that reports progress the given times, the given pause apart, and answers. */
  private void register(String name, int reports, Duration pause, String answer) {
    registry.register(
        ExecutableTool.of(
            new ToolSpec(
                name,
                "Reports progress " + reports + " times and answers.",
                JSON.createObjectNode().put("type", "object"),
                "test",
                ToolAnnotations.UNSPECIFIED),
            (call, arguments) -> {
              if (name.equals("slow")) {
                slowRuns.incrementAndGet();
              }
              for (int i = 1; i <= reports; i++) {
                ToolProgress.report(i, Optional.of((double) reports), Optional.of("step " + i));
                Thread.sleep(pause);
              }
              return ToolResult.success(answer);
            }));
  }

  private void serve(GatewayStreams.Window window) throws Exception {
    gateway =
        McpGateway.http(
            registry,
            ToolSet.of(registry, ToolProfiles.MAIN),
            ToolDispatcher.create(),
            "/mcp",
            List.of("127.0.0.1:*", "localhost:*"),
            List.of("http://127.0.0.1:*"),
            McpGateway.Sessions.defaults(),
            window);
    http = ServedGateway.serve(gateway);
  }

  /** Opens a session, as a client of protocol 2025-11-25; its id. */
  private String initialize() throws Exception {
    HttpResponse<String> opened =
        client.send(
            post(
                    Optional.empty(),
                    """
                    {"jsonrpc":"2.0","id":1,"method":"initialize","params":{
                    "protocolVersion":"2025-11-25","capabilities":{},
                    "clientInfo":{"name":"raw","version":"1"}}}""")
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(opened.statusCode()).as(opened.body()).isEqualTo(200);
    String session = opened.headers().firstValue("Mcp-Session-Id").orElseThrow();
    HttpResponse<String> initialized =
        client.send(
            post(
                    Optional.of(session),
                    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}")
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(initialized.statusCode()).isEqualTo(202);
    return session;
  }

  /** Calls the tool and reads its whole event stream. */
  private String call(String session, String tool) throws Exception {
    HttpResponse<String> answered =
        client.send(
            post(Optional.of(session), toolCall(tool)).build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(answered.statusCode()).isEqualTo(200);
    return answered.body();
  }

  /**
   * Calls the tool over a socket of its own and closes that socket right after the stream's first
   * event; the id of that event.
   */
  private String postAndDrop(String session, String tool) throws IOException {
    byte[] body = toolCall(tool).getBytes(StandardCharsets.UTF_8);
    int port = http.endpoint().getPort();
    try (Socket socket = new Socket("127.0.0.1", port)) {
      socket.setSoTimeout(20_000);
      OutputStream out = socket.getOutputStream();
      out.write(
          ("POST /mcp HTTP/1.1\r\n"
                  + "Host: 127.0.0.1:"
                  + port
                  + "\r\nContent-Type: application/json"
                  + "\r\nAccept: application/json, text/event-stream"
                  + "\r\nMcp-Session-Id: "
                  + session
                  + "\r\nMCP-Protocol-Version: 2025-11-25"
                  + "\r\nContent-Length: "
                  + body.length
                  + "\r\n\r\n")
              .getBytes(StandardCharsets.US_ASCII));
      out.write(body);
      out.flush();
      InputStream in = socket.getInputStream();
      ByteArrayOutputStream read = new ByteArrayOutputStream();
      byte[] buffer = new byte[4096];
      while (true) {
        int n = in.read(buffer);
        assertThat(n).as("the stream's first event came").isPositive();
        read.write(buffer, 0, n);
        String text = read.toString(StandardCharsets.UTF_8);
        Matcher id = EVENT_ID.matcher(text);
        if (id.find() && text.indexOf("\n\n", id.end()) >= 0) {
          return id.group(1) + "-" + id.group(2);
        }
      }
    }
  }

  /** A GET that resumes the session's stream after the event id given, read to its end. */
  private HttpResponse<String> resume(String session, String lastEventId) throws Exception {
    return client.send(
        HttpRequest.newBuilder(http.endpoint())
            .timeout(Duration.ofSeconds(20))
            .header("Accept", "text/event-stream")
            .header("Mcp-Session-Id", session)
            .header("MCP-Protocol-Version", "2025-11-25")
            .header("Last-Event-ID", lastEventId)
            .GET()
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private HttpRequest.Builder post(Optional<String> session, String body) {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(http.endpoint())
            .timeout(Duration.ofSeconds(20))
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .POST(HttpRequest.BodyPublishers.ofString(body));
    session.ifPresent(
        id -> request.header("Mcp-Session-Id", id).header("MCP-Protocol-Version", "2025-11-25"));
    return request;
  }

  private static String toolCall(String tool) {
    return "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\""
        + tool
        + "\",\"arguments\":{},\"_meta\":{\"progressToken\":\"p\"}}}";
  }

  /** The numbers of the stream's event ids in an event stream's text, in order. */
  private static List<Long> ids(String events, String stream) {
    List<Long> numbers = new ArrayList<>();
    Matcher id = EVENT_ID.matcher(events);
    while (id.find()) {
      assertThat(id.group(1)).isEqualTo(stream);
      numbers.add(Long.parseLong(id.group(2)));
    }
    return numbers;
  }
}
