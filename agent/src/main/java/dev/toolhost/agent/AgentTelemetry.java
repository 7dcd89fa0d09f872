package dev.toolhost.agent;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
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
  private static final AttributeKey<List<String>> FINISH_REASONS =
      AttributeKey.stringArrayKey("gen_ai.response.finish_reasons");
  private static final AttributeKey<String> SERVER_ADDRESS =
      AttributeKey.stringKey("server.address");
  private static final AttributeKey<Long> SERVER_PORT = AttributeKey.longKey("server.port");
  private static final AttributeKey<String> ERROR_TYPE = AttributeKey.stringKey("error.type");

  private final Tracer tracer;

  AgentTelemetry(OpenTelemetry openTelemetry) {
    this.tracer = openTelemetry.getTracer(SCOPE);
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
    if (result.stop() != RunResult.Stop.COMPLETED) {
      String why = result.stop().name().toLowerCase(Locale.ROOT);
      span.setAttribute(ERROR_TYPE, why);
      span.setStatus(StatusCode.ERROR, "the run stopped: " + why);
    }
    span.end();
  }

  /** Starts the span of one model request, a child of the current context (the run's span). */
  Span startChat(ModelEndpoint endpoint) {
    URI url = endpoint.baseUrl();
    SpanBuilder span =
        tracer
            .spanBuilder("chat " + endpoint.model())
            .setSpanKind(SpanKind.CLIENT)
            .setAttribute(OPERATION, "chat")
            .setAttribute(PROVIDER_NAME, PROVIDER)
            .setAttribute(REQUEST_MODEL, endpoint.model());
    if (url.getHost() != null) {
      span.setAttribute(SERVER_ADDRESS, url.getHost());
      int port =
          url.getPort() != -1
              ? url.getPort()
              : "https".equalsIgnoreCase(url.getScheme()) ? 443 : 80;
      span.setAttribute(SERVER_PORT, (long) port);
    }
    return span.startSpan();
  }

  /** Ends a model request's span with the model's reply. */
  void endChat(Span span, ModelReply reply) {
    span.setAttribute(FINISH_REASONS, List.of(reply.finishReason()));
    span.end();
  }

  /** Ends a model request's span, and a run's, with what went wrong. */
  void fail(Span span, Throwable failure) {
    String type =
        switch (failure) {
          case ModelException model when model.status() != 0 -> Integer.toString(model.status());
          case InterruptedException interrupted -> "cancelled";
          default -> failure.getClass().getName();
        };
    span.setAttribute(ERROR_TYPE, type);
    // Not the message: a malformed reply is quoted in it, and a reply may echo a secret.
    span.setStatus(StatusCode.ERROR, "failed: " + type);
    span.end();
  }
}
