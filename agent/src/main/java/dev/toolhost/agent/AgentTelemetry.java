package dev.toolhost.agent;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.common.AttributesBuilder;
import io.opentelemetry.api.metrics.DoubleHistogram;
import io.opentelemetry.api.metrics.LongHistogram;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import java.net.URI;
import java.util.List;
import java.util.Locale;

/**
 * Agent telemetry is the tracing of the agent loop, following the OpenTelemetry GenAI conventions:
 * an {@code invoke_agent {name}} span for each run and a {@code chat {model}} span for each model
 * request inside it. The tool calls of a run are children of its run span, beside the model
 * requests; their {@code execute_tool} spans come from the dispatcher.
 *
 * <p>Each model request is timed on the {@code gen_ai.client.operation.duration} histogram, a
 * failed one tagged with its {@code error.type}; its span names the completion ({@code
 * gen_ai.response.id}) and the model that answered ({@code gen_ai.response.model}). When the
 * model's server reports token usage, a chat span carries its request's counts ({@code
 * gen_ai.usage.input_tokens}, {@code gen_ai.usage.output_tokens}), the run span the sum over the
 * run's requests that reported one, and each count is recorded on the {@code
 * gen_ai.client.token.usage} histogram, tagged with its {@code gen_ai.token.type}. A request whose
 * server reports none leaves its counts out.
 *
 * <p>Messages, prompts and tool arguments are never recorded: they may hold secrets. A run that
 * does not complete records why ({@code timeout}, {@code max_steps}, {@code cancelled}) as {@code
 * error.type}; a model request that fails records the HTTP status, or the exception's class.
 * Thread-safe.
 */
final class AgentTelemetry {

  /** The instrumentation scope name. */
  static final String SCOPE = "dev.toolhost.agent";

  /** The provider of every model the agent loop talks to: the OpenAI chat completions API. */
  static final String PROVIDER = "openai";

  /** The histogram of the tokens each model request took, one record per token type. */
  static final String TOKEN_USAGE_METRIC = "gen_ai.client.token.usage";

  /**
   * The token usage histogram's bucket boundaries, those the GenAI conventions advise: powers of 4
   * from 1 to 4^13.
   */
  static final List<Long> TOKEN_USAGE_BUCKETS =
      List.of(
          1L, 4L, 16L, 64L, 256L, 1024L, 4096L, 16384L, 65536L, 262144L, 1048576L, 4194304L,
          16777216L, 67108864L);

  /** The histogram of how long each model request took, in seconds, failed ones included. */
  static final String OPERATION_DURATION_METRIC = "gen_ai.client.operation.duration";

  /**
   * The operation duration histogram's bucket boundaries, those the GenAI conventions advise: 10 ms
   * doubling up to 82 s.
   */
  static final List<Double> OPERATION_DURATION_BUCKETS =
      List.of(
          0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92);

  private static final AttributeKey<String> OPERATION =
      AttributeKey.stringKey("gen_ai.operation.name");
  private static final AttributeKey<String> PROVIDER_NAME =
      AttributeKey.stringKey("gen_ai.provider.name");
  private static final AttributeKey<String> AGENT_NAME =
      AttributeKey.stringKey("gen_ai.agent.name");
  private static final AttributeKey<String> AGENT_DESCRIPTION =
      AttributeKey.stringKey("gen_ai.agent.description");
  private static final AttributeKey<String> CONVERSATION_ID =
      AttributeKey.stringKey("gen_ai.conversation.id");
  private static final AttributeKey<String> REQUEST_MODEL =
      AttributeKey.stringKey("gen_ai.request.model");
  private static final AttributeKey<String> RESPONSE_ID =
      AttributeKey.stringKey("gen_ai.response.id");
  private static final AttributeKey<String> RESPONSE_MODEL =
      AttributeKey.stringKey("gen_ai.response.model");
  private static final AttributeKey<List<String>> FINISH_REASONS =
      AttributeKey.stringArrayKey("gen_ai.response.finish_reasons");
  private static final AttributeKey<String> SERVER_ADDRESS =
      AttributeKey.stringKey("server.address");
  private static final AttributeKey<Long> SERVER_PORT = AttributeKey.longKey("server.port");
  private static final AttributeKey<String> ERROR_TYPE = AttributeKey.stringKey("error.type");
  private static final AttributeKey<Long> INPUT_TOKENS =
      AttributeKey.longKey("gen_ai.usage.input_tokens");
  private static final AttributeKey<Long> OUTPUT_TOKENS =
      AttributeKey.longKey("gen_ai.usage.output_tokens");
  private static final AttributeKey<String> TOKEN_TYPE =
      AttributeKey.stringKey("gen_ai.token.type");

  private final Tracer tracer;
  private final LongHistogram tokenUsage;
  private final DoubleHistogram operationDuration;

  AgentTelemetry(OpenTelemetry openTelemetry) {
    this.tracer = openTelemetry.getTracer(SCOPE);
    this.tokenUsage =
        openTelemetry
            .getMeter(SCOPE)
            .histogramBuilder(TOKEN_USAGE_METRIC)
            .ofLongs()
            .setDescription("Number of input and output tokens used")
            .setUnit("{token}")
            .setExplicitBucketBoundariesAdvice(TOKEN_USAGE_BUCKETS)
            .build();
    this.operationDuration =
        openTelemetry
            .getMeter(SCOPE)
            .histogramBuilder(OPERATION_DURATION_METRIC)
            .setDescription("Duration of model requests")
            .setUnit("s")
            .setExplicitBucketBoundariesAdvice(OPERATION_DURATION_BUCKETS)
            .build();
  }

  /** Starts the span of one run, a child of the caller's current context. */
  Span startRun(AgentDefinition definition, String sessionId) {
    SpanBuilder span =
        tracer
            .spanBuilder("invoke_agent " + definition.name())
            .setSpanKind(SpanKind.INTERNAL)
            .setAttribute(OPERATION, "invoke_agent")
            .setAttribute(PROVIDER_NAME, PROVIDER)
            .setAttribute(AGENT_NAME, definition.name())
            .setAttribute(CONVERSATION_ID, sessionId)
            .setAttribute(REQUEST_MODEL, definition.endpoint().model());
    if (!definition.description().isBlank()) {
      span.setAttribute(AGENT_DESCRIPTION, definition.description());
    }
    return span.startSpan();
  }

  /** Ends a run's span with how the run stopped. */
  void endRun(Span span, RunResult result) {
    // A skipped turn ended as the model chose: not an error.
    if (result.stop() != RunResult.Stop.COMPLETED && result.stop() != RunResult.Stop.SKIPPED) {
      String why = result.stop().name().toLowerCase(Locale.ROOT);
      span.setAttribute(ERROR_TYPE, why);
      span.setStatus(StatusCode.ERROR, "the run stopped: " + why);
    }
    span.end();
  }

  /**
   * Starts tracing and timing one model request: its span is a child of the current context (the
   * run's span).
   */
  Chat startChat(ModelEndpoint endpoint) {
    long startNanos = System.nanoTime();
    AttributesBuilder common =
        Attributes.builder()
            .put(OPERATION, "chat")
            .put(PROVIDER_NAME, PROVIDER)
            .put(REQUEST_MODEL, endpoint.model());
    URI url = endpoint.baseUrl();
    if (url.getHost() != null) {
      int port =
          url.getPort() != -1
              ? url.getPort()
              : "https".equalsIgnoreCase(url.getScheme()) ? 443 : 80;
      common.put(SERVER_ADDRESS, url.getHost()).put(SERVER_PORT, (long) port);
    }
    Attributes attributes = common.build();
    Span span =
        tracer
            .spanBuilder("chat " + endpoint.model())
            .setSpanKind(SpanKind.CLIENT)
            .setAllAttributes(attributes)
            .startSpan();
    return new Chat(span, attributes, startNanos);
  }

  /**
   * A chat is one model request being traced and timed: its span, and the attributes its
   * measurements share with it.
   */
  final class Chat {
    private final Span span;
    private final Attributes attributes;
    private final long startNanos;

    private Chat(Span span, Attributes attributes, long startNanos) {
      this.span = span;
      this.attributes = attributes;
      this.startNanos = startNanos;
    }

    /**
     * Ends the request with the model's reply: records which completion of which model answered,
     * why it stopped, how long it took, and the tokens it took when its server said.
     */
    void end(ModelReply reply) {
      AttributesBuilder measured = attributes.toBuilder();
      reply.responseModel().ifPresent(model -> measured.put(RESPONSE_MODEL, model));
      Attributes tags = measured.build();
      reply.responseId().ifPresent(id -> span.setAttribute(RESPONSE_ID, id));
      reply.responseModel().ifPresent(model -> span.setAttribute(RESPONSE_MODEL, model));
      span.setAttribute(FINISH_REASONS, List.of(reply.finishReason()));
      reply
          .usage()
          .ifPresent(
              usage -> {
                setUsage(span, usage);
                tokenUsage.record(
                    usage.inputTokens(), tags.toBuilder().put(TOKEN_TYPE, "input").build());
                tokenUsage.record(
                    usage.outputTokens(), tags.toBuilder().put(TOKEN_TYPE, "output").build());
              });
      operationDuration.record(seconds(), tags);
      span.end();
    }

    /** Ends the request with what went wrong; it is timed too, tagged with the error type. */
    void fail(Throwable failure) {
      operationDuration.record(
          seconds(), attributes.toBuilder().put(ERROR_TYPE, errorType(failure)).build());
      AgentTelemetry.fail(span, failure);
    }

    private double seconds() {
      return (System.nanoTime() - startNanos) / 1e9;
    }
  }

  /**
   * Sets token counts on a span: a model request's, or a run's sum so far, set after each request
   * that reported one, so that a run that fails later keeps what it took.
   */
  static void setUsage(Span span, TokenUsage usage) {
    span.setAttribute(INPUT_TOKENS, usage.inputTokens());
    span.setAttribute(OUTPUT_TOKENS, usage.outputTokens());
  }

  /** Ends a run's span, or a model request's, with what went wrong. */
  static void fail(Span span, Throwable failure) {
    String type = errorType(failure);
    span.setAttribute(ERROR_TYPE, type);
    // Not the message: a malformed reply is quoted in it, and a reply may echo a secret.
    span.setStatus(StatusCode.ERROR, "failed: " + type);
    span.end();
  }

  private static String errorType(Throwable failure) {
    return switch (failure) {
      case ModelException model when model.status() != 0 -> Integer.toString(model.status());
      case InterruptedException interrupted -> "cancelled";
      default -> failure.getClass().getName();
    };
  }
}
