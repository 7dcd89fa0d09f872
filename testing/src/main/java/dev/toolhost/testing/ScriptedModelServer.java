package dev.toolhost.testing;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * A scripted model server is a local HTTP server that answers {@code POST /v1/chat/completions} in
 * the real OpenAI wire format, from a script: queue a reply, run the call, take the recorded
 * request, assert (OkHttp's MockWebServer, for a model).
 *
 * <p>Each request takes the next queued {@link ScriptedReply}; when the queue is empty it asks the
 * fallback (set by {@link #respondWith}), and without one answers 500 saying the script ran out. A
 * request is recorded once its reply is chosen, so a test can take a request and then queue the
 * reply for the next one without racing the server. A {@link ScriptedReply.Stream} is sent as SSE
 * {@code data:} chunks when the request streams, flushed one by one, and as one {@code
 * chat.completion} object when it does not. Binds 127.0.0.1 on a free port unless told otherwise;
 * handles requests on virtual threads; {@link #close()} stops it and leaves no thread behind.
 * Thread-safe.
 */
public final class ScriptedModelServer implements AutoCloseable {

  private static final JsonNodeFactory JSON = JsonNodeFactory.instance;

  static {
    // Each SSE chunk is flushed on its own; without TCP_NODELAY, Nagle's algorithm and delayed
    // ACKs hold small chunks back about 40 ms. The JDK server reads this once, at first use.
    if (System.getProperty("sun.net.httpserver.nodelay") == null) {
      System.setProperty("sun.net.httpserver.nodelay", "true");
    }
  }

  private final HttpServer server;
  private final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
  private final BlockingQueue<ScriptedReply> replies = new LinkedBlockingQueue<>();
  private final BlockingQueue<RecordedRequest> requests = new LinkedBlockingQueue<>();
  private final AtomicInteger served = new AtomicInteger();
  private volatile Optional<Function<RecordedRequest, ScriptedReply>> fallback = Optional.empty();
  private volatile Optional<String> answeringModel = Optional.empty();
  private volatile int contextWindow = Integer.MAX_VALUE;

  private ScriptedModelServer(InetSocketAddress address) {
    try {
      server = HttpServer.create(address, 64);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot bind the scripted model server to " + address, e);
    }
    server.setExecutor(threads);
    server.createContext("/", this::handle);
    server.start();
  }

  /** Starts a server on 127.0.0.1 on a free port. */
  public static ScriptedModelServer start() {
    return start(0);
  }

  /** Starts a server on 127.0.0.1 on the given port (0 picks a free one). */
  public static ScriptedModelServer start(int port) {
    return new ScriptedModelServer(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
  }

  /** The base URL a client is configured with, such as {@code http://127.0.0.1:4123/v1}. */
  public URI baseUrl() {
    return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/v1");
  }

  /**
   * The {@code agents:} section of a host config with one agent of that name, which asks the model
   * server at the base URL for that model with no key (its {@code api_key_env} names no variable
   * set), followed by the agent's other keys, one a line (such as {@code "profile: readers"}).
   */
  public static String agentSection(URI baseUrl, String agent, String model, String... keys) {
    StringBuilder section =
        new StringBuilder("agents:\n  ")
            .append(agent)
            .append(":\n    base_url: ")
            .append(baseUrl)
            .append("\n    model: ")
            .append(model)
            .append("\n    api_key_env: NO_SUCH_KEY\n");
    for (String key : keys) {
      section.append("    ").append(key).append('\n');
    }
    return section.toString();
  }

  /** Queues the reply to the next request that finds the queue non-empty. */
  public ScriptedModelServer enqueue(ScriptedReply reply) {
    replies.add(Objects.requireNonNull(reply, "reply"));
    return this;
  }

  /**
   * Names this model as the one that answers, as a provider names the dated version of the model a
   * request asked for; by default the server answers with the model asked for.
   */
  public ScriptedModelServer answerAs(String model) {
    answeringModel = Optional.of(model);
    return this;
  }

  /**
   * Gives the model a context window: every request whose messages hold more than this many tokens,
   * counted at four characters a token, is answered as OpenAI answers one too long for its model
   * (400, {@code context_length_exceeded}, "This model's maximum context length is N tokens..."),
   * before the queue or the fallback is asked.
   */
  public ScriptedModelServer contextWindow(int tokens) {
    this.contextWindow = tokens;
    return this;
  }

  /** Answers requests with this function whenever the queue is empty. */
  public ScriptedModelServer respondWith(Function<RecordedRequest, ScriptedReply> script) {
    fallback = Optional.of(script);
    return this;
  }

  /**
   * Takes the oldest recorded request, waiting up to the timeout for one.
   *
   * @throws IllegalStateException when none arrives in time
   */
  public RecordedRequest takeRequest(Duration timeout) {
    try {
      RecordedRequest request = requests.poll(timeout.toNanos(), TimeUnit.NANOSECONDS);
      if (request == null) {
        throw new IllegalStateException("No request reached the scripted server in " + timeout);
      }
      return request;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("Interrupted waiting for a request", e);
    }
  }

  /** Takes the oldest recorded request, waiting up to five seconds. */
  public RecordedRequest takeRequest() {
    return takeRequest(Duration.ofSeconds(5));
  }

  /** How many requests were answered so far. */
  public int requestCount() {
    return served.get();
  }

  /** Stops the server and its threads. */
  @Override
  public void close() {
    server.stop(0);
    threads.shutdownNow();
    try {
      if (!threads.awaitTermination(5, TimeUnit.SECONDS)) {
        throw new IllegalStateException("The scripted model server's threads did not stop");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void handle(HttpExchange exchange) throws IOException {
    try (exchange) {
      String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
      Map<String, List<String>> headers = new LinkedHashMap<>();
      exchange
          .getRequestHeaders()
          .forEach((name, values) -> headers.put(name.toLowerCase(Locale.ROOT), values));
      RecordedRequest request =
          new RecordedRequest(
              exchange.getRequestMethod(), exchange.getRequestURI().getPath(), headers, body);
      int window = contextWindow;
      int tokens = window == Integer.MAX_VALUE ? 0 : messageTokens(request);
      ScriptedReply reply =
          tokens > window ? ScriptedReply.contextLengthExceeded(window, tokens) : replies.poll();
      if (reply == null) {
        reply =
            fallback
                .map(script -> script.apply(request))
                .orElse(ScriptedReply.status(500, "{\"error\":{\"message\":\"script ran out\"}}"));
      }
      // Recorded only once its reply is chosen: a reply a test queues after taking this request
      // must answer the next request, never this one.
      requests.add(request);
      served.incrementAndGet();
      String model = "scripted-model";
      boolean streaming = false;
      try {
        JsonNode json = request.json();
        model = answeringModel.orElse(json.path("model").asString("scripted-model"));
        streaming = json.path("stream").asBoolean(false);
      } catch (RuntimeException e) {
        // Not JSON: answer anyway; the test asserts on the recorded body.
      }
      switch (reply) {
        case ScriptedReply.Status status -> sendStatus(exchange, status);
        case ScriptedReply.Stream stream -> {
          if (streaming) {
            sendStream(exchange, stream, model);
          } else {
            sendCompletion(exchange, stream, model);
          }
        }
      }
    } catch (IOException e) {
      // The client went away (a cancelled turn): nothing to answer.
    }
  }

  // The request's message text at four characters a token, as the context window counts it.
  private static int messageTokens(RecordedRequest request) {
    long characters = 0;
    try {
      for (JsonNode message : request.json().path("messages")) {
        characters += message.path("content").asString("").length();
        for (JsonNode call : message.path("tool_calls")) {
          characters += call.path("function").path("arguments").asString("").length();
        }
      }
    } catch (RuntimeException e) {
      return 0;
    }
    return (int) Math.min(Integer.MAX_VALUE, (characters + 3) / 4);
  }

  private static void sendStatus(HttpExchange exchange, ScriptedReply.Status status)
      throws IOException {
    status.headers().forEach((name, value) -> exchange.getResponseHeaders().add(name, value));
    exchange.getResponseHeaders().add("Content-Type", "application/json");
    byte[] bytes = status.body().getBytes(StandardCharsets.UTF_8);
    exchange.sendResponseHeaders(status.code(), bytes.length == 0 ? -1 : bytes.length);
    if (bytes.length > 0) {
      exchange.getResponseBody().write(bytes);
    }
  }

  private static void sendStream(HttpExchange exchange, ScriptedReply.Stream stream, String model)
      throws IOException {
    exchange.getResponseHeaders().add("Content-Type", "text/event-stream");
    exchange.getResponseHeaders().add("Cache-Control", "no-cache");
    exchange.sendResponseHeaders(200, 0);
    OutputStream out = exchange.getResponseBody();
    Chunks chunks = new Chunks(model);
    write(out, "data: " + chunks.delta(roleDelta(), null));
    for (ScriptedReply.Event event : stream.events()) {
      switch (event) {
        case ScriptedReply.Text text ->
            write(
                out, "data: " + chunks.delta(JSON.objectNode().put("content", text.text()), null));
        case ScriptedReply.Reasoning reasoning ->
            write(
                out,
                "data: "
                    + chunks.delta(
                        JSON.objectNode().put("reasoning_content", reasoning.text()), null));
        case ScriptedReply.ToolCallStart start -> {
          ObjectNode call = JSON.objectNode().put("index", start.index());
          call.put("id", start.id()).put("type", "function");
          call.putObject("function").put("name", start.name()).put("arguments", "");
          write(out, "data: " + chunks.delta(toolCallsDelta(call), null));
        }
        case ScriptedReply.ToolCallArguments arguments -> {
          ObjectNode call = JSON.objectNode().put("index", arguments.index());
          call.putObject("function").put("arguments", arguments.fragment());
          write(out, "data: " + chunks.delta(toolCallsDelta(call), null));
        }
        case ScriptedReply.Finish finish ->
            write(out, "data: " + chunks.delta(JSON.objectNode(), finish.reason()));
        case ScriptedReply.Usage usage -> write(out, "data: " + chunks.usage(usage));
        case ScriptedReply.Raw raw -> write(out, raw.line());
        case ScriptedReply.Pause pause -> {
          try {
            Thread.sleep(pause.duration());
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
          }
        }
        case ScriptedReply.Done done -> write(out, "data: [DONE]");
      }
    }
  }

  private static void sendCompletion(
      HttpExchange exchange, ScriptedReply.Stream stream, String model) throws IOException {
    StringBuilder content = new StringBuilder();
    Map<Integer, ObjectNode> calls = new LinkedHashMap<>();
    String finish = "stop";
    ScriptedReply.Usage usage = new ScriptedReply.Usage(0, 0);
    for (ScriptedReply.Event event : stream.events()) {
      switch (event) {
        case ScriptedReply.Text text -> content.append(text.text());
        case ScriptedReply.ToolCallStart start -> {
          ObjectNode call = JSON.objectNode().put("id", start.id()).put("type", "function");
          call.putObject("function").put("name", start.name()).put("arguments", "");
          calls.put(start.index(), call);
        }
        case ScriptedReply.ToolCallArguments arguments -> {
          ObjectNode function = (ObjectNode) calls.get(arguments.index()).get("function");
          function.put("arguments", function.get("arguments").asString() + arguments.fragment());
        }
        case ScriptedReply.Finish f -> finish = f.reason();
        case ScriptedReply.Usage u -> usage = u;
        default -> {}
      }
    }
    ObjectNode completion = JSON.objectNode();
    completion.put("id", "chatcmpl-scripted").put("object", "chat.completion");
    completion.put("created", 1_700_000_000L).put("model", model);
    ObjectNode choice = completion.putArray("choices").addObject().put("index", 0);
    ObjectNode message = choice.putObject("message").put("role", "assistant");
    if (content.isEmpty()) {
      message.putNull("content");
    } else {
      message.put("content", content.toString());
    }
    message.putNull("refusal");
    if (!calls.isEmpty()) {
      ArrayNode toolCalls = message.putArray("tool_calls");
      calls.values().forEach(toolCalls::add);
    }
    choice.putNull("logprobs").put("finish_reason", finish);
    completion.set("usage", usageNode(usage));
    sendStatus(exchange, new ScriptedReply.Status(200, completion.toString(), Map.of()));
  }

  private static ObjectNode roleDelta() {
    ObjectNode delta = JSON.objectNode().put("role", "assistant").put("content", "");
    delta.putNull("refusal");
    return delta;
  }

  private static ObjectNode toolCallsDelta(ObjectNode call) {
    ObjectNode delta = JSON.objectNode();
    delta.putArray("tool_calls").add(call);
    return delta;
  }

  private static ObjectNode usageNode(ScriptedReply.Usage usage) {
    return JSON.objectNode()
        .put("prompt_tokens", usage.promptTokens())
        .put("completion_tokens", usage.completionTokens())
        .put("total_tokens", usage.promptTokens() + usage.completionTokens());
  }

  private static void write(OutputStream out, String line) throws IOException {
    out.write((line + "\n\n").getBytes(StandardCharsets.UTF_8));
    out.flush();
  }

  /** Renders chunks with the envelope OpenAI puts around every delta. */
  private record Chunks(String model) {
    String delta(ObjectNode delta, String finishReason) {
      ObjectNode chunk = envelope();
      ObjectNode choice = chunk.putArray("choices").addObject().put("index", 0);
      choice.set("delta", delta);
      choice.putNull("logprobs");
      if (finishReason == null) {
        choice.putNull("finish_reason");
      } else {
        choice.put("finish_reason", finishReason);
      }
      return JsonMapper.shared().writeValueAsString(chunk);
    }

    String usage(ScriptedReply.Usage usage) {
      ObjectNode chunk = envelope();
      chunk.putArray("choices");
      chunk.set("usage", usageNode(usage));
      return JsonMapper.shared().writeValueAsString(chunk);
    }

    private ObjectNode envelope() {
      ObjectNode chunk = JSON.objectNode();
      chunk.put("id", "chatcmpl-scripted").put("object", "chat.completion.chunk");
      chunk.put("created", 1_700_000_000L).put("model", model);
      chunk.put("system_fingerprint", "fp_scripted");
      return chunk;
    }
  }
}
