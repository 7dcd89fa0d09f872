package dev.toolhost.agent;

/**
 * A model listener hears a model's answer as it streams: each text delta as it comes, and each tool
 * call as soon as it has finished streaming (its arguments a complete JSON object, or the stream
 * finished), possibly before the answer ends.
 *
 * <p>Called on the thread that called {@link ModelClient#complete}; it must not block for long, as
 * the stream waits for it.
 */
public interface ModelListener {

  /** A listener that ignores everything. */
  ModelListener NONE = new ModelListener() {};

  /** A piece of the answer's text. */
  default void onText(String delta) {}

  /** A tool call that has finished streaming; called once per call. */
  default void onToolCall(ModelToolCall call) {}
}
