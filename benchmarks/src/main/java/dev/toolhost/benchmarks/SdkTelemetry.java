package dev.toolhost.benchmarks;

import dev.toolhost.core.ToolTelemetry;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.metrics.MeterProvider;
import io.opentelemetry.api.trace.TracerProvider;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.metrics.InstrumentType;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.data.AggregationTemporality;
import io.opentelemetry.sdk.metrics.data.LongPointData;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.metrics.export.CollectionRegistration;
import io.opentelemetry.sdk.metrics.export.MetricReader;
import io.opentelemetry.sdk.trace.ReadWriteSpan;
import io.opentelemetry.sdk.trace.ReadableSpan;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.SpanProcessor;
import io.opentelemetry.sdk.trace.samplers.Sampler;
import java.util.Collection;
import java.util.concurrent.atomic.LongAdder;

/**
 * A real OpenTelemetry SDK that keeps everything in memory: the default always-on sampler, a span
 * processor that drops every span after counting it, and a metric reader that collects only when
 * asked.
 *
 * <p>It never exports to the network. It does not use {@code opentelemetry-sdk-testing}'s in-memory
 * reader: that jar also registers, through {@code META-INF/services}, a context storage of its own
 * in place of the default thread-local one, which every call's span would then go through. {@link
 * #close} checks that the SDK saw as many ended spans as counted calls (fewer, but some, when it
 * samples), and at least one call, so that a benchmark cannot pass while measuring a no-op.
 */
final class SdkTelemetry implements AutoCloseable {

  private final boolean traces;
  private final boolean metrics;
  private final boolean sampled;
  private final CountingSpanProcessor spans = new CountingSpanProcessor();
  private final OnDemandMetricReader metricReader = new OnDemandMetricReader();
  private final SdkTracerProvider tracerProvider;
  private final SdkMeterProvider meterProvider =
      SdkMeterProvider.builder().registerMetricReader(metricReader).build();
  private final OpenTelemetry openTelemetry;

  /** Traces and metrics both. */
  SdkTelemetry() {
    this(true, true);
  }

  /**
   * The SDK for the given signals; a signal that is off gets the API's no-op provider, to take the
   * cost of each signal apart.
   */
  SdkTelemetry(boolean traces, boolean metrics) {
    this(traces, metrics, 1);
  }

  /**
   * Traces and metrics both, sampling one root span in {@code every}, as an operator configures
   * with {@code OTEL_TRACES_SAMPLER=parentbased_traceidratio} and {@code OTEL_TRACES_SAMPLER_ARG}.
   */
  static SdkTelemetry sampling(int every) {
    return new SdkTelemetry(true, true, every);
  }

  private SdkTelemetry(boolean traces, boolean metrics, int sampleOneIn) {
    this.traces = traces;
    this.metrics = metrics;
    this.sampled = sampleOneIn > 1;
    // One in one is the SDK's default sampler, parent-based always-on.
    Sampler root = sampled ? Sampler.traceIdRatioBased(1.0 / sampleOneIn) : Sampler.alwaysOn();
    this.tracerProvider =
        SdkTracerProvider.builder()
            .setSampler(Sampler.parentBased(root))
            .addSpanProcessor(spans)
            .build();
    TracerProvider tracers = traces ? tracerProvider : TracerProvider.noop();
    MeterProvider meters = metrics ? meterProvider : MeterProvider.noop();
    this.openTelemetry =
        new OpenTelemetry() {
          @Override
          public TracerProvider getTracerProvider() {
            return tracers;
          }

          @Override
          public MeterProvider getMeterProvider() {
            return meters;
          }

          @Override
          public ContextPropagators getPropagators() {
            return ContextPropagators.noop();
          }
        };
  }

  /** The SDK, not registered globally. */
  OpenTelemetry openTelemetry() {
    return openTelemetry;
  }

  /**
   * Shuts the SDK down.
   *
   * @throws IllegalStateException when a signal that is on saw no call, or the counted calls differ
   *     from the spans
   */
  @Override
  public void close() {
    long ended = spans.ended.sum();
    long counted = invocationsCounted();
    tracerProvider.close();
    meterProvider.close();
    if ((traces && ended == 0)
        || (metrics && counted == 0)
        || (traces && metrics && !sampled && counted != ended)
        || (sampled && ended >= counted)) {
      throw new IllegalStateException(
          "Telemetry did not see the calls: " + ended + " spans, " + counted + " counted calls");
    }
  }

  private long invocationsCounted() {
    return metricReader.collect().stream()
        .filter(metric -> metric.getName().equals(ToolTelemetry.INVOCATIONS_METRIC))
        .map(MetricData::getLongSumData)
        .flatMap(sum -> sum.getPoints().stream())
        .mapToLong(LongPointData::getValue)
        .sum();
  }

  /** Collects cumulative metrics when {@link #collect} is called, and never otherwise. */
  private static final class OnDemandMetricReader implements MetricReader {
    private volatile CollectionRegistration registration = CollectionRegistration.noop();

    @Override
    public void register(CollectionRegistration registration) {
      this.registration = registration;
    }

    Collection<MetricData> collect() {
      return registration.collectAllMetrics();
    }

    @Override
    public AggregationTemporality getAggregationTemporality(InstrumentType instrumentType) {
      return AggregationTemporality.CUMULATIVE;
    }

    @Override
    public CompletableResultCode forceFlush() {
      return CompletableResultCode.ofSuccess();
    }

    @Override
    public CompletableResultCode shutdown() {
      return CompletableResultCode.ofSuccess();
    }
  }

  /** Drops every span, counting those that ended. */
  static final class CountingSpanProcessor implements SpanProcessor {
    final LongAdder ended = new LongAdder();

    @Override
    public void onStart(Context parentContext, ReadWriteSpan span) {}

    @Override
    public boolean isStartRequired() {
      return false;
    }

    @Override
    public void onEnd(ReadableSpan span) {
      ended.increment();
    }

    @Override
    public boolean isEndRequired() {
      return true;
    }
  }
}
