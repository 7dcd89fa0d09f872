package dev.toolhost.server;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;

/**
 * The duration converter reads a positive duration from the command line: {@code 500ms}, {@code
 * 30s}, {@code 2m}, {@code 1h}, or ISO-8601 such as {@code PT1M30S}.
 */
final class DurationConverter implements CommandLine.ITypeConverter<Duration> {

  private static final Pattern SHORT = Pattern.compile("(\\d+)(ms|s|m|h)");

  @Override
  public Duration convert(String value) {
    String text = value.trim().toLowerCase(Locale.ROOT);
    Matcher matcher = SHORT.matcher(text);
    Duration duration;
    try {
      if (matcher.matches()) {
        long amount = Long.parseLong(matcher.group(1));
        duration =
            switch (matcher.group(2)) {
              case "ms" -> Duration.ofMillis(amount);
              case "s" -> Duration.ofSeconds(amount);
              case "m" -> Duration.ofMinutes(amount);
              default -> Duration.ofHours(amount);
            };
      } else {
        duration = Duration.parse(value.trim());
      }
    } catch (DateTimeParseException | ArithmeticException | NumberFormatException e) {
      throw new CommandLine.TypeConversionException(invalid(value));
    }
    if (duration.isNegative() || duration.isZero()) {
      throw new CommandLine.TypeConversionException(invalid(value));
    }
    return duration;
  }

  private static String invalid(String value) {
    return "'"
        + value
        + "' is not a positive duration (expected such as 500ms, 30s, 2m, 1h or PT1M)";
  }
}
