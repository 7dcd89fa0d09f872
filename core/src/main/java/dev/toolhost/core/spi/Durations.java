package dev.toolhost.core.spi;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Durations is the one syntax of a duration in a config file and on the command line: a whole
 * number of seconds ({@code 30}), a number with a unit ({@code 500ms}, {@code 30s}, {@code 2m},
 * {@code 1h}, {@code 30d}), or ISO-8601 ({@code PT1M30S}). Every extension reads its durations
 * here, so that a bare {@code 30} means thirty seconds in every section.
 */
public final class Durations {

  private static final Pattern SHORT = Pattern.compile("(\\d+)(ms|s|m|h|d)?");

  /** What a duration must be, as a problem says it. */
  public static final String EXPECTED = "expected a positive duration, such as 30s, 5m or 1h";

  private Durations() {}

  /**
   * A config value read as a duration: the fallback when absent; when it is no duration, a problem
   * at the pointer that names the key as the file spells it ({@code 'web.timeout' is 'soon'
   * (expected ...)}), and empty.
   *
   * @param pointer the value's JSON pointer from the file's root, such as {@code /web/timeout}
   */
  public static Optional<Duration> read(
      String raw, Duration fallback, String pointer, ConfigProblems problems) {
    if (raw == null) {
      return Optional.of(fallback);
    }
    Optional<Duration> parsed = parse(raw);
    if (parsed.isEmpty()) {
      problems.atValue(
          pointer, "'" + ConfigProblems.dotted(pointer) + "' is '" + raw + "' (" + EXPECTED + ")");
    }
    return parsed;
  }

  /**
   * The duration the text says, when it is a positive one in the syntax above; empty for anything
   * else (zero, negative, malformed, or too large for a {@link Duration}).
   */
  public static Optional<Duration> parse(String text) {
    if (text == null) {
      return Optional.empty();
    }
    String value = text.strip();
    Matcher matcher = SHORT.matcher(value.toLowerCase(Locale.ROOT));
    Duration duration;
    try {
      if (matcher.matches()) {
        long amount = Long.parseLong(matcher.group(1));
        String unit = matcher.group(2) == null ? "s" : matcher.group(2);
        duration =
            switch (unit) {
              case "ms" -> Duration.ofMillis(amount);
              case "s" -> Duration.ofSeconds(amount);
              case "m" -> Duration.ofMinutes(amount);
              case "h" -> Duration.ofHours(amount);
              default -> Duration.ofDays(amount);
            };
      } else {
        duration = Duration.parse(value);
      }
    } catch (DateTimeParseException | ArithmeticException | NumberFormatException e) {
      return Optional.empty();
    }
    return duration.isNegative() || duration.isZero() ? Optional.empty() : Optional.of(duration);
  }
}
