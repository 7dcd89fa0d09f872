package dev.toolhost.scheduling;

import com.cronutils.model.Cron;
import com.cronutils.model.definition.CronDefinition;
import com.cronutils.model.definition.CronDefinitionBuilder;
import com.cronutils.model.time.ExecutionTime;
import com.cronutils.parser.CronParser;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.Month;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.time.zone.ZoneOffsetTransition;
import java.time.zone.ZoneRules;
import java.util.BitSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A cron expression is when a scheduled task fires, in Unix cron: five fields (minute, hour,
 * day-of-month, month, day-of-week; minute precision) or six (a second field first).
 *
 * <p>Unix semantics: when both day-of-month and day-of-week are restricted, a day matches either
 * ({@code 0 9 1 * 1} fires on the first of the month and on every Monday). As in Vixie cron, a day
 * field that starts with {@code *} counts as unrestricted for that rule, and the two are then
 * ANDed: day-of-month {@code 1-31/2} with day-of-week {@code 1} fires on odd days and on Mondays,
 * while the same odd days written as a star with a step of 2 fire on odd days that are Mondays.
 *
 * <p>Next fires are computed on the wall clock of a zone, with one policy for daylight-saving
 * changes ({@link #next}): a fire whose local time falls in a skipped hour runs once, at the first
 * instant after the gap (02:30 on the night clocks jump from 02:00 to 03:00 fires at 03:00); a
 * local time that occurs twice (the hour repeated when clocks go back) fires once, at its first
 * occurrence. So a daily task fires exactly once every day, and an hourly task fires once in the
 * repeated hour.
 *
 * <p>Matching with cron-utils' Unix field definitions (with and without seconds), whose
 * day-of-month and day-of-week are ORed unless told to AND them; db-scheduler's own cron needs six
 * fields and always ANDs them. Immutable and thread-safe.
 */
public final class CronExpression {

  /** A field of a cron expression: its name and range. */
  private record Field(String name, int min, int max, List<String> names) {}

  private static final Field SECOND = new Field("second", 0, 59, List.of());
  private static final Field MINUTE = new Field("minute", 0, 59, List.of());
  private static final Field HOUR = new Field("hour", 0, 23, List.of());
  private static final Field DAY_OF_MONTH = new Field("day-of-month", 1, 31, List.of());
  private static final Field MONTH =
      new Field(
          "month",
          1,
          12,
          List.of(
              "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"));
  private static final Field DAY_OF_WEEK =
      new Field("day-of-week", 0, 7, List.of("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"));

  private static final List<Field> FIVE = List.of(MINUTE, HOUR, DAY_OF_MONTH, MONTH, DAY_OF_WEEK);
  private static final List<Field> SIX =
      List.of(SECOND, MINUTE, HOUR, DAY_OF_MONTH, MONTH, DAY_OF_WEEK);

  // Four definitions: five or six fields, and day-of-month with day-of-week ORed or ANDed.
  private static final CronDefinition UNIX = definition(false, false);
  private static final CronDefinition UNIX_AND = definition(false, true);
  private static final CronDefinition UNIX_WITH_SECONDS = definition(true, false);
  private static final CronDefinition UNIX_WITH_SECONDS_AND = definition(true, true);

  private static CronDefinition definition(boolean seconds, boolean and) {
    CronDefinitionBuilder builder = CronDefinitionBuilder.defineCron();
    if (seconds) {
      builder = builder.withSeconds().withValidRange(0, 59).withStrictRange().and();
    }
    builder =
        builder
            .withMinutes()
            .withValidRange(0, 59)
            .withStrictRange()
            .and()
            .withHours()
            .withValidRange(0, 23)
            .withStrictRange()
            .and()
            .withDayOfMonth()
            .withValidRange(1, 31)
            .withStrictRange()
            .and()
            .withMonth()
            .withValidRange(1, 12)
            .withStrictRange()
            .and()
            .withDayOfWeek()
            .withValidRange(0, 7)
            .withMondayDoWValue(1)
            .withIntMapping(7, 0)
            .withStrictRange()
            .and();
    return (and ? builder.matchDayOfWeekAndDayOfMonth() : builder).instance();
  }

  /** One comma-separated part of a field: a value or {@code *}, a range, an optional step. */
  private static final Pattern PART =
      Pattern.compile("(\\*|[A-Za-z0-9]+)(?:-([A-Za-z0-9]+))?(?:/([0-9]+))?");

  private final String text;
  private final int fieldCount;
  private final ExecutionTime execution;

  private CronExpression(String text, int fieldCount, ExecutionTime execution) {
    this.text = text;
    this.fieldCount = fieldCount;
    this.execution = execution;
  }

  /**
   * Parses an expression of five or six fields.
   *
   * @throws IllegalArgumentException with a message for the model that names the field at fault and
   *     its allowed range, or says why the expression never fires
   */
  public static CronExpression parse(String text) {
    Objects.requireNonNull(text, "text");
    CronExpression known = PARSED.get(text);
    if (known != null) {
      return known;
    }
    CronExpression parsed = parseNew(text);
    // Stored tasks share few crons, and listing parses every task's: a small cache of valid ones.
    if (PARSED.size() >= PARSED_LIMIT) {
      PARSED.clear();
    }
    PARSED.put(text, parsed);
    return parsed;
  }

  private static final int PARSED_LIMIT = 4_096;
  private static final Map<String, CronExpression> PARSED = new ConcurrentHashMap<>();

  private static CronExpression parseNew(String text) {
    String trimmed = text.strip().replaceAll("\\s+", " ");
    String[] values = trimmed.isEmpty() ? new String[0] : trimmed.split(" ");
    List<Field> fields;
    if (values.length == 5) {
      fields = FIVE;
    } else if (values.length == 6) {
      fields = SIX;
    } else {
      throw new IllegalArgumentException(
          "cron '"
              + text
              + "' has "
              + values.length
              + (values.length == 1 ? " field" : " fields")
              + "; expected 5 (minute hour day-of-month month day-of-week) or 6 (second minute"
              + " hour day-of-month month day-of-week)");
    }
    StringBuilder numeric = new StringBuilder();
    BitSet[] allowed = new BitSet[fields.size()];
    for (int i = 0; i < fields.size(); i++) {
      allowed[i] = new BitSet();
      String value = numericField(text, fields.get(i), values[i], allowed[i]);
      numeric.append(i == 0 ? "" : " ").append(value);
    }
    int dayOfMonth = fields.size() - 3;
    int month = fields.size() - 2;
    int dayOfWeek = fields.size() - 1;
    boolean daysOfWeekRestricted = !values[dayOfWeek].startsWith("*");
    boolean daysOfMonthRestricted = !values[dayOfMonth].startsWith("*");
    if (daysOfMonthRestricted
        && !daysOfWeekRestricted
        && !anyDayOccurs(allowed[dayOfMonth], allowed[month])) {
      throw new IllegalArgumentException(
          "cron '"
              + text
              + "' never fires: no month it allows (month field '"
              + values[month]
              + "') has a day it allows (day-of-month field '"
              + values[dayOfMonth]
              + "')");
    }
    // Vixie cron's rule: the days are ORed only when neither day field starts with '*'.
    boolean and = !daysOfMonthRestricted || !daysOfWeekRestricted;
    CronDefinition definition =
        fields.size() == 5
            ? (and ? UNIX_AND : UNIX)
            : (and ? UNIX_WITH_SECONDS_AND : UNIX_WITH_SECONDS);
    Cron cron;
    try {
      cron = new CronParser(definition).parse(numeric.toString()).validate();
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("cron '" + text + "' is not valid: " + e.getMessage());
    }
    return new CronExpression(trimmed, fields.size(), ExecutionTime.forCron(cron));
  }

  /** Checks one field, fills its allowed values, and returns it with names as numbers. */
  private static String numericField(String text, Field field, String value, BitSet allowed) {
    StringBuilder out = new StringBuilder();
    for (String part : value.split(",", -1)) {
      Matcher matcher = PART.matcher(part);
      if (!matcher.matches()) {
        throw new IllegalArgumentException(
            "cron '"
                + text
                + "': the "
                + field.name()
                + " field '"
                + value
                + "' is not a value ("
                + field.min()
                + "-"
                + field.max()
                + "), a range (a-b), a step (*/n or a-b/n), a list of those (a,b) or *");
      }
      boolean star = matcher.group(1).equals("*");
      if (star && matcher.group(2) != null) {
        throw new IllegalArgumentException(
            "cron '" + text + "': the " + field.name() + " field '" + value + "' is not valid");
      }
      int from = star ? field.min() : number(text, field, matcher.group(1));
      int to =
          matcher.group(2) != null
              ? number(text, field, matcher.group(2))
              : star || matcher.group(3) != null ? field.max() : from;
      if (to < from) {
        throw new IllegalArgumentException(
            "cron '"
                + text
                + "': the "
                + field.name()
                + " range "
                + part
                + " runs backwards (write the smaller value first; "
                + field.name()
                + " is "
                + field.min()
                + "-"
                + field.max()
                + ")");
      }
      int step = 1;
      if (matcher.group(3) != null) {
        step = Integer.parseInt(matcher.group(3));
        if (step < 1 || step > field.max() - field.min() + 1) {
          throw new IllegalArgumentException(
              "cron '"
                  + text
                  + "': the "
                  + field.name()
                  + " step is "
                  + step
                  + ", outside 1-"
                  + (field.max() - field.min() + 1));
        }
      }
      for (int v = from; v <= to; v += step) {
        // Sunday is 0 and 7.
        allowed.set(field == DAY_OF_WEEK && v == 7 ? 0 : v);
      }
      if (!out.isEmpty()) {
        out.append(',');
      }
      if (star) {
        out.append('*');
      } else {
        out.append(from);
        if (matcher.group(2) != null) {
          out.append('-').append(to);
        }
      }
      if (matcher.group(3) != null) {
        out.append('/').append(step);
      }
    }
    return out.toString();
  }

  private static int number(String text, Field field, String token) {
    int at = field.names().indexOf(token.toUpperCase(Locale.ROOT));
    if (at >= 0) {
      return field == MONTH ? at + 1 : at;
    }
    int number;
    try {
      number = Integer.parseInt(token);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "cron '"
              + text
              + "': the "
              + field.name()
              + " field has '"
              + token
              + "', which is not a number "
              + field.min()
              + "-"
              + field.max()
              + (field.names().isEmpty()
                  ? ""
                  : " or a name (" + String.join(", ", field.names()) + ")"));
    }
    if (number < field.min() || number > field.max()) {
      throw new IllegalArgumentException(
          "cron '"
              + text
              + "': "
              + field.name()
              + " is "
              + number
              + ", outside "
              + field.min()
              + "-"
              + field.max());
    }
    return number;
  }

  /** Whether some allowed month has some allowed day of month (February has a 29th). */
  private static boolean anyDayOccurs(BitSet days, BitSet months) {
    for (int m = months.nextSetBit(1); m >= 1; m = months.nextSetBit(m + 1)) {
      if (days.nextSetBit(1) <= Month.of(m).maxLength()) {
        return true;
      }
    }
    return false;
  }

  /** The expression as given, its whitespace collapsed. */
  public String text() {
    return text;
  }

  /** 5 or 6. */
  public int fieldCount() {
    return fieldCount;
  }

  /**
   * The first fire strictly after the given instant on the zone's wall clock, under the
   * daylight-saving policy above; empty when it never fires again.
   */
  public Optional<Instant> next(Instant after, ZoneId zone) {
    ZoneRules rules = zone.getRules();
    LocalDateTime local = LocalDateTime.ofInstant(after, zone).truncatedTo(ChronoUnit.SECONDS);
    // Matching runs on the wall clock (local times as if in UTC, where no hour is skipped or
    // repeated); each match is then placed in the zone. A few steps at most: a match in the
    // second pass of a repeated hour is skipped, as are the matches of one gap after its fire.
    for (int i = 0; i < 10_000; i++) {
      Optional<ZonedDateTime> match = execution.nextExecution(local.atZone(ZoneOffset.UTC));
      if (match.isEmpty()) {
        return Optional.empty();
      }
      LocalDateTime candidate = match.get().toLocalDateTime();
      List<ZoneOffset> offsets = rules.getValidOffsets(candidate);
      Instant at;
      if (offsets.isEmpty()) {
        ZoneOffsetTransition gap = rules.getTransition(candidate);
        at = gap.getInstant();
      } else {
        at = offsets.stream().map(candidate::toInstant).min(Instant::compareTo).orElseThrow();
      }
      if (at.isAfter(after)) {
        return Optional.of(at);
      }
      local = candidate;
    }
    return Optional.empty();
  }

  @Override
  public boolean equals(Object other) {
    return other instanceof CronExpression that && text.equals(that.text);
  }

  @Override
  public int hashCode() {
    return text.hashCode();
  }

  @Override
  public String toString() {
    return text;
  }
}
