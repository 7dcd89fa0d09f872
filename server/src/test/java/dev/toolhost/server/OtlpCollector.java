package dev.toolhost.server;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceResponse;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.metrics.v1.Metric;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.Span;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * An OTLP collector stands in for an OpenTelemetry Collector in tests: it listens on a free
 * loopback port, answers OTLP/HTTP protobuf exports of traces ({@code /v1/traces}) and metrics
 * ({@code /v1/metrics}) as a collector does, and keeps what it received, decoded with the OTLP
 * protobuf messages.
 */
final class OtlpCollector implements AutoCloseable {

  /** A span as received, with the resource attributes it came with. */
  record ReceivedSpan(Span span, List<KeyValue> resource) {
    String name() {
      return span.getName();
    }

    Optional<String> attribute(String key) {
      return stringValue(span.getAttributesList(), key);
    }

    Optional<String> resourceAttribute(String key) {
      return stringValue(resource, key);
    }
  }

  private final HttpServer server;
  private final List<ReceivedSpan> spans = new CopyOnWriteArrayList<>();
  private final List<Metric> metrics = new CopyOnWriteArrayList<>();
  private final List<String> contentTypes = new CopyOnWriteArrayList<>();

  /** A collector on a free port. */
  OtlpCollector() throws IOException {
    this(0);
  }

  /** A collector on the given port, {@code 0} for a free one. */
  OtlpCollector(int port) throws IOException {
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 0);
    server.createContext("/v1/traces", this::traces);
    server.createContext("/v1/metrics", this::metrics);
    server.start();
  }

  /** The base URL, as {@code OTEL_EXPORTER_OTLP_ENDPOINT} takes it. */
  URI endpoint() {
    return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
  }

  List<ReceivedSpan> spans() {
    return List.copyOf(spans);
  }

  List<Metric> metrics() {
    return List.copyOf(metrics);
  }

  /** The content type of every export received. */
  List<String> contentTypes() {
    return List.copyOf(contentTypes);
  }

  private void traces(HttpExchange exchange) throws IOException {
    try (exchange;
        InputStream body = exchange.getRequestBody()) {
      contentTypes.add(exchange.getRequestHeaders().getFirst("Content-Type"));
      ExportTraceServiceRequest request = ExportTraceServiceRequest.parseFrom(body);
      for (ResourceSpans resourceSpans : request.getResourceSpansList()) {
        List<KeyValue> resource = resourceSpans.getResource().getAttributesList();
        resourceSpans.getScopeSpansList().stream()
            .flatMap(scope -> scope.getSpansList().stream())
            .forEach(span -> spans.add(new ReceivedSpan(span, resource)));
      }
      answer(exchange, ExportTraceServiceResponse.getDefaultInstance().toByteArray());
    }
  }

  private void metrics(HttpExchange exchange) throws IOException {
    try (exchange;
        InputStream body = exchange.getRequestBody()) {
      contentTypes.add(exchange.getRequestHeaders().getFirst("Content-Type"));
      ExportMetricsServiceRequest request = ExportMetricsServiceRequest.parseFrom(body);
      request.getResourceMetricsList().stream()
          .flatMap(resource -> resource.getScopeMetricsList().stream())
          .flatMap(scope -> scope.getMetricsList().stream())
          .forEach(metrics::add);
      answer(exchange, ExportMetricsServiceResponse.getDefaultInstance().toByteArray());
    }
  }

  private static void answer(HttpExchange exchange, byte[] response) throws IOException {
    exchange.getResponseHeaders().set("Content-Type", "application/x-protobuf");
    exchange.sendResponseHeaders(200, response.length == 0 ? -1 : response.length);
    if (response.length > 0) {
      exchange.getResponseBody().write(response);
    }
  }

  private static Optional<String> stringValue(List<KeyValue> attributes, String key) {
    return attributes.stream()
        .filter(attribute -> attribute.getKey().equals(key))
        .map(KeyValue::getValue)
        .map(AnyValue::getStringValue)
        .findFirst();
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
