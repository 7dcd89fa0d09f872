package dev.toolhost.bus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

class CancellationsTest {

  @Test
  void aCancelInterruptsTheRunningThreadAndEndClearsTheInterruption() throws Exception {
    Cancellations cancellations = new Cancellations();
    AtomicBoolean sawIt = new AtomicBoolean();
    AtomicBoolean clearedAfter = new AtomicBoolean();
    java.util.concurrent.CountDownLatch running = new java.util.concurrent.CountDownLatch(1);
    Thread thread =
        Thread.ofVirtual()
            .start(
                () -> {
                  assertThat(cancellations.start("k")).isTrue();
                  running.countDown();
                  try {
                    Thread.sleep(Duration.ofSeconds(30));
                  } catch (InterruptedException e) {
                    sawIt.set(true);
                    Thread.currentThread().interrupt();
                  }
                  assertThat(cancellations.end("k")).isTrue();
                  clearedAfter.set(!Thread.currentThread().isInterrupted());
                });
    running.await();
    assertThat(cancellations.cancel("k", Instant.now().plusSeconds(30))).isTrue();
    assertThat(thread.join(Duration.ofSeconds(10))).isTrue();
    assertThat(sawIt).isTrue();
    assertThat(clearedAfter).isTrue();
  }

  @Test
  void aCallCancelledBeforeItStartsDoesNotStartAndOneThatEndedIsNotInterrupted() {
    Cancellations cancellations = new Cancellations();
    assertThat(cancellations.cancel("early", Instant.now().plusSeconds(30))).isFalse();
    assertThat(cancellations.start("early")).isFalse();
    assertThat(cancellations.start("done")).isTrue();
    assertThat(cancellations.end("done")).isFalse();
    assertThat(cancellations.cancel("done", Instant.now().plusSeconds(30))).isFalse();
    assertThat(Thread.currentThread().isInterrupted()).isFalse();
  }

  @Test
  void cancelledKeysAreBoundedAndForgottenAfterTheirTime() {
    Cancellations cancellations = new Cancellations();
    cancellations.cancel("past", Instant.now().minusSeconds(1));
    for (int i = 0; i < Cancellations.LIMIT + 5; i++) {
      cancellations.cancel("k" + i, Instant.now().plusSeconds(60));
    }
    assertThat(cancellations.remembered()).isEqualTo(Cancellations.LIMIT);
    assertThat(cancellations.cancelled("past")).isFalse();
    assertThat(cancellations.cancelled("k0")).isFalse();
    assertThat(cancellations.cancelled("k" + (Cancellations.LIMIT + 4))).isTrue();
  }

  @Test
  void aCancelThatIsNotOneIsRefusedSayingWhy() {
    assertThatThrownBy(() -> CallCancel.parse("{\"type\":\"cancel\",\"deadline\":\"x\"}"))
        .hasMessageContaining("call_key");
    assertThatThrownBy(() -> CallCancel.parse("{\"type\":\"cancel\",\"call_key\":\"abc\"}"))
        .hasMessageContaining("deadline");
    assertThatThrownBy(() -> CallCancel.parse("{\"call_key\":\"abc\"}"))
        .hasMessageContaining("type");
    CallCancel cancel = new CallCancel("abc", "call_1", Instant.parse("2026-11-21T23:00:00Z"));
    assertThat(CallCancel.parse(cancel.message().body())).isEqualTo(cancel);
  }
}
