package dev.toolhost.scheduling;

import java.time.Instant;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;

/**
 * A pinned cron is a six-field cron expression that matches one second of the year, in a zone: the
 * schedule of a test's one-time task that fires soon and once. Shared with other modules' tests in
 * this module's test jar.
 */
public final class PinnedCron {

  private PinnedCron() {}

  /** The six-field cron of that second, in that zone. */
  public static String at(Instant second, ZoneId zone) {
    ZonedDateTime local = second.atZone(zone);
    return "%d %d %d %d %d *"
        .formatted(
            local.getSecond(),
            local.getMinute(),
            local.getHour(),
            local.getDayOfMonth(),
            local.getMonthValue());
  }

  /**
   * A second at least four seconds ahead, for a task pinned to it: a pinned cron whose second has
   * passed by the time it is stored next fires a year later, so the margin must outlast a slow
   * schedule call on a loaded machine.
   */
  public static Instant dueSoon() {
    return Instant.now().plusSeconds(5).truncatedTo(ChronoUnit.SECONDS);
  }
}
