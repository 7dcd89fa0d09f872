package dev.toolhost.testing;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A scripted reply is what the {@link ScriptedModelServer} answers one request with: a {@link
 * Stream} of chat-completion events, rendered as OpenAI renders them (SSE {@code data:} lines when
 * the request streams, one {@code chat.completion} object when it does not), or a bare {@link
 * Status} such as a 429 with {@code Retry-After}.
 */
public sealed interface ScriptedReply {

  /** An answer of plain text, streamed a few characters per chunk, then a usage chunk. */
  static Stream answer(String text) {
    StreamBuilder stream = stream().reasoning("The user wants an answer; no tool is needed.");
    for (int i = 0; i < text.length(); i += 4) {
      stream.text(text.substring(i, Math.min(text.length(), i + 4)));
    }
    return stream.finish("stop").usage(12, text.length()).done().build();
  }

  /**
   * Tool calls as a model makes them in one turn: each call's arguments split into three fragments
   * mid-token, the fragments of the calls interleaved by index, with a reasoning chunk first and a
   * usage chunk after {@code finish_reason: tool_calls}.
   */
  static Stream toolCalls(Call... calls) {
    StreamBuilder stream = stream().reasoning("I should call a tool.");
    List<List<String>> fragments = new ArrayList<>();
    for (int i = 0; i < calls.length; i++) {
      stream.toolCallStart(i, calls[i].id(), calls[i].name());
      fragments.add(split(calls[i].arguments()));
    }
    for (int round = 0; round < 3; round++) {
      for (int i = 0; i < calls.length; i++) {
        String fragment = fragments.get(i).get(round);
        if (!fragment.isEmpty()) {
          stream.toolCallArguments(i, fragment);
        }
      }
    }
    return stream.finish("tool_calls").usage(20, 15).done().build();
  }

  /** A call for {@link #toolCalls}: the call id, the function name, the arguments as JSON text. */
  static Call call(String id, String name, String arguments) {
    return new Call(id, name, arguments);
  }

  /** A bare HTTP status with a body, such as {@code status(500, "upstream failed")}. */
  static Status status(int code, String body) {
    return new Status(code, body, Map.of());
  }

  /**
   * OpenAI's answer to a request longer than the model's context window: 400 with {@code
   * context_length_exceeded}, worded as OpenAI words it.
   *
   * @param window the model's window, in tokens
   * @param requested the request's tokens
   */
  static Status contextLengthExceeded(int window, int requested) {
    return status(
        400,
        "{\"error\":{\"message\":\"This model's maximum context length is "
            + window
            + " tokens. However, your messages resulted in "
            + requested
            + " tokens. Please reduce the length of the messages.\",\"type\":"
            + "\"invalid_request_error\",\"param\":\"messages\",\"code\":"
            + "\"context_length_exceeded\"}}");
  }

  /** A builder of a stream of events, for scripts the shortcuts do not cover. */
  static StreamBuilder stream() {
    return new StreamBuilder();
  }

  // Three pieces, cut inside tokens (a third and two thirds of the way) so that no piece is JSON.
  private static List<String> split(String text) {
    int a = text.length() / 3;
    int b = 2 * text.length() / 3;
    return List.of(text.substring(0, a), text.substring(a, b), text.substring(b));
  }

  /**
   * A tool call to script.
   *
   * @param id the call id, such as {@code call_1}
   * @param name the function name
   * @param arguments the arguments as JSON text
   */
  record Call(String id, String name, String arguments) {
    public Call {
      Objects.requireNonNull(id, "id");
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(arguments, "arguments");
    }
  }

  /**
   * A bare HTTP answer.
   *
   * @param code the status code
   * @param body the body text
   * @param headers extra response headers
   */
  record Status(int code, String body, Map<String, String> headers) implements ScriptedReply {
    public Status {
      Objects.requireNonNull(body, "body");
      headers = Map.copyOf(headers);
    }

    /** This answer with one more header, such as {@code Retry-After}. */
    public Status header(String name, String value) {
      Map<String, String> more = new LinkedHashMap<>(headers);
      more.put(name, value);
      return new Status(code, body, more);
    }
  }

  /**
   * A streamed chat completion: the events in order.
   *
   * @param events what the stream holds
   */
  record Stream(List<Event> events) implements ScriptedReply {
    public Stream {
      events = List.copyOf(events);
    }
  }

  /** One thing a scripted stream does. */
  sealed interface Event {}

  /** A text delta. */
  record Text(String text) implements Event {}

  /** A reasoning delta, as reasoning models send it ({@code reasoning_content}). */
  record Reasoning(String text) implements Event {}

  /** The first fragment of a tool call: index, id, type and name, empty arguments. */
  record ToolCallStart(int index, String id, String name) implements Event {}

  /** A further fragment of a tool call's arguments. */
  record ToolCallArguments(int index, String fragment) implements Event {}

  /** The chunk that carries {@code finish_reason}. */
  record Finish(String reason) implements Event {}

  /** A usage chunk ({@code choices: []}), as sent with {@code stream_options.include_usage}. */
  record Usage(int promptTokens, int completionTokens) implements Event {}

  /** A line written as is, such as a malformed {@code data:} line. */
  record Raw(String line) implements Event {}

  /** A pause before the next event. */
  record Pause(Duration duration) implements Event {}

  /** The {@code data: [DONE]} line. */
  record Done() implements Event {}

  /** A builder of a {@link Stream}. Leave out {@link #done()} to script a truncated stream. */
  final class StreamBuilder {
    private final List<Event> events = new ArrayList<>();

    private StreamBuilder() {}

    /** Adds a text delta. */
    public StreamBuilder text(String text) {
      events.add(new Text(text));
      return this;
    }

    /** Adds a reasoning delta. */
    public StreamBuilder reasoning(String text) {
      events.add(new Reasoning(text));
      return this;
    }

    /** Adds the first fragment of a tool call. */
    public StreamBuilder toolCallStart(int index, String id, String name) {
      events.add(new ToolCallStart(index, id, name));
      return this;
    }

    /** Adds a fragment of a tool call's arguments. */
    public StreamBuilder toolCallArguments(int index, String fragment) {
      events.add(new ToolCallArguments(index, fragment));
      return this;
    }

    /** Adds the finish chunk. */
    public StreamBuilder finish(String reason) {
      events.add(new Finish(reason));
      return this;
    }

    /** Adds a usage chunk. */
    public StreamBuilder usage(int promptTokens, int completionTokens) {
      events.add(new Usage(promptTokens, completionTokens));
      return this;
    }

    /** Adds a line written as is (followed by a blank line). */
    public StreamBuilder raw(String line) {
      events.add(new Raw(line));
      return this;
    }

    /** Pauses before the next event. */
    public StreamBuilder pause(Duration duration) {
      events.add(new Pause(duration));
      return this;
    }

    /** Adds {@code data: [DONE]}. */
    public StreamBuilder done() {
      events.add(new Done());
      return this;
    }

    /** The stream. */
    public Stream build() {
      return new Stream(events);
    }
  }
}
