package dev.toolhost.bus;

import dev.toolhost.core.ToolCall;
import java.io.StringWriter;
import java.time.DateTimeException;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.Objects;
import java.util.Optional;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonGenerator;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.core.ObjectReadContext;
import tools.jackson.core.TokenStreamFactory;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * An invoke request is a tool call as it travels on the bus to a worker: {@code {tool_call_id,
 * call_key, tool_name, arguments, session_id, user, principal, agent, deadline}} (see {@code
 * docs/wire-protocol.md}).
 *
 * @param call the call; its id is the caller's label for it, sent back in the reply
 * @param callKey the host's own id for the call ({@link CallKey}), which workers deduplicate and
 *     store its result by: the same on every copy of the request, another for every other call
 */
public record InvokeRequest(ToolCall call, String callKey) {

  private static final JsonMapper JSON = JsonMapper.shared();
  // The mapper's own factory, for reading tokens: no databind context per request.
  private static final TokenStreamFactory STREAMS = JSON.tokenStreamFactory();

  public InvokeRequest {
    Objects.requireNonNull(call, "call");
    Objects.requireNonNull(callKey, "callKey");
  }

  /**
   * The request of a new call, with a key {@linkplain CallKey#mint minted} for it: send this one
   * request, and only it, as often as the call needs.
   */
  public InvokeRequest(ToolCall call) {
    this(call, CallKey.mint(call));
  }

  /** The request as JSON text. */
  public String toJson() {
    JsonNode arguments;
    try {
      arguments =
          call.arguments().isBlank() ? JSON.createObjectNode() : JSON.readTree(call.arguments());
    } catch (JacksonException e) {
      // The worker's dispatch path answers invalid_arguments for text that is not JSON.
      arguments = JSON.getNodeFactory().stringNode(call.arguments());
    }
    return toJson(arguments);
  }

  /**
   * The request as JSON text, with arguments already parsed (the call's arguments text is not read
   * again). Written with a streaming generator, not built as a tree first: a caller writes one per
   * remote call.
   */
  public String toJson(JsonNode arguments) {
    StringWriter text = new StringWriter(160 + call.arguments().length());
    try (JsonGenerator body = JSON.createGenerator(text)) {
      body.writeStartObject();
      body.writeStringProperty("tool_call_id", call.callId());
      body.writeStringProperty("call_key", callKey);
      body.writeStringProperty("tool_name", call.toolName());
      body.writeName("arguments");
      body.writeTree(arguments);
      if (call.sessionId().isPresent()) {
        body.writeStringProperty("session_id", call.sessionId().get());
      }
      if (call.user().isPresent()) {
        body.writeStringProperty("user", call.user().get());
      }
      if (call.principal().isPresent()) {
        body.writeStringProperty("principal", call.principal().get());
      }
      if (call.agent().isPresent()) {
        body.writeStringProperty("agent", call.agent().get());
      }
      body.writeStringProperty("deadline", isoInstant(call.deadline()));
      body.writeEndObject();
    }
    return text.toString();
  }

  /**
   * Reads a request in one streaming pass. The arguments are kept as the text they were sent in (a
   * string holding JSON as that string), not built as a tree and printed again: the worker's
   * dispatch path parses and validates them once. A request without a {@code call_key} (a caller
   * from before call keys) gets one {@linkplain CallKey#derive derived} from its content.
   *
   * @throws IllegalArgumentException saying why the text is not a request
   */
  public static InvokeRequest parse(String text) {
    String id = null;
    String key = null;
    String name = null;
    String deadlineText = null;
    String sessionId = null;
    String user = null;
    String principal = null;
    String agent = null;
    String arguments = "{}";
    try (JsonParser parser = STREAMS.createParser(ObjectReadContext.empty(), text)) {
      if (parser.nextToken() != JsonToken.START_OBJECT) {
        throw WireJson.notAnObject();
      }
      while (parser.nextToken() == JsonToken.PROPERTY_NAME) {
        String field = parser.currentName();
        JsonToken value = parser.nextToken();
        switch (field) {
          case "tool_call_id" -> id = string(parser, value);
          case "call_key" -> key = string(parser, value);
          case "tool_name" -> name = string(parser, value);
          case "deadline" -> deadlineText = string(parser, value);
          case "session_id" -> sessionId = string(parser, value);
          case "user" -> user = string(parser, value);
          case "principal" -> principal = string(parser, value);
          case "agent" -> agent = string(parser, value);
          case "arguments" -> arguments = argumentsText(parser, value, text);
          default -> parser.skipChildren();
        }
      }
      if (parser.nextToken() != null) {
        throw new IllegalArgumentException("not valid JSON (more content after the object)");
      }
    } catch (JacksonException e) {
      throw WireJson.notJson(e);
    }
    if (id == null) {
      throw missing("tool_call_id");
    }
    if (name == null) {
      throw missing("tool_name");
    }
    if (deadlineText == null) {
      throw missing("deadline");
    }
    Instant deadline;
    try {
      deadline = instant(deadlineText);
    } catch (DateTimeException e) {
      throw new IllegalArgumentException(
          "'deadline' is not an ISO-8601 instant such as 2026-01-01T00:00:00Z");
    }
    ToolCall call =
        new ToolCall(
            id,
            name,
            arguments,
            Optional.ofNullable(sessionId),
            Optional.ofNullable(user),
            Optional.ofNullable(principal),
            Optional.ofNullable(agent),
            Optional.empty(),
            deadline);
    return new InvokeRequest(call, key == null || key.isEmpty() ? CallKey.derive(call) : key);
  }

  // A string property's value; null for any other value, which is skipped.
  private static String string(JsonParser parser, JsonToken value) {
    if (value == JsonToken.VALUE_STRING) {
      return parser.getString();
    }
    parser.skipChildren();
    return null;
  }

  // The arguments as sent: an object or array as its exact text, a string as its content, null as
  // no arguments, any other value as its text (the dispatch path refuses what is not an object).
  private static String argumentsText(JsonParser parser, JsonToken value, String text) {
    return switch (value) {
      case START_OBJECT, START_ARRAY -> {
        int from = (int) parser.currentTokenLocation().getCharOffset();
        parser.skipChildren();
        yield text.substring(from, (int) parser.currentLocation().getCharOffset());
      }
      case VALUE_NULL -> "{}";
      default -> parser.getString();
    };
  }

  /**
   * Writes an instant as {@link Instant#toString()} does ({@code 2026-01-01T00:00:00.123Z}: the
   * fraction in groups of three digits, none when it is zero). By hand for the years 0 to 9999,
   * which every deadline falls in: {@code Instant.toString}, through {@code DateTimeFormatter}, was
   * the largest single cost of writing a request.
   */
  static String isoInstant(Instant instant) {
    LocalDateTime time;
    try {
      time =
          LocalDateTime.ofEpochSecond(instant.getEpochSecond(), instant.getNano(), ZoneOffset.UTC);
    } catch (DateTimeException e) {
      return instant.toString();
    }
    if (time.getYear() < 0 || time.getYear() > 9999) {
      return instant.toString();
    }
    StringBuilder out = new StringBuilder(30);
    pad(out, time.getYear(), 4).append('-');
    pad(out, time.getMonthValue(), 2).append('-');
    pad(out, time.getDayOfMonth(), 2).append('T');
    pad(out, time.getHour(), 2).append(':');
    pad(out, time.getMinute(), 2).append(':');
    pad(out, time.getSecond(), 2);
    int nanos = time.getNano();
    if (nanos != 0) {
      out.append('.');
      if (nanos % 1_000_000 == 0) {
        pad(out, nanos / 1_000_000, 3);
      } else if (nanos % 1_000 == 0) {
        pad(out, nanos / 1_000, 6);
      } else {
        pad(out, nanos, 9);
      }
    }
    return out.append('Z').toString();
  }

  private static StringBuilder pad(StringBuilder out, int value, int width) {
    String digits = Integer.toString(value);
    for (int i = digits.length(); i < width; i++) {
      out.append('0');
    }
    return out.append(digits);
  }

  /**
   * Reads an ISO-8601 instant. The shape every Toolhost caller sends, {@code
   * 2026-01-01T00:00:00.123Z} (the fraction optional, of 1 to 9 digits), is read by hand; anything
   * else goes to {@link Instant#parse}. Written by hand because {@code Instant.parse} costs about
   * 7% of a worker's CPU under load, more than any other single step of reading a request.
   */
  static Instant instant(String text) {
    int length = text.length();
    if (length < 20
        || text.charAt(length - 1) != 'Z'
        || text.charAt(4) != '-'
        || text.charAt(7) != '-'
        || text.charAt(10) != 'T'
        || text.charAt(13) != ':'
        || text.charAt(16) != ':') {
      return Instant.parse(text);
    }
    int year = digits(text, 0, 4);
    int month = digits(text, 5, 2);
    int day = digits(text, 8, 2);
    int hour = digits(text, 11, 2);
    int minute = digits(text, 14, 2);
    int second = digits(text, 17, 2);
    int nanos = 0;
    if (length > 20) {
      int fraction = length - 21;
      if (text.charAt(19) != '.' || fraction < 1 || fraction > 9) {
        return Instant.parse(text);
      }
      nanos = digits(text, 20, fraction);
      for (int i = fraction; i < 9; i++) {
        nanos *= 10;
      }
    }
    // Instant.parse reads 24:00 as the next day and :60 as a leap second; it has those.
    if ((year | month | day | hour | minute | second | nanos) < 0 || hour > 23 || second > 59) {
      return Instant.parse(text);
    }
    // LocalDateTime checks the ranges (month 13, February 30) as Instant.parse does.
    return LocalDateTime.of(year, month, day, hour, minute, second, nanos)
        .toInstant(ZoneOffset.UTC);
  }

  /** The decimal number in {@code count} characters from {@code from}; -1 when one is no digit. */
  private static int digits(String text, int from, int count) {
    int value = 0;
    for (int i = from; i < from + count; i++) {
      char c = text.charAt(i);
      if (c < '0' || c > '9') {
        return -1;
      }
      value = value * 10 + (c - '0');
    }
    return value;
  }

  private static IllegalArgumentException missing(String field) {
    return new IllegalArgumentException("not a tool invoke request: no string '" + field + "'");
  }
}
