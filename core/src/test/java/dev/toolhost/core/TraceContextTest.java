package dev.toolhost.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.TraceFlags;
import io.opentelemetry.api.trace.TraceState;
import io.opentelemetry.context.Scope;
import java.util.Map;
import org.junit.jupiter.api.Test;

class TraceContextTest {

  private static final String TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
  private static final String SPAN_ID = "00f067aa0ba902b7";

  @Test
  void anUntracedCallCarriesNothing() {
    assertThat(TraceContext.current()).isEmpty();
  }

  @Test
  void theCurrentSpanTravelsAsATraceparentAndComesBackAsTheRemoteParent() {
    SpanContext span =
        SpanContext.create(
            TRACE_ID,
            SPAN_ID,
            TraceFlags.getSampled(),
            TraceState.builder().put("vendor", "value").build());
    Map<String, String> carried;
    try (Scope ignored = Span.wrap(span).makeCurrent()) {
      carried = TraceContext.current();
    }

    assertThat(carried)
        .containsEntry("traceparent", "00-" + TRACE_ID + "-" + SPAN_ID + "-01")
        .containsEntry("tracestate", "vendor=value");
    SpanContext parent = Span.fromContext(TraceContext.parentFrom(carried)).getSpanContext();
    assertThat(parent.getTraceId()).isEqualTo(TRACE_ID);
    assertThat(parent.getSpanId()).isEqualTo(SPAN_ID);
    assertThat(parent.isRemote()).isTrue();
    assertThat(parent.isSampled()).isTrue();
  }

  @Test
  void aMalformedOrForeignCarrierGivesNoParent() {
    Map<String, Object> meta = Map.of("traceparent", "not-a-traceparent", "progressToken", 7);

    assertThat(Span.fromContext(TraceContext.parentFrom(meta)).getSpanContext().isValid())
        .isFalse();
    assertThat(
            Span.fromContext(TraceContext.parentFrom(Map.of("traceparent", 42)))
                .getSpanContext()
                .isValid())
        .isFalse();
  }

  @Test
  void continuingACarrierMakesItsSpanTheParentAndAnUntracedOneChangesNothing() {
    SpanContext span =
        SpanContext.create(TRACE_ID, SPAN_ID, TraceFlags.getSampled(), TraceState.getDefault());
    Map<String, String> carried;
    try (Scope ignored = Span.wrap(span).makeCurrent()) {
      carried = TraceContext.current();
    }

    try (Scope ignored = TraceContext.continueFrom(carried)) {
      assertThat(Span.current().getSpanContext().getSpanId()).isEqualTo(SPAN_ID);
      assertThat(Span.current().getSpanContext().isRemote()).isTrue();
    }
    assertThat(Span.current().getSpanContext().isValid()).isFalse();
    try (Scope outer = Span.wrap(span).makeCurrent();
        Scope ignored = TraceContext.continueFrom(Map.of("tracestate", "vendor=value"))) {
      assertThat(Span.current().getSpanContext().getSpanId()).isEqualTo(SPAN_ID);
      assertThat(Span.current().getSpanContext().isRemote()).isFalse();
    }
  }
}
