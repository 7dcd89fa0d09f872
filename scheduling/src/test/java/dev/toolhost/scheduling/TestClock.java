package dev.toolhost.scheduling;

import java.time.Instant;
import java.time.InstantSource;
import java.util.concurrent.atomic.AtomicReference;

/** A clock the test sets: the scheduler's "now". */
final class TestClock implements InstantSource {

  private final AtomicReference<Instant> now;

  TestClock(Instant start) {
    this.now = new AtomicReference<>(start);
  }

  void set(Instant instant) {
    now.set(instant);
  }

  @Override
  public Instant instant() {
    return now.get();
  }
}
