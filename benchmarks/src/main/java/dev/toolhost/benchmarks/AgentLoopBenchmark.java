package dev.toolhost.benchmarks;

import dev.toolhost.agent.RunListener;
import dev.toolhost.agent.RunResult;
import dev.toolhost.testing.ScriptedReply;
import java.io.InputStream;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The agent loop's own cost per turn: one turn of two model steps (the model calls {@code
 * list_tool_guides}, then answers) against the scripted model server answering at once, beside a
 * baseline of the same two streamed HTTP exchanges made with the bare JDK client. The model's time
 * is zero here and the tool takes microseconds, so {@code turn} is the loop's cost (plus the local
 * server's), and {@code turn - rawExchanges} what the loop adds over the HTTP it cannot avoid.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class AgentLoopBenchmark {

  private BenchAgent bench;
  private HttpClient http;
  private HttpRequest callTool;
  private HttpRequest answer;

  @Setup(Level.Trial)
  public void setUp() {
    bench =
        BenchAgent.start(
            request ->
                request.lastRole().equals("tool")
                    ? ScriptedReply.answer("There is one guide, tool-calls.")
                    : ScriptedReply.toolCalls(
                        ScriptedReply.call("call_1", "list_tool_guides", "{}")));
    http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    String url = bench.server().baseUrl() + "/chat/completions";
    callTool =
        HttpRequest.newBuilder(java.net.URI.create(url))
            .POST(
                HttpRequest.BodyPublishers.ofString(
                    "{\"model\":\"bench\",\"stream\":true,\"messages\":[{\"role\":\"user\","
                        + "\"content\":\"go\"}]}"))
            .build();
    answer =
        HttpRequest.newBuilder(java.net.URI.create(url))
            .POST(
                HttpRequest.BodyPublishers.ofString(
                    "{\"model\":\"bench\",\"stream\":true,\"messages\":[{\"role\":\"tool\","
                        + "\"tool_call_id\":\"call_1\",\"content\":\"x\"}]}"))
            .build();
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    http.close();
    bench.close();
  }

  /** One whole turn: two model steps and one tool call through the dispatch path. */
  @Benchmark
  public RunResult turn() {
    return bench.agent().run(bench.conversation(), "Which guides are there?", RunListener.NONE);
  }

  /** The baseline: the same two streamed exchanges, bodies read and thrown away. */
  @Benchmark
  public long rawExchanges() throws Exception {
    long bytes = 0;
    for (HttpRequest request : new HttpRequest[] {callTool, answer}) {
      try (InputStream body =
          http.send(request, HttpResponse.BodyHandlers.ofInputStream()).body()) {
        bytes += body.readAllBytes().length;
      }
    }
    return bytes;
  }
}
