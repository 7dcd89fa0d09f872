package dev.toolhost.core;

import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;

/**
 * Recorded telemetry is a real OpenTelemetry SDK that keeps its spans and metrics in memory for a
 * test to read: each span as it ends, the metrics when collected. Closing it closes the SDK.
 *
 * @param spans the spans that ended
 * @param metrics the metrics, collected when asked
 * @param sdk the SDK to give what is tested
 */
public record RecordedTelemetry(
    InMemorySpanExporter spans, InMemoryMetricReader metrics, OpenTelemetrySdk sdk)
    implements AutoCloseable {

  /** An SDK recording every span and metric. */
  public static RecordedTelemetry start() {
    InMemorySpanExporter spans = InMemorySpanExporter.create();
    InMemoryMetricReader metrics = InMemoryMetricReader.create();
    return new RecordedTelemetry(
        spans,
        metrics,
        OpenTelemetrySdk.builder()
            .setTracerProvider(
                SdkTracerProvider.builder()
                    .addSpanProcessor(SimpleSpanProcessor.create(spans))
                    .build())
            .setMeterProvider(SdkMeterProvider.builder().registerMetricReader(metrics).build())
            .build());
  }

  @Override
  public void close() {
    sdk.close();
  }
}
