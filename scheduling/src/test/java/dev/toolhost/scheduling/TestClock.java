package dev.toolhost.scheduling;

import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A clock the test sets, which then runs on at real speed: the scheduler's "now". It runs on
 * because db-scheduler's waits read the same clock, and a frozen one would keep them waiting.
 */
final class TestClock implements InstantSource {

  private record Setting(Instant at, long nanos) {}

  private final AtomicReference<Setting> setting;

  TestClock(Instant start) {
    this.setting = new AtomicReference<>(new Setting(start, System.nanoTime()));
  }

  void set(Instant instant) {
    setting.set(new Setting(instant, System.nanoTime()));
  }

  @Override
  public Instant instant() {
    Setting current = setting.get();
    return current.at().plus(Duration.ofNanos(System.nanoTime() - current.nanos()));
  }
}
