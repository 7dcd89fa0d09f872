package dev.toolhost.core;

import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.context.propagation.TextMapPropagator;
import java.util.HashMap;
import java.util.Map;

/**
 * Trace context is how a tool call's trace crosses to another process: the W3C Trace Context keys
 * {@code traceparent} and {@code tracestate}, written into a string map a message carries (a bus
 * message's headers, an MCP request's {@code _meta}) and read back on the other side, so that the
 * remote tool's span joins the caller's trace.
 *
 * <p>The format is fixed, not the host's configured propagators: it is part of the wire protocol
 * and of MCP (SEP-414), which any language can read. Baggage is not carried: it is application data
 * that may hold anything. Written by hand around the API's W3C propagator: the carriers here are
 * plain maps, for which the API has no getter.
 */
public final class TraceContext {

  // The W3C header that names the remote span.
  private static final String TRACE_PARENT = "traceparent";

  private static final TextMapPropagator W3C = W3CTraceContextPropagator.getInstance();

  private static final TextMapGetter<Map<String, ?>> MAP =
      new TextMapGetter<>() {
        @Override
        public String get(Map<String, ?> carrier, String key) {
          return carrier != null && carrier.get(key) instanceof String value ? value : null;
        }
      };

  private TraceContext() {}

  /**
   * The trace context of the current span, as {@code traceparent} (and {@code tracestate} when
   * there is one); empty when no span is current, so an untraced call carries nothing.
   */
  public static Map<String, String> current() {
    Map<String, String> carrier = new HashMap<>(2);
    W3C.inject(Context.current(), carrier, Map::put);
    return carrier;
  }

  /**
   * The context whose parent is the remote span the carrier names; the root context when it names
   * none, or names it malformed.
   */
  public static Context parentFrom(Map<String, ?> carrier) {
    return W3C.extract(Context.root(), carrier, MAP);
  }

  /**
   * Makes the remote span the carrier names the parent of what this thread does until the scope
   * closes, as {@link #parentFrom} does; a carrier with no {@code traceparent} (an untraced call)
   * changes nothing and costs nothing, for a thread of a consumer or a pool that holds no context.
   */
  public static Scope continueFrom(Map<String, ?> carrier) {
    return carrier.containsKey(TRACE_PARENT) ? parentFrom(carrier).makeCurrent() : Scope.noop();
  }
}
