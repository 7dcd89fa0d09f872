package dev.toolhost.agent;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Consumer;
import tools.jackson.databind.JsonNode;

/**
 * Accumulates streamed tool-call deltas by {@code index}: id, name and type come from the first
 * fragment that carries them, arguments are concatenated across fragments. A call is handed on as
 * soon as its arguments close a JSON object (nothing valid can follow), and every call not yet
 * handed on is handed on when the stream finishes. Not thread-safe: one stream, one thread.
 */
final class ToolCallAccumulator {

  private final Map<Integer, Partial> partials = new TreeMap<>();
  private final Consumer<ModelToolCall> ready;

  ToolCallAccumulator(Consumer<ModelToolCall> ready) {
    this.ready = ready;
  }

  /**
   * Adds the {@code tool_calls} array of one delta.
   *
   * @throws ModelException when a fragment adds to a call that was already complete
   */
  void add(JsonNode toolCalls, String chunk) {
    int position = 0;
    for (JsonNode fragment : toolCalls) {
      int index = fragment.has("index") ? fragment.get("index").asInt() : position;
      position++;
      Partial partial = partials.computeIfAbsent(index, Partial::new);
      if (partial.id.isEmpty() && fragment.path("id").isString()) {
        partial.id = fragment.get("id").asString();
      }
      JsonNode function = fragment.path("function");
      if (partial.name.isEmpty() && function.path("name").isString()) {
        partial.name = function.get("name").asString();
      }
      JsonNode arguments = function.path("arguments");
      if (arguments.isString()) {
        String text = arguments.asString();
        if (partial.handedOn) {
          if (!text.isBlank()) {
            throw new ModelException(
                "The model streamed more arguments for tool call "
                    + index
                    + " after they formed a complete JSON object, in chunk: "
                    + ModelClient.quote(chunk),
                0);
          }
        } else {
          partial.arguments.append(text);
          partial.scan(text);
        }
      }
      if (partial.complete() && !partial.handedOn && !partial.name.isEmpty()) {
        handOn(partial);
      }
    }
  }

  /** Hands on every call not yet handed on; called once the stream has finished. */
  void finish() {
    for (Partial partial : partials.values()) {
      if (!partial.handedOn) {
        handOn(partial);
      }
    }
  }

  /** Every call, in index order. */
  List<ModelToolCall> calls() {
    List<ModelToolCall> calls = new ArrayList<>();
    for (Partial partial : partials.values()) {
      calls.add(partial.toCall());
    }
    return calls;
  }

  private void handOn(Partial partial) {
    partial.handedOn = true;
    ready.accept(partial.toCall());
  }

  /** One call being streamed, with a scanner that sees when its arguments close an object. */
  private static final class Partial {
    final int index;
    String id = "";
    String name = "";
    final StringBuilder arguments = new StringBuilder();
    boolean handedOn;
    // Scanner state: depth of braces and brackets outside strings; -1 before the first '{'.
    int depth = -1;
    boolean inString;
    boolean escaped;
    boolean closed;
    boolean notAnObject;

    Partial(int index) {
      this.index = index;
    }

    void scan(String text) {
      for (int i = 0; i < text.length() && !closed && !notAnObject; i++) {
        char c = text.charAt(i);
        if (depth < 0) {
          if (c == '{') {
            depth = 1;
          } else if (!Character.isWhitespace(c)) {
            notAnObject = true;
          }
        } else if (inString) {
          if (escaped) {
            escaped = false;
          } else if (c == '\\') {
            escaped = true;
          } else if (c == '"') {
            inString = false;
          }
        } else if (c == '"') {
          inString = true;
        } else if (c == '{' || c == '[') {
          depth++;
        } else if (c == '}' || c == ']') {
          depth--;
          closed = depth == 0;
        }
      }
    }

    boolean complete() {
      return closed;
    }

    ModelToolCall toCall() {
      return new ModelToolCall(id.isEmpty() ? "call_" + index : id, name, arguments.toString());
    }
  }
}
