package dev.toolhost.server;

import dev.toolhost.core.spi.Mount;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.common.AttributesBuilder;
import io.opentelemetry.api.metrics.DoubleHistogram;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.context.propagation.TextMapPropagator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * HTTP telemetry is the host's HTTP server instrumentation, following the OpenTelemetry HTTP
 * semantic conventions: a server span per request, named by its method and route, a child of the
 * caller's {@code traceparent} when it sends one and the parent of a tool call made through the
 * HTTP API, and the {@code http.server.request.duration} histogram. Refused requests (a missing
 * token, an unknown route, a malformed body) are measured too, with their status.
 *
 * <p>Only the method, route, path, scheme and status are recorded: never the query (a search's
 * words), the body or a header. The span ends when the response is complete, which for an MCP
 * client's event stream is when the stream closes. Written by hand: OpenTelemetry has no library
 * instrumentation of a Jetty 12 server outside its Java agent, and this is a few dozen lines.
 * Thread-safe.
 */
final class HttpTelemetry extends Handler.Wrapper {

  /** The instrumentation scope name. */
  static final String SCOPE = "dev.toolhost.server";

  /** The histogram of request durations, in seconds. */
  static final String DURATION_METRIC = "http.server.request.duration";

  /** The duration histogram's bucket boundaries, those the HTTP conventions advise. */
  static final List<Double> DURATION_BUCKETS =
      List.of(0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0);

  private static final AttributeKey<String> METHOD = AttributeKey.stringKey("http.request.method");
  private static final AttributeKey<String> ROUTE = AttributeKey.stringKey("http.route");
  private static final AttributeKey<String> PATH = AttributeKey.stringKey("url.path");
  private static final AttributeKey<String> SCHEME = AttributeKey.stringKey("url.scheme");
  private static final AttributeKey<Long> STATUS =
      AttributeKey.longKey("http.response.status_code");
  private static final AttributeKey<String> ERROR_TYPE = AttributeKey.stringKey("error.type");

  private static final Set<String> METHODS =
      Set.of("GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH");

  private static final TextMapGetter<HttpFields> HEADERS =
      new TextMapGetter<>() {
        @Override
        public String get(HttpFields headers, String key) {
          return headers == null ? null : headers.get(key);
        }
      };

  private final Tracer tracer;
  private final DoubleHistogram duration;
  private final TextMapPropagator propagator;
  private final List<Mount> mounts;

  HttpTelemetry(OpenTelemetry openTelemetry, List<Mount> mounts, Handler handler) {
    super(handler);
    this.mounts = List.copyOf(mounts);
    this.tracer = openTelemetry.getTracer(SCOPE);
    this.duration =
        openTelemetry
            .getMeter(SCOPE)
            .histogramBuilder(DURATION_METRIC)
            .setDescription("Duration of HTTP server requests")
            .setUnit("s")
            .setExplicitBucketBoundariesAdvice(DURATION_BUCKETS)
            .build();
    this.propagator = openTelemetry.getPropagators().getTextMapPropagator();
  }

  /** The route template a path matches, such as {@code /v1/tools/{name}/invoke}, if any. */
  Optional<String> route(String path) {
    if (ApiHandler.FIXED_ROUTES.contains(path)) {
      return Optional.of(path);
    }
    if (ApiHandler.INVOKE.matcher(path).matches()) {
      return Optional.of("/v1/tools/{name}/invoke");
    }
    return mounts.stream().flatMap(mount -> mount.routeName(path).stream()).findFirst();
  }

  @Override
  public boolean handle(Request request, Response response, Callback callback) throws Exception {
    long start = System.nanoTime();
    String method = METHODS.contains(request.getMethod()) ? request.getMethod() : "_OTHER";
    String path = request.getHttpURI().getDecodedPath();
    Optional<String> route = route(path);
    AttributesBuilder tags =
        Attributes.builder()
            .put(METHOD, method)
            .put(SCHEME, Objects.requireNonNullElse(request.getHttpURI().getScheme(), "http"));
    route.ifPresent(template -> tags.put(ROUTE, template));
    Attributes common = tags.build();
    Context parent = propagator.extract(Context.root(), request.getHeaders(), HEADERS);
    Span span =
        tracer
            .spanBuilder(route.map(template -> method + " " + template).orElse(method))
            .setParent(parent)
            .setSpanKind(SpanKind.SERVER)
            .setAllAttributes(common)
            .setAttribute(PATH, path)
            .startSpan();
    Exchange exchange = new Exchange(span, common, start, response, callback);
    try (Scope ignored = parent.with(span).makeCurrent()) {
      if (!super.handle(request, response, exchange)) {
        exchange.end(404, Optional.empty());
        return false;
      }
      return true;
    } catch (Exception | Error e) {
      exchange.end(500, Optional.of(e));
      throw e;
    }
  }

  /** One request's span and measurement, ended once, when its response completes or fails. */
  private final class Exchange implements Callback {
    private final Span span;
    private final Attributes common;
    private final long start;
    private final Response response;
    private final Callback callback;
    private boolean ended;

    Exchange(Span span, Attributes common, long start, Response response, Callback callback) {
      this.span = span;
      this.common = common;
      this.start = start;
      this.response = response;
      this.callback = callback;
    }

    @Override
    public void succeeded() {
      end(response.getStatus(), Optional.empty());
      callback.succeeded();
    }

    @Override
    public void failed(Throwable failure) {
      end(response.getStatus(), Optional.of(failure));
      callback.failed(failure);
    }

    @Override
    public InvocationType getInvocationType() {
      return callback.getInvocationType();
    }

    synchronized void end(int status, Optional<Throwable> failure) {
      if (ended) {
        return;
      }
      ended = true;
      AttributesBuilder tags = common.toBuilder().put(STATUS, (long) status);
      // Per the conventions a server's 4xx is the client's error, not the server's.
      Optional<String> error =
          failure
              .map(e -> e.getClass().getName())
              .or(() -> status >= 500 ? Optional.of(Integer.toString(status)) : Optional.empty());
      error.ifPresent(type -> tags.put(ERROR_TYPE, type));
      span.setAttribute(STATUS, (long) status);
      error.ifPresent(
          type -> {
            span.setAttribute(ERROR_TYPE, type);
            span.setStatus(StatusCode.ERROR);
          });
      // Measured before the span ends: a host closed as the last response goes out flushes the
      // spans before the metrics, so the measurement of every exported span is flushed too.
      duration.record((System.nanoTime() - start) / 1e9, tags.build());
      span.end();
    }
  }
}
