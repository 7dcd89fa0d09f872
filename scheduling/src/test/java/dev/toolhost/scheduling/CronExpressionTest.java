package dev.toolhost.scheduling;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Next-fire sequences of cron expressions, pinned, and the refused forms with their messages. */
class CronExpressionTest {

  private static final ZoneId UTC = ZoneOffset.UTC;
  private static final ZoneId NEW_YORK = ZoneId.of("America/New_York");

  /** The next {@code count} fires after the instant, as offset date-times in the zone. */
  private static List<String> fires(String cron, String after, ZoneId zone, int count) {
    CronExpression expression = CronExpression.parse(cron);
    List<String> fires = new ArrayList<>();
    Instant at = OffsetDateTime.parse(after).toInstant();
    for (int i = 0; i < count; i++) {
      at = expression.next(at, zone).orElseThrow();
      fires.add(at.atZone(zone).toOffsetDateTime().toString());
    }
    return fires;
  }

  @Test
  void firstOfTheMonthAndEveryMondayAreOredAsUnixCronDoes() {
    assertThat(fires("0 9 1 * 1", "2026-03-02T10:00:00Z", UTC, 6))
        .containsExactly(
            "2026-03-09T09:00Z",
            "2026-03-16T09:00Z",
            "2026-03-23T09:00Z",
            "2026-03-30T09:00Z",
            "2026-04-01T09:00Z",
            "2026-04-06T09:00Z");
  }

  @Test
  void aDayFieldStartingWithAStarIsAndedAsVixieCronDoes() {
    assertThat(fires("0 9 */2 * 1", "2026-03-01T10:00:00Z", UTC, 4))
        .containsExactly(
            "2026-03-09T09:00Z", "2026-03-23T09:00Z", "2026-04-13T09:00Z", "2026-04-27T09:00Z");
    assertThat(fires("0 9 1-31/2 * 1", "2026-03-01T10:00:00Z", UTC, 4))
        .containsExactly(
            "2026-03-02T09:00Z", "2026-03-03T09:00Z", "2026-03-05T09:00Z", "2026-03-07T09:00Z");
  }

  @Test
  void aFiveFieldExpressionFiresEveryFifteenMinutesOnWeekdays() {
    assertThat(fires("*/15 9-10 * * MON-FRI", "2026-11-27T10:40:00Z", UTC, 5))
        .containsExactly(
            "2026-11-27T10:45Z",
            "2026-11-30T09:00Z",
            "2026-11-30T09:15Z",
            "2026-11-30T09:30Z",
            "2026-11-30T09:45Z");
  }

  @Test
  void aSixFieldExpressionHasSecondsFirst() {
    assertThat(fires("*/20 0 9 * * 1-5", "2026-11-27T08:59:59Z", UTC, 4))
        .containsExactly(
            "2026-11-27T09:00Z",
            "2026-11-27T09:00:20Z",
            "2026-11-27T09:00:40Z",
            "2026-11-30T09:00Z");
  }

  @Test
  void aDailyTaskInASkippedHourFiresOnceAtTheEndOfTheGap() {
    // 2026-03-08: New York's clocks jump from 02:00 to 03:00.
    assertThat(fires("30 2 * * *", "2026-03-06T12:00:00-05:00", NEW_YORK, 4))
        .containsExactly(
            "2026-03-07T02:30-05:00",
            "2026-03-08T03:00-04:00",
            "2026-03-09T02:30-04:00",
            "2026-03-10T02:30-04:00");
  }

  @Test
  void everyFireInsideTheGapCollapsesToOne() {
    assertThat(fires("*/20 2 * * *", "2026-03-08T01:50:00-05:00", NEW_YORK, 2))
        .containsExactly("2026-03-08T03:00-04:00", "2026-03-09T02:00-04:00");
  }

  @Test
  void aDailyTaskInARepeatedHourFiresOnceAtItsFirstOccurrence() {
    // 2026-11-01: New York's clocks go back from 02:00 to 01:00.
    assertThat(fires("30 1 * * *", "2026-10-30T12:00:00-04:00", NEW_YORK, 4))
        .containsExactly(
            "2026-10-31T01:30-04:00",
            "2026-11-01T01:30-04:00",
            "2026-11-02T01:30-05:00",
            "2026-11-03T01:30-05:00");
  }

  @Test
  void anHourlyTaskFiresOnceInTheRepeatedHour() {
    assertThat(fires("0 * * * *", "2026-11-01T00:30:00-04:00", NEW_YORK, 3))
        .containsExactly(
            "2026-11-01T01:00-04:00", "2026-11-01T02:00-05:00", "2026-11-01T03:00-05:00");
  }

  @Test
  void aFireAskedForFromTheSecondPassOfTheRepeatedHourIsNotRepeated() {
    // 01:20 EST is after 01:45 EDT: the 01:45 of that day has fired already.
    assertThat(fires("45 1 * * *", "2026-11-01T01:20:00-05:00", NEW_YORK, 1))
        .containsExactly("2026-11-02T01:45-05:00");
  }

  @Test
  void aLeapDayExpressionFiresOnlyInLeapYears() {
    assertThat(fires("0 12 29 2 *", "2026-11-25T00:00:00Z", UTC, 3))
        .containsExactly("2028-02-29T12:00Z", "2032-02-29T12:00Z", "2036-02-29T12:00Z");
  }

  @Test
  void namesStandForNumbersAndSevenIsSunday() {
    assertThat(fires("0 8 * JAN,FEB 7", "2026-12-31T00:00:00Z", UTC, 2))
        .containsExactly("2027-01-03T08:00Z", "2027-01-10T08:00Z");
  }

  @Test
  void anExpressionThatNeverFiresIsRefusedNamingItsFields() {
    assertThatThrownBy(() -> CronExpression.parse("0 0 30 2 *"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "cron '0 0 30 2 *' never fires: no month it allows (month field '2') has a day it"
                + " allows (day-of-month field '30')");
  }

  @Test
  void aValueOutOfRangeIsRefusedNamingTheFieldAndItsRange() {
    assertThatThrownBy(() -> CronExpression.parse("61 * * * *"))
        .hasMessage("cron '61 * * * *': minute is 61, outside 0-59");
    assertThatThrownBy(() -> CronExpression.parse("0 24 * * *"))
        .hasMessage("cron '0 24 * * *': hour is 24, outside 0-23");
    assertThatThrownBy(() -> CronExpression.parse("0 0 0 * *"))
        .hasMessage("cron '0 0 0 * *': day-of-month is 0, outside 1-31");
    assertThatThrownBy(() -> CronExpression.parse("0 0 1 13 *"))
        .hasMessage("cron '0 0 1 13 *': month is 13, outside 1-12");
    assertThatThrownBy(() -> CronExpression.parse("0 0 * * 8"))
        .hasMessage("cron '0 0 * * 8': day-of-week is 8, outside 0-7");
    assertThatThrownBy(() -> CronExpression.parse("60 0 9 * * *"))
        .hasMessage("cron '60 0 9 * * *': second is 60, outside 0-59");
  }

  @Test
  void theWrongFieldCountIsRefusedNamingTheFields() {
    assertThatThrownBy(() -> CronExpression.parse("0 9 * *"))
        .hasMessage(
            "cron '0 9 * *' has 4 fields; expected 5 (minute hour day-of-month month day-of-week)"
                + " or 6 (second minute hour day-of-month month day-of-week)");
    assertThatThrownBy(() -> CronExpression.parse("0 0 9 * * * 2027"))
        .hasMessageStartingWith("cron '0 0 9 * * * 2027' has 7 fields; expected 5");
  }

  @Test
  void malformedFieldsAreRefusedNamingTheField() {
    assertThatThrownBy(() -> CronExpression.parse("0 9 ? * *"))
        .hasMessage(
            "cron '0 9 ? * *': the day-of-month field '?' is not a value (1-31), a range (a-b), a"
                + " step (*/n or a-b/n), a list of those (a,b) or *");
    assertThatThrownBy(() -> CronExpression.parse("0 17-9 * * *"))
        .hasMessage(
            "cron '0 17-9 * * *': the hour range 17-9 runs backwards (write the smaller value"
                + " first; hour is 0-23)");
    assertThatThrownBy(() -> CronExpression.parse("*/0 * * * *"))
        .hasMessage("cron '*/0 * * * *': the minute step is 0, outside 1-60");
    assertThatThrownBy(() -> CronExpression.parse("0 9 * * FUNDAY"))
        .hasMessage(
            "cron '0 9 * * FUNDAY': the day-of-week field has 'FUNDAY', which is not a number"
                + " 0-7 or a name (SUN, MON, TUE, WED, THU, FRI, SAT)");
  }
}
