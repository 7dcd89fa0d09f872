package dev.toolhost.bus;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class InMemoryResultStoreTest {

  @Test
  void aFinishedCallIsAnsweredFromItsResultAndARunningOneIsReportedRunning() {
    try (InMemoryResultStore store = new InMemoryResultStore()) {
      assertThat(store.claim("g:1", Duration.ofSeconds(5))).isInstanceOf(ResultStore.Granted.class);
      assertThat(store.claim("g:1", Duration.ofSeconds(5))).isInstanceOf(ResultStore.Running.class);
      store.finish("g:1", "{}", Duration.ofMinutes(1));
      assertThat(store.claim("g:1", Duration.ofSeconds(5)))
          .isEqualTo(new ResultStore.Finished("{}"));
    }
  }

  @Test
  void manyLiveResultsAreAllKeptWhileNewCallsAreClaimed() {
    try (InMemoryResultStore store = new InMemoryResultStore()) {
      for (int i = 0; i < 50_000; i++) {
        store.claim("g:" + i, Duration.ofSeconds(30));
        store.finish("g:" + i, "r" + i, Duration.ofMinutes(10));
      }
      assertThat(store.claim("g:0", Duration.ofSeconds(5)))
          .isEqualTo(new ResultStore.Finished("r0"));
      assertThat(store.claim("g:49999", Duration.ofSeconds(5)))
          .isEqualTo(new ResultStore.Finished("r49999"));
    }
  }

  @Test
  void anExpiredResultLetsTheCallRunAgain() throws InterruptedException {
    try (InMemoryResultStore store = new InMemoryResultStore()) {
      store.claim("g:1", Duration.ofSeconds(5));
      store.finish("g:1", "{}", Duration.ofMillis(1));
      Thread.sleep(5);
      assertThat(store.claim("g:1", Duration.ofSeconds(5))).isInstanceOf(ResultStore.Granted.class);
    }
  }

  @Test
  void expiredResultsAreEvictedAsNewCallsAreClaimed() throws InterruptedException {
    try (InMemoryResultStore store = new InMemoryResultStore()) {
      for (int i = 0; i < 1_000; i++) {
        store.claim("old:" + i, Duration.ofMillis(1));
        store.finish("old:" + i, "r", Duration.ofMillis(1));
      }
      Thread.sleep(5);
      for (int i = 0; i < 1_000; i++) {
        store.claim("new:" + i, Duration.ofMinutes(1));
        store.finish("new:" + i, "r", Duration.ofMinutes(1));
      }
      // Every old entry went as the new ones came; every new one stays.
      assertThat(store.size()).isEqualTo(1_000);
      assertThat(store.claim("new:0", Duration.ofSeconds(5)))
          .isEqualTo(new ResultStore.Finished("r"));
    }
  }

  @Test
  void aResultKeptLongerThanItsClaimIsNotEvictedWhenTheClaimRunsOut() throws InterruptedException {
    try (InMemoryResultStore store = new InMemoryResultStore()) {
      store.claim("g:1", Duration.ofMillis(1));
      store.finish("g:1", "kept", Duration.ofMinutes(1));
      Thread.sleep(5);
      for (int i = 0; i < 100; i++) {
        store.claim("g:other" + i, Duration.ofMinutes(1));
      }
      assertThat(store.claim("g:1", Duration.ofSeconds(5)))
          .isEqualTo(new ResultStore.Finished("kept"));
    }
  }

  @Test
  void aRenewedClaimOutlivesItsFirstLeaseAndAnUnrenewedOneLapsesToTheNextClaimant()
      throws InterruptedException {
    try (InMemoryResultStore store = new InMemoryResultStore()) {
      // A lease of 1.5 s renewed every 500 ms: a renewal is late only after a second's stall (a
      // busy
      // machine's pause is less), and the four pauses (2 s) outlast the unrenewed lease.
      Duration lease = Duration.ofMillis(1_500);
      ResultStore.Granted kept = (ResultStore.Granted) store.claim("g:kept", lease);
      ResultStore.Granted lapsing = (ResultStore.Granted) store.claim("g:lapsing", lease);
      for (int i = 0; i < 4; i++) {
        Thread.sleep(500);
        assertThat(store.renew("g:kept", kept, lease)).isTrue();
      }
      assertThat(store.claim("g:kept", lease)).isInstanceOf(ResultStore.Running.class);
      ResultStore.Claim next = store.claim("g:lapsing", Duration.ofSeconds(5));
      assertThat(next).isInstanceOf(ResultStore.Granted.class).isNotEqualTo(lapsing);
      // The first holder lost it: it can neither renew nor release the new holder's claim.
      assertThat(store.renew("g:lapsing", lapsing, Duration.ofSeconds(5))).isFalse();
      store.release("g:lapsing", lapsing);
      assertThat(store.claim("g:lapsing", Duration.ofSeconds(5)))
          .isInstanceOf(ResultStore.Running.class);
    }
  }
}
