package dev.toolhost.host;

import dev.toolhost.core.Redactor;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.AttributeType;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.common.AttributesBuilder;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.data.DelegatingSpanData;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.util.Collection;
import java.util.List;
import java.util.function.Supplier;

/**
 * A redacting span exporter passes spans on to the exporter it wraps with every string attribute
 * redacted: a span is a path out of the host (to a collector), and with {@code
 * telemetry.record_content} on it carries the arguments and results of tool calls. The redactor is
 * the host's secret scanner, looked up when a span is exported (the host has it only once its
 * extensions started).
 */
final class RedactingSpanExporter implements SpanExporter {

  private final SpanExporter exporter;
  private final Supplier<Redactor> redactor;

  RedactingSpanExporter(SpanExporter exporter, Supplier<Redactor> redactor) {
    this.exporter = exporter;
    this.redactor = redactor;
  }

  @Override
  public CompletableResultCode export(Collection<SpanData> spans) {
    Redactor scanner = redactor.get();
    if (scanner == Redactor.NONE) {
      return exporter.export(spans);
    }
    List<SpanData> redacted = spans.stream().map(span -> redact(span, scanner)).toList();
    return exporter.export(redacted);
  }

  private static SpanData redact(SpanData span, Redactor scanner) {
    Attributes attributes = span.getAttributes();
    AttributesBuilder changed = attributes.toBuilder();
    boolean[] any = {false};
    attributes.forEach(
        (key, value) -> {
          if (key.getType() == AttributeType.STRING) {
            String text = (String) value;
            String clean = scanner.redact(text);
            if (!clean.equals(text)) {
              @SuppressWarnings("unchecked")
              AttributeKey<String> stringKey = (AttributeKey<String>) key;
              changed.put(stringKey, clean);
              any[0] = true;
            }
          }
        });
    if (!any[0]) {
      return span;
    }
    Attributes clean = changed.build();
    return new DelegatingSpanData(span) {
      @Override
      public Attributes getAttributes() {
        return clean;
      }
    };
  }

  @Override
  public CompletableResultCode flush() {
    return exporter.flush();
  }

  @Override
  public CompletableResultCode shutdown() {
    return exporter.shutdown();
  }
}
