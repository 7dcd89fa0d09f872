package dev.toolhost.memory;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class InProcessWorkingMemoryTest extends WorkingMemoryContract {

  @Override
  protected WorkingMemory open() {
    return new InProcessWorkingMemory();
  }

  @Test
  void expiryFollowsTheGivenClockAndExpiredEntriesAreSweptOut() {
    AtomicReference<Instant> now = new AtomicReference<>(Instant.parse("2026-01-01T00:00:00Z"));
    InstantSource clock = now::get;
    try (InProcessWorkingMemory clocked = new InProcessWorkingMemory(clock)) {
      clocked.put("session/s/a", "a", Duration.ofSeconds(10), "x");
      now.set(now.get().plusSeconds(9));
      assertThat(clocked.get("session/s/a")).isPresent();

      now.set(now.get().plusSeconds(1));
      assertThat(clocked.get("session/s/a")).isEmpty();
      assertThat(clocked.remove("session/s/a")).isFalse();

      clocked.put("session/s/b", "b", Duration.ofSeconds(10), "x");
      now.set(now.get().plusSeconds(120));
      clocked.put("session/s/c", "c", Duration.ofSeconds(10), "x");
      assertThat(clocked.removeAll("")).isEqualTo(1);
    }
  }
}
