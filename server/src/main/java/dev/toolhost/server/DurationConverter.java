package dev.toolhost.server;

import dev.toolhost.core.spi.Durations;
import java.time.Duration;
import picocli.CommandLine;

/**
 * The duration converter reads a positive duration from the command line in the one syntax of
 * {@link Durations}: {@code 500ms}, {@code 30s}, {@code 2m}, {@code 1h}, ISO-8601 such as {@code
 * PT1M30S}, or a whole number of seconds.
 */
final class DurationConverter implements CommandLine.ITypeConverter<Duration> {

  @Override
  public Duration convert(String value) {
    return Durations.parse(value)
        .orElseThrow(() -> new CommandLine.TypeConversionException(invalid(value)));
  }

  private static String invalid(String value) {
    return "'"
        + value
        + "' is not a positive duration (expected such as 500ms, 30s, 2m, 1h or PT1M)";
  }
}
