package dev.toolhost.agent;

import dev.toolhost.core.Redactor;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.InterruptedIOException;
import java.net.ConnectException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * A model client talks to one OpenAI-compatible Chat Completions endpoint: it sends a request with
 * tools, tool choice and parallel tool calls, and reads the answer, streamed or not.
 *
 * <p>Streamed tool calls are accumulated by {@code index} and each is handed to the listener as
 * soon as it has finished streaming; text deltas are handed on as they come. The answer ends at
 * {@code [DONE]}, or at the end of the stream once a {@code finish_reason} was seen. Fields it does
 * not know (reasoning, provider extras) are ignored.
 *
 * <p>The token usage the server reports (asked for with {@code stream_options.include_usage}) comes
 * with the reply: from the chunk with {@code "choices": []} that OpenAI sends last, or from {@code
 * usage} on any other chunk, the last one winning. A server that reports none leaves it empty; a
 * usage that is not two counts (a count that is not a whole number, or is negative) is ignored and
 * logged at DEBUG, never failing the reply. The completion's {@code id} and the {@code model} that
 * answered, which every chunk repeats, come with it too.
 *
 * <p>Failures are {@link ModelException}s with a clear message: a 401 names the key's environment
 * variable, a 404 names the model, a 429 is retried after {@code Retry-After} (or a backoff), a 5xx
 * is retried a bounded number of times, a malformed chunk is quoted, a stream that ends before it
 * finished says so. A refusal of the request as longer than the model's context window is never
 * retried and is marked {@link ModelException#contextOverflow()}: OpenAI's (and Azure's, Groq's)
 * {@code context_length_exceeded} code, and the words of the other servers that speak this API
 * (vLLM, DeepSeek and OpenRouter's "maximum context length", llama.cpp's {@code
 * exceed_context_size_error}, Ollama's and LM Studio's context length messages, Anthropic's "prompt
 * is too long", Mistral's "too large for model", Gemini's "exceeds the maximum number of tokens"),
 * whatever the status, and in an error chunk of a stream. Blocking; interrupting the calling thread
 * cancels the request and the stream. Thread-safe; {@link #close()} releases the HTTP client's
 * threads.
 */
// Built on the JDK HTTP client and Jackson 3 rather than the official openai-java SDK: that SDK
// weighs about 80 MB with its dependencies, brings Kotlin and Jackson 2, and breaks beside the
// JSON Schema generator core uses. Chat Completions over SSE is a few hundred lines.
public final class ModelClient implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(ModelClient.class);
  private static final int QUOTE_LIMIT = 300;

  private final ModelEndpoint endpoint;
  private final Optional<String> apiKey;
  private final int maxRetries;
  private final Duration backoff;
  private final Duration maxRetryAfter;
  private final Duration requestTimeout;
  private final Redactor redactor;
  private final HttpClient http;
  private final ObjectMapper mapper = JsonMapper.shared();

  private ModelClient(Builder builder) {
    this.endpoint = builder.endpoint;
    this.apiKey = endpoint.apiKey(builder.environment);
    this.maxRetries = builder.maxRetries;
    this.backoff = builder.backoff;
    this.maxRetryAfter = builder.maxRetryAfter;
    this.requestTimeout = builder.requestTimeout;
    this.redactor = builder.redactor;
    this.http =
        HttpClient.newBuilder()
            .connectTimeout(builder.connectTimeout)
            .version(HttpClient.Version.HTTP_1_1)
            .build();
  }

  /** A client for the endpoint, reading the key from this process's environment. */
  public static ModelClient create(ModelEndpoint endpoint) {
    return builder(endpoint).build();
  }

  /** A builder of a client for the endpoint. */
  public static Builder builder(ModelEndpoint endpoint) {
    return new Builder(endpoint);
  }

  /** The endpoint this client talks to. */
  public ModelEndpoint endpoint() {
    return endpoint;
  }

  /**
   * Sends the request and reads the whole answer, telling the listener as it streams.
   *
   * @throws ModelException when the model cannot answer (see the class comment)
   * @throws InterruptedException when the calling thread is interrupted; the request is abandoned
   */
  public ModelReply complete(ModelRequest request, ModelListener listener)
      throws InterruptedException {
    HttpRequest http = httpRequest(request);
    boolean cutRetried = false;
    boolean sendRetried = false;
    for (int attempt = 0; ; attempt++) {
      HttpResponse<InputStream> response;
      try {
        response = this.http.send(http, HttpResponse.BodyHandlers.ofInputStream());
      } catch (ConnectException e) {
        throw new ModelException(
            "Cannot connect to the model at " + endpoint.baseUrl() + " (" + e + ")", e);
      } catch (IOException e) {
        interruptedCheck(e);
        // A kept-alive connection the server closed just as it was reused fails before any answer
        // ("header parser received no bytes"). A chat completion has no effect but its cost, so
        // it is sent again, once, on a new connection; a second failure is the caller's.
        if (!sendRetried) {
          sendRetried = true;
          attempt--;
          LOG.warn(
              "The request to the model at {} failed before any answer ({}); retrying once",
              endpoint.baseUrl(),
              e.getMessage());
          continue;
        }
        throw new ModelException(
            "The request to the model at " + endpoint.baseUrl() + " failed: " + e.getMessage(), e);
      }
      int status = response.statusCode();
      if (status == 200) {
        // What the model says reaches the caller redacted, a secret split across deltas included.
        Redactor.Stream redacting = redactor.stream();
        Surfacing surfacing = new Surfacing(listener, redacting);
        try (InputStream body = response.body()) {
          ModelReply reply =
              request.stream() ? readStream(body, surfacing) : readCompletion(body, surfacing);
          String rest = redacting.finish();
          if (!rest.isEmpty()) {
            listener.onText(rest);
          }
          return reply.content().isEmpty()
              ? reply
              : new ModelReply(
                  reply.content().map(redactor::redact),
                  reply.toolCalls(),
                  reply.finishReason(),
                  reply.usage(),
                  reply.responseId(),
                  reply.responseModel());
        } catch (IOException e) {
          interruptedCheck(e);
          // A stream cut before anything reached the listener is sent again, once: the caller has
          // seen nothing, so nothing is shown twice. After the first text or call it is an error.
          if (request.stream() && !surfacing.surfaced && !cutRetried) {
            cutRetried = true;
            attempt--;
            LOG.warn(
                "The model's stream at {} broke before any content ({}); retrying once",
                endpoint.baseUrl(),
                e.getMessage());
            continue;
          }
          if (e instanceof StreamCut cut) {
            throw new ModelException(cut.getMessage(), 0);
          }
          throw new ModelException(
              "Reading the model's answer failed: " + e.getMessage() + " (the stream was cut)", e);
        }
      }
      String body = drain(response);
      if (status >= 400 && contextOverflow(body)) {
        // Sending it again cannot help: the caller must shorten it (Agent trims and compacts).
        throw new ModelException(
            "The model at "
                + endpoint.baseUrl()
                + " refused the request as longer than its context window ("
                + status
                + ")."
                + said(body),
            status,
            true);
      }
      boolean retryable = status == 429 || status >= 500;
      if (!retryable || attempt >= maxRetries) {
        throw failure(status, body, attempt);
      }
      Duration wait = wait(status, response, attempt);
      LOG.warn(
          "The model at {} answered {}; retrying in {} ms ({} of {})",
          endpoint.baseUrl(),
          status,
          wait.toMillis(),
          attempt + 1,
          maxRetries);
      Thread.sleep(wait);
    }
  }

  @Override
  public void close() {
    http.close();
  }

  private HttpRequest httpRequest(ModelRequest request) {
    ObjectNode body = mapper.createObjectNode();
    body.put("model", endpoint.model());
    ArrayNode messages = body.putArray("messages");
    // Nothing the host holds leaves for the model: every message's text is redacted on the way.
    request.messages().forEach(message -> messages.add(redacted(message.toWire())));
    if (!request.tools().isEmpty()) {
      ArrayNode tools = body.putArray("tools");
      request.tools().forEach(tools::add);
      body.put("tool_choice", request.toolChoice().wireName());
      body.put("parallel_tool_calls", true);
    }
    body.put("stream", request.stream());
    if (request.stream()) {
      body.putObject("stream_options").put("include_usage", true);
    }
    HttpRequest.Builder builder =
        HttpRequest.newBuilder(endpoint.chatCompletions())
            .timeout(requestTimeout)
            .header("Content-Type", "application/json")
            .header("Accept", request.stream() ? "text/event-stream" : "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(mapper.writeValueAsString(body)));
    apiKey.ifPresent(key -> builder.header("Authorization", "Bearer " + key));
    return builder.build();
  }

  private ModelReply readStream(InputStream body, ModelListener listener)
      throws IOException, InterruptedException {
    BufferedReader lines = new BufferedReader(new InputStreamReader(body, StandardCharsets.UTF_8));
    StringBuilder content = new StringBuilder();
    ToolCallAccumulator calls = new ToolCallAccumulator(listener::onToolCall);
    String finishReason = null;
    Optional<TokenUsage> usage = Optional.empty();
    Optional<String> responseId = Optional.empty();
    Optional<String> responseModel = Optional.empty();
    String line;
    while ((line = lines.readLine()) != null) {
      interruptedCheck();
      // SSE: only data lines carry chunks; comments (": keep-alive"), event and id lines do not.
      if (!line.startsWith("data:")) {
        continue;
      }
      String data = line.substring(5).strip();
      if (data.equals("[DONE]")) {
        calls.finish();
        return reply(
            content,
            calls,
            finishReason == null ? "stop" : finishReason,
            usage,
            responseId,
            responseModel);
      }
      JsonNode chunk;
      try {
        chunk = mapper.readTree(data);
      } catch (JacksonException e) {
        throw new ModelException(
            "The model sent a malformed chunk (" + e.getOriginalMessage() + "): " + quote(line), 0);
      }
      if (chunk.has("error")) {
        throw new ModelException(
            "The model failed while streaming: " + errorMessage(chunk.get("error"), data),
            0,
            contextOverflow(data));
      }
      Optional<TokenUsage> reported = usage(chunk);
      if (reported.isPresent()) {
        usage = reported;
      }
      // Every chunk repeats the completion's id and model: the first that has them says them.
      responseId = responseId.or(() -> text(chunk, "id"));
      responseModel = responseModel.or(() -> text(chunk, "model"));
      JsonNode choice = chunk.path("choices").path(0);
      if (choice.isMissingNode()) {
        continue; // A usage chunk, or a provider's extra.
      }
      JsonNode delta = choice.path("delta");
      JsonNode text = delta.path("content");
      if (text.isString() && !text.asString().isEmpty()) {
        content.append(text.asString());
        listener.onText(text.asString());
      }
      JsonNode toolCalls = delta.path("tool_calls");
      if (toolCalls.isArray()) {
        calls.add(toolCalls, data);
      }
      JsonNode finish = choice.path("finish_reason");
      if (finish.isString()) {
        finishReason = finish.asString();
        calls.finish();
      }
    }
    interruptedCheck();
    if (finishReason == null) {
      throw new StreamCut(
          "The model's stream ended before the answer finished (no finish_reason and no [DONE])"
              + " after "
              + content.length()
              + " characters of text");
    }
    return reply(content, calls, finishReason, usage, responseId, responseModel);
  }

  private ModelReply readCompletion(InputStream body, ModelListener listener) throws IOException {
    String text = new String(body.readAllBytes(), StandardCharsets.UTF_8);
    JsonNode completion;
    try {
      completion = mapper.readTree(text);
    } catch (JacksonException e) {
      throw new ModelException(
          "The model sent a malformed answer (" + e.getOriginalMessage() + "): " + quote(text), 0);
    }
    JsonNode choice = completion.path("choices").path(0);
    if (choice.isMissingNode()) {
      throw new ModelException("The model's answer has no choices: " + quote(text), 0);
    }
    JsonNode message = choice.path("message");
    StringBuilder content = new StringBuilder();
    if (message.path("content").isString()) {
      content.append(message.get("content").asString());
      listener.onText(content.toString());
    }
    ToolCallAccumulator calls = new ToolCallAccumulator(listener::onToolCall);
    if (message.path("tool_calls").isArray()) {
      // A whole call is one fragment of itself; give each its index in the array.
      ArrayNode indexed = mapper.createArrayNode();
      int index = 0;
      for (JsonNode call : message.get("tool_calls")) {
        ObjectNode copy = ((ObjectNode) call).deepCopy();
        copy.put("index", index++);
        indexed.add(copy);
      }
      calls.add(indexed, text);
    }
    calls.finish();
    return reply(
        content,
        calls,
        choice.path("finish_reason").asString("stop"),
        usage(completion),
        text(completion, "id"),
        text(completion, "model"));
  }

  private static ModelReply reply(
      StringBuilder content,
      ToolCallAccumulator calls,
      String finishReason,
      Optional<TokenUsage> usage,
      Optional<String> responseId,
      Optional<String> responseModel) {
    return new ModelReply(
        content.isEmpty() ? Optional.empty() : Optional.of(content.toString()),
        calls.calls(),
        finishReason,
        usage,
        responseId,
        responseModel);
  }

  /** A field's text, when it is a string that is not blank. */
  private static Optional<String> text(JsonNode holder, String field) {
    JsonNode value = holder.path(field);
    return value.isString() && !value.asString().isBlank()
        ? Optional.of(value.asString())
        : Optional.empty();
  }

  /**
   * Reads the {@code usage} of a chunk or a completion: empty when there is none ({@code "usage":
   * null} is on every ordinary chunk of some servers) or when it is not two token counts. A count
   * is only bookkeeping: one that cannot be read is logged and dropped, and the answer stands.
   */
  private Optional<TokenUsage> usage(JsonNode holder) {
    JsonNode usage = holder.path("usage");
    if (usage.isMissingNode() || usage.isNull()) {
      return Optional.empty();
    }
    JsonNode input = usage.path("prompt_tokens");
    JsonNode output = usage.path("completion_tokens");
    if (isCount(input) && isCount(output)) {
      return Optional.of(new TokenUsage(input.longValue(), output.longValue()));
    }
    LOG.debug(
        "The model at {} reported a usage that is not two token counts; ignoring it: {}",
        endpoint.baseUrl(),
        quote(usage.toString()));
    return Optional.empty();
  }

  // Lower-case marks of a context-length refusal, as each server words it.
  private static final List<String> OVERFLOW_MARKS =
      List.of(
          "context_length_exceeded",
          "maximum context length",
          "exceed_context_size_error",
          "exceeds the available context size",
          "context size has been exceeded",
          "exceeds the context length",
          "exceeded max context length",
          "input length exceeds",
          "context length of only",
          "context window exceeded",
          "exceeds the context window",
          "prompt is too long",
          "too large for model with",
          "exceeds the maximum number of tokens",
          "reduce the length of the messages");

  /** Whether an error body (or an error chunk) says the request was too long for the context. */
  static boolean contextOverflow(String body) {
    String text = body.toLowerCase(Locale.ROOT);
    return OVERFLOW_MARKS.stream().anyMatch(text::contains);
  }

  // The window a refusal names: OpenAI, vLLM, DeepSeek, OpenRouter ("maximum context length is N
  // tokens"), LM Studio ("context length of only N tokens"), llama.cpp ("context size (N tokens)"),
  // Anthropic ("N tokens > M maximum"), Mistral ("M maximum context length"), Gemini ("allowed
  // (M)").
  private static final List<Pattern> WINDOW_PATTERNS =
      List.of(
          Pattern.compile("maximum context length is (\\d+)"),
          Pattern.compile("context length of only (\\d+)"),
          Pattern.compile("available context size \\((\\d+) tokens"),
          Pattern.compile("tokens > (\\d+) maximum"),
          Pattern.compile("(\\d+) maximum context length"),
          Pattern.compile("maximum number of tokens allowed \\((\\d+)\\)"));

  /** The context window a refusal's message names, when it names one. */
  static OptionalInt windowNamedIn(String message) {
    String text = message.toLowerCase(Locale.ROOT);
    for (Pattern pattern : WINDOW_PATTERNS) {
      Matcher matcher = pattern.matcher(text);
      if (matcher.find()) {
        try {
          return OptionalInt.of(Integer.parseInt(matcher.group(1)));
        } catch (NumberFormatException e) {
          return OptionalInt.empty();
        }
      }
    }
    return OptionalInt.empty();
  }

  private static boolean isCount(JsonNode node) {
    return node.isIntegralNumber() && node.canConvertToLong() && node.longValue() >= 0;
  }

  private ModelException failure(int status, String body, int retries) {
    String said = said(body);
    String after = retries > 0 ? " (after " + retries + " retries)" : "";
    return switch (status) {
      case 401, 403 ->
          new ModelException(
              apiKey.isEmpty()
                  ? "The model at "
                      + endpoint.baseUrl()
                      + " refused the request ("
                      + status
                      + "): no API key was sent, because "
                      + endpoint.apiKeyEnv()
                      + " is not set. Set it to your key."
                      + said
                  : "The model at "
                      + endpoint.baseUrl()
                      + " refused the API key in "
                      + endpoint.apiKeyEnv()
                      + " ("
                      + status
                      + "). Check that variable's value."
                      + said,
              status);
      case 404 ->
          new ModelException(
              "The model '"
                  + endpoint.model()
                  + "' was not found at "
                  + endpoint.chatCompletions()
                  + " (404). Check the model name and the base URL."
                  + said,
              status);
      case 429 ->
          new ModelException(
              "The model at " + endpoint.baseUrl() + " is rate limiting (429)" + after + "." + said,
              status);
      default ->
          new ModelException(
              "The model at "
                  + endpoint.baseUrl()
                  + " answered HTTP "
                  + status
                  + after
                  + "."
                  + said,
              status);
    };
  }

  private String said(String body) {
    if (body.isBlank()) {
      return "";
    }
    try {
      JsonNode json = mapper.readTree(body);
      if (json.has("error")) {
        return " It said: " + errorMessage(json.get("error"), body);
      }
    } catch (JacksonException e) {
      // Not JSON: quote it as text.
    }
    return " It said: " + quote(body);
  }

  private static String errorMessage(JsonNode error, String whole) {
    if (error.isString()) {
      return error.asString();
    }
    JsonNode message = error.path("message");
    return message.isString() ? message.asString() : quote(whole);
  }

  private Duration wait(int status, HttpResponse<?> response, int attempt) {
    if (status == 429) {
      Optional<Duration> retryAfter =
          response.headers().firstValue("Retry-After").flatMap(ModelClient::retryAfter);
      if (retryAfter.isPresent()) {
        Duration wait = retryAfter.get();
        return wait.compareTo(maxRetryAfter) > 0 ? maxRetryAfter : wait;
      }
    }
    return backoff.multipliedBy(1L << Math.min(attempt, 6));
  }

  /** Reads a {@code Retry-After} value: seconds (possibly fractional), or an HTTP date. */
  static Optional<Duration> retryAfter(String value) {
    String text = value.strip();
    try {
      double seconds = Double.parseDouble(text);
      return seconds < 0
          ? Optional.empty()
          : Optional.of(Duration.ofMillis((long) Math.ceil(seconds * 1000)));
    } catch (NumberFormatException e) {
      try {
        Instant at = ZonedDateTime.parse(text, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant();
        Duration wait = Duration.between(Instant.now(), at);
        return Optional.of(wait.isNegative() ? Duration.ZERO : wait);
      } catch (DateTimeParseException notADate) {
        return Optional.empty();
      }
    }
  }

  private static String drain(HttpResponse<InputStream> response) {
    try (InputStream body = response.body()) {
      byte[] bytes = body.readNBytes(8192);
      return new String(bytes, StandardCharsets.UTF_8);
    } catch (IOException e) {
      return "";
    }
  }

  /**
   * Throws when the I/O failed because the thread was interrupted. The HTTP client's body stream
   * may wrap the interruption in an {@link IOException} without keeping the thread's flag; a
   * cancelled run must never look like a cut stream, which would be sent again.
   */
  private static void interruptedCheck(IOException e) throws InterruptedException {
    if (e instanceof InterruptedIOException || e.getCause() instanceof InterruptedException) {
      Thread.currentThread().interrupt();
    }
    interruptedCheck();
  }

  private static void interruptedCheck() throws InterruptedException {
    if (Thread.currentThread().isInterrupted()) {
      throw new InterruptedException("The model request was cancelled");
    }
  }

  /** A stream that ended before its answer finished, with nothing wrong on the wire. */
  private static final class StreamCut extends IOException {
    private static final long serialVersionUID = 1L;

    StreamCut(String message) {
      super(message);
    }
  }

  /** The wire message with its text redacted. */
  private ObjectNode redacted(ObjectNode message) {
    if (message.path("content").isString()) {
      message.put("content", redactor.redact(message.get("content").asString()));
    }
    return message;
  }

  /**
   * A listener that redacts the text deltas on their way to the caller's listener, and notes
   * whether anything reached it.
   */
  private static final class Surfacing implements ModelListener {
    private final ModelListener listener;
    private final Redactor.Stream redacting;
    private volatile boolean surfaced;

    Surfacing(ModelListener listener, Redactor.Stream redacting) {
      this.listener = listener;
      this.redacting = redacting;
    }

    @Override
    public void onText(String delta) {
      surfaced = true;
      String safe = redacting.push(delta);
      if (!safe.isEmpty()) {
        listener.onText(safe);
      }
    }

    @Override
    public void onToolCall(ModelToolCall call) {
      surfaced = true;
      listener.onToolCall(call);
    }
  }

  /** Quotes text for a message, cut to a readable length. */
  static String quote(String text) {
    String cut = text.length() > QUOTE_LIMIT ? text.substring(0, QUOTE_LIMIT) + "..." : text;
    return "'" + cut + "'";
  }

  /** A builder of a {@link ModelClient}. */
  public static final class Builder {
    private final ModelEndpoint endpoint;
    private Map<String, String> environment = System.getenv();
    private int maxRetries = 3;
    private Duration backoff = Duration.ofMillis(500);
    private Duration maxRetryAfter = Duration.ofSeconds(60);
    private Duration connectTimeout = Duration.ofSeconds(10);
    private Duration requestTimeout = Duration.ofMinutes(5);
    private Redactor redactor = Redactor.NONE;

    private Builder(ModelEndpoint endpoint) {
      this.endpoint = Objects.requireNonNull(endpoint, "endpoint");
    }

    /**
     * What removes secrets from the text sent to the model and from its answer on the way to the
     * caller (the host's secret scanner); none by default.
     */
    public Builder redactor(Redactor redactor) {
      this.redactor = Objects.requireNonNull(redactor, "redactor");
      return this;
    }

    /** The environment the key is read from; this process's by default. */
    public Builder environment(Map<String, String> environment) {
      this.environment = Map.copyOf(environment);
      return this;
    }

    /** How many times a 429 or a 5xx is retried; 3 by default. */
    public Builder maxRetries(int maxRetries) {
      if (maxRetries < 0) {
        throw new IllegalArgumentException("maxRetries must be 0 or more, not " + maxRetries);
      }
      this.maxRetries = maxRetries;
      return this;
    }

    /** The first wait before a retry with no {@code Retry-After}; doubled each time. */
    public Builder backoff(Duration backoff) {
      this.backoff = Objects.requireNonNull(backoff, "backoff");
      return this;
    }

    /** The longest {@code Retry-After} honoured; longer ones are cut to it. 60 s by default. */
    public Builder maxRetryAfter(Duration maxRetryAfter) {
      this.maxRetryAfter = Objects.requireNonNull(maxRetryAfter, "maxRetryAfter");
      return this;
    }

    /** How long to wait for a connection; 10 s by default. */
    public Builder connectTimeout(Duration connectTimeout) {
      this.connectTimeout = Objects.requireNonNull(connectTimeout, "connectTimeout");
      return this;
    }

    /** How long to wait for the answer's headers; 5 min by default. */
    public Builder requestTimeout(Duration requestTimeout) {
      this.requestTimeout = Objects.requireNonNull(requestTimeout, "requestTimeout");
      return this;
    }

    /** Builds the client. */
    public ModelClient build() {
      return new ModelClient(this);
    }
  }
}
