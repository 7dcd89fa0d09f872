package dev.toolhost.benchmarks;

import com.sun.net.httpserver.HttpServer;
import dev.toolhost.a2a.A2aClient;
import dev.toolhost.a2a.A2aConfig;
import dev.toolhost.a2a.A2aTools;
import dev.toolhost.a2a.AgentDirectory;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import dev.toolhost.memory.InProcessWorkingMemory;
import dev.toolhost.web.OutboundHttp;
import dev.toolhost.web.OutboundPolicy;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
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
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * An {@code invoke_agent} round trip to a local A2A agent (protocol 0.3) that answers at once: the
 * whole dispatch path, the cached card, the outbound client's address checks, the JSON-RPC {@code
 * message/send} and the reading of the completed task. Beside it the raw baseline: the same {@code
 * message/send} body POSTed to the same agent with the JDK's HTTP client and its answer parsed with
 * Jackson, nothing else.
 *
 * <p>Average time per call, in microseconds.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(value = 1)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class A2aInvokeBenchmark {

  private static final JsonMapper JSON = JsonMapper.shared();
  private static final String SEND =
      "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"message/send\", \"params\": {\"message\":"
          + " {\"kind\": \"message\", \"messageId\": \"m1\", \"role\": \"user\", \"parts\":"
          + " [{\"kind\": \"text\", \"text\": \"ping\"}]}, \"configuration\": {\"blocking\": true}}}";

  private HttpServer agent;
  private OutboundHttp outbound;
  private A2aTools a2a;
  private InProcessWorkingMemory memory;
  private ToolDispatcher dispatcher;
  private ToolSet tools;
  private ToolCall call;
  private HttpClient bare;
  private URI rpc;

  @Setup(Level.Trial)
  public void setUp() throws Exception {
    agent = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    agent.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
    int port = agent.getAddress().getPort();
    String card =
        ("{\"name\": \"pong\", \"description\": \"Answers at once.\", \"url\":"
                + " \"http://127.0.0.1:%d/rpc\", \"protocolVersion\": \"0.3.0\", \"version\": \"1\","
                + " \"capabilities\": {\"streaming\": false}, \"skills\": []}")
            .formatted(port);
    agent.createContext(
        "/",
        exchange -> {
          String body;
          if (exchange.getRequestURI().getPath().endsWith("agent-card.json")) {
            body = card;
          } else {
            JsonNode request = JSON.readTree(exchange.getRequestBody().readAllBytes());
            body =
                "{\"jsonrpc\": \"2.0\", \"id\": "
                    + request.path("id")
                    + ", \"result\": {\"kind\": \"task\", \"id\": \"t1\", \"contextId\": \"c1\","
                    + " \"status\": {\"state\": \"completed\"}, \"artifacts\": [{\"artifactId\":"
                    + " \"a\", \"parts\": [{\"kind\": \"text\", \"text\": \"pong\"}]}]}}";
          }
          byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
          exchange.getResponseHeaders().add("Content-Type", "application/json");
          exchange.sendResponseHeaders(200, bytes.length);
          exchange.getResponseBody().write(bytes);
          exchange.close();
        });
    agent.start();
    URI base = URI.create("http://127.0.0.1:" + port);
    rpc = base.resolve("/rpc");
    outbound = OutboundHttp.start(OutboundPolicy.defaults().allowingHost("127.0.0.1"));
    A2aClient client = new A2aClient(outbound);
    Map<String, A2aConfig.RemoteAgent> agents =
        Map.of("pong", A2aConfig.RemoteAgent.of("pong", base));
    AgentDirectory directory =
        new AgentDirectory(
            agents, client, Duration.ofHours(1), Map.of(), Optional.empty(), Clock.systemUTC());
    memory = new InProcessWorkingMemory();
    a2a = new A2aTools(directory, client, A2aConfig.of(agents), Optional.of(memory));
    ToolRegistry registry = new ToolRegistry();
    registry.registerAll(a2a.tools());
    tools = ToolSet.of(registry, ToolProfiles.MAIN);
    dispatcher = ToolDispatcher.create();
    call =
        ToolCall.of("invoke_agent", "{\"agent_name\": \"pong\", \"message\": \"ping\"}")
            .withSessionId("bench");
    bare = HttpClient.newHttpClient();
    ToolResult result = dispatcher.dispatch(tools, call);
    if (result.isError() || !result.text().equals("pong")) {
      throw new IllegalStateException("invoke_agent did not answer 'pong': " + result.text());
    }
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    bare.close();
    a2a.close();
    outbound.close();
    memory.close();
    agent.stop(0);
  }

  @Benchmark
  public int invokeAgent() {
    return dispatcher.dispatch(tools, call).text().length();
  }

  /** The raw baseline: the same message/send POSTed with the JDK's client, its answer parsed. */
  @Benchmark
  public int bareJsonRpcPost() throws Exception {
    HttpResponse<byte[]> response =
        bare.send(
            HttpRequest.newBuilder(rpc)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(SEND))
                .build(),
            HttpResponse.BodyHandlers.ofByteArray());
    return JSON.readTree(response.body())
        .path("result")
        .path("artifacts")
        .get(0)
        .path("parts")
        .get(0)
        .path("text")
        .asString()
        .length();
  }
}
