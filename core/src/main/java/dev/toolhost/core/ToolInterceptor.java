package dev.toolhost.core;

import tools.jackson.databind.JsonNode;

/**
 * A tool interceptor is one step of the dispatch path around the executor: it observes, changes or
 * short-circuits a call and its result.
 *
 * <p>An interceptor calls {@link Chain#proceed} at most once, or returns a result of its own
 * without proceeding. The order of the chain is written in one place, {@link
 * ToolDispatcher#interceptors()}; the model is OkHttp's interceptor chain.
 */
@FunctionalInterface
public interface ToolInterceptor {

  /** Handles the call of the chain, usually by proceeding and looking at the result. */
  ToolResult intercept(Chain chain);

  /** A chain is the rest of the dispatch path from one interceptor on. */
  interface Chain {
    /** The call as it reaches this interceptor. */
    ToolCall call();

    /** The spec of the tool being called. */
    ToolSpec spec();

    /**
     * The profile of the tool set the call was dispatched through: whose call it is, for steps
     * whose policy depends on the caller (the output scan's, say).
     */
    ToolProfile profile();

    /** The parsed, validated arguments of {@link #call()}. */
    JsonNode arguments();

    /**
     * The {@link System#nanoTime()} reading taken when the call entered the dispatch path. Steps
     * that time the call or check its deadline start from it instead of reading the clock again.
     */
    long startNanos();

    /** Passes the call to the next interceptor, or the executor, and returns its result. */
    ToolResult proceed(ToolCall call);
  }
}
