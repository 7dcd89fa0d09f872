package dev.toolhost.host;

import dev.toolhost.core.Redactor;
import dev.toolhost.core.spi.ConfigException;
import io.opentelemetry.exporter.prometheus.PrometheusMetricReader;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.autoconfigure.AutoConfiguredOpenTelemetrySdk;
import io.opentelemetry.sdk.autoconfigure.spi.ConfigProperties;
import io.opentelemetry.sdk.autoconfigure.spi.ConfigurationException;
import io.opentelemetry.sdk.trace.SpanProcessor;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The host telemetry is the OpenTelemetry SDK the host traces and measures with, configured by the
 * SDK's own autoconfiguration: the standard {@code OTEL_*} variables (exporters, OTLP endpoint and
 * headers, sampler, service name, resource attributes) mean what they mean everywhere, and {@code
 * telemetry.otlp_endpoint} in the config file sends spans and metrics to one OTLP/HTTP collector.
 *
 * <p>An exporter nobody chose is {@code otlp} when an OTLP endpoint is set for its signal (in the
 * config file, or by {@code OTEL_EXPORTER_OTLP_ENDPOINT} and its per-signal forms) and {@code none}
 * otherwise: without an endpoint nothing leaves the host, and the metrics are only served at {@code
 * GET /metrics}. Precedence, highest first: the config file, Java system properties ({@code
 * -Dotel.*}), the host's environment, these defaults. OTLP goes over HTTP with protobuf (port 4318)
 * unless {@code OTEL_EXPORTER_OTLP_PROTOCOL=grpc} says otherwise. Logs are never exported: the host
 * logs through SLF4J.
 */
final class HostTelemetry {

  /** The service name resources carry unless {@code OTEL_SERVICE_NAME} says otherwise. */
  static final String SERVICE_NAME = "toolhost";

  private static final Map<String, String> DEFAULTS =
      Map.of(
          "otel.service.name", SERVICE_NAME,
          "otel.logs.exporter", "none",
          "otel.exporter.otlp.protocol", "http/protobuf");

  private HostTelemetry() {}

  /**
   * The SDK for the given config and environment, its metrics also read by the given Prometheus
   * reader, its spans also handed to the given processors, and those it exports redacted by the
   * redactor the supplier gives when they are exported.
   *
   * @throws ConfigException when the {@code OTEL_*} variables or system properties configure the
   *     SDK in a way it refuses (an unknown exporter, say)
   */
  static OpenTelemetrySdk create(
      HostConfig.Telemetry config,
      Map<String, String> environment,
      PrometheusMetricReader metricReader,
      List<SpanProcessor> spanProcessors,
      Supplier<Redactor> redactor) {
    try {
      return AutoConfiguredOpenTelemetrySdk.builder()
          .addPropertiesSupplier(() -> DEFAULTS)
          // The SDK reads this process's environment itself; the host's may be another map.
          .addPropertiesCustomizer(properties -> fromEnvironment(environment))
          .addPropertiesCustomizer(properties -> fromConfig(config))
          .addPropertiesCustomizer(HostTelemetry::exporters)
          .addMeterProviderCustomizer(
              (meters, properties) -> meters.registerMetricReader(metricReader))
          // What leaves for a collector is redacted like every other path out of the host.
          .addSpanExporterCustomizer(
              (exporter, properties) -> new RedactingSpanExporter(exporter, redactor))
          .addTracerProviderCustomizer(
              (tracing, properties) -> {
                spanProcessors.forEach(tracing::addSpanProcessor);
                return tracing;
              })
          // The host closes the SDK itself, flushing what it holds.
          .disableShutdownHook()
          .build()
          .getOpenTelemetrySdk();
    } catch (ConfigurationException e) {
      throw new ConfigException("telemetry: " + e.getMessage());
    }
  }

  /**
   * The SDK properties the environment's {@code OTEL_*} variables set, as the SDK spells them
   * ({@code OTEL_EXPORTER_OTLP_ENDPOINT} is {@code otel.exporter.otlp.endpoint}), except where a
   * system property sets the same one: the SDK ranks system properties above the environment.
   */
  static Map<String, String> fromEnvironment(Map<String, String> environment) {
    Map<String, String> properties = new HashMap<>();
    environment.forEach(
        (name, value) -> {
          if (name.startsWith("OTEL_")) {
            String property = name.toLowerCase(Locale.ROOT).replace('_', '.');
            if (System.getProperty(property) == null) {
              properties.put(property, value);
            }
          }
        });
    return properties;
  }

  /**
   * The exporters nobody chose: {@code otlp} for a signal with an OTLP endpoint, {@code none} for
   * one without (the SDK's own default, {@code otlp} to localhost, would log a failure every few
   * seconds on a host with no collector).
   */
  static Map<String, String> exporters(ConfigProperties properties) {
    Map<String, String> exporters = new HashMap<>();
    for (String signal : List.of("traces", "metrics")) {
      String exporter = "otel." + signal + ".exporter";
      if (properties.getString(exporter) == null) {
        boolean endpoint =
            properties.getString("otel.exporter.otlp.endpoint") != null
                || properties.getString("otel.exporter.otlp." + signal + ".endpoint") != null;
        exporters.put(exporter, endpoint ? "otlp" : "none");
      }
    }
    return exporters;
  }

  /** The SDK properties the config file sets: an OTLP endpoint turns both exporters on. */
  static Map<String, String> fromConfig(HostConfig.Telemetry config) {
    return config
        .otlpEndpoint()
        .map(
            endpoint ->
                Map.of(
                    "otel.traces.exporter", "otlp",
                    "otel.metrics.exporter", "otlp",
                    "otel.exporter.otlp.endpoint", endpoint.toString(),
                    "otel.exporter.otlp.protocol", "http/protobuf"))
        .orElse(Map.of());
  }
}
