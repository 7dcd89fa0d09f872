package dev.toolhost.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class EpochClockTest {

  @Test
  void derivedTimeStaysWithinAMillisecondOfTheWallClock() {
    for (int i = 0; i < 1_000; i++) {
      long before = nanosOf(Instant.now());
      long derived = EpochClock.epochNanos(System.nanoTime());
      long after = nanosOf(Instant.now());
      assertThat(derived).isBetween(before - 1_000_000, after + 1_000_000);
    }
  }

  @Test
  void anInstantBeforeTheReadingHasPassedAndOneAfterItHasNot() {
    long reading = System.nanoTime();
    Instant now = Instant.ofEpochSecond(0, EpochClock.epochNanos(reading));
    assertThat(EpochClock.passed(now.minus(Duration.ofMillis(5)), reading)).isTrue();
    assertThat(EpochClock.passed(now, reading)).isTrue();
    assertThat(EpochClock.passed(now.plusNanos(1), reading)).isFalse();
    assertThat(EpochClock.passed(now.plus(Duration.ofDays(3650)), reading)).isFalse();
    assertThat(EpochClock.passed(Instant.EPOCH, reading)).isTrue();
    assertThat(EpochClock.passed(Instant.MAX, reading)).isFalse();
    assertThat(EpochClock.passed(Instant.MIN, reading)).isTrue();
  }

  private static long nanosOf(Instant instant) {
    return instant.getEpochSecond() * 1_000_000_000L + instant.getNano();
  }
}
