package dev.toolhost.core;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * A call record is what the dispatcher tells its {@link CallRecorder}s of one call it answered: the
 * call as it arrived, the profile of the tool set it went through, the tool's source, the result,
 * and when it started and how long it took. A call the set refused before its tool ran ({@code
 * tool_not_found}, {@code invalid_arguments}) is recorded too.
 *
 * @param call the call as the caller made it
 * @param profile the name of the profile of the tool set the call was dispatched through
 * @param source the source of the tool that answered ({@link ToolSpec#source()}); empty when the
 *     set shows no tool of that name
 * @param result what the caller got back
 * @param at when the call entered the dispatch path
 * @param duration how long the dispatch path took to answer
 */
public record CallRecord(
    ToolCall call,
    String profile,
    Optional<String> source,
    ToolResult result,
    Instant at,
    Duration duration) {

  public CallRecord {
    Objects.requireNonNull(call, "call");
    Objects.requireNonNull(profile, "profile");
    Objects.requireNonNull(source, "source");
    Objects.requireNonNull(result, "result");
    Objects.requireNonNull(at, "at");
    Objects.requireNonNull(duration, "duration");
  }

  /** The outcome as a code: {@code ok}, or the failure's error code as on the wire. */
  public String outcome() {
    return switch (result) {
      case ToolResult.Success success -> "ok";
      case ToolResult.Failure failure -> failure.error().code().wireName();
    };
  }
}
