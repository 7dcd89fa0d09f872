package dev.toolhost.longterm;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Reads of the Lucene store beside its writes: a search never waits for the index's thread (a
 * commit, a reopen, the write of recall counts), and recall counts stay exact while they move from
 * memory into the index.
 */
class LuceneRecallTest {

  private static final Owner ALICE = Owner.of("alice");
  private static final Instant START = Instant.parse("2026-01-01T00:00:00Z");

  @TempDir Path directory;

  private static Memory memory(String id, String content) {
    return new Memory(
        id,
        "alice",
        Optional.empty(),
        MemoryType.FACT,
        content,
        0.6,
        Optional.empty(),
        START,
        START,
        0,
        List.of());
  }

  private static float[] vector(int axis) {
    float[] vector = new float[384];
    vector[axis] = 1;
    return vector;
  }

  @Test
  void searchesAnswerWhileTheIndexThreadIsHeld() throws Exception {
    try (LuceneMemoryStore store = LuceneMemoryStore.open(directory, Duration.ofHours(1));
        ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
      store.save(
          memory("kept", "The user's locker code is 4711."),
          Optional.of(new MemoryStore.Vector("model/384", vector(3))));
      store.accessed(ALICE, List.of("kept"), START.plusSeconds(5));
      CountDownLatch held = new CountDownLatch(1);
      CountDownLatch release = new CountDownLatch(1);
      CompletableFuture<Void> holder =
          CompletableFuture.runAsync(
              () ->
                  store.onIo(
                      () -> {
                        held.countDown();
                        try {
                          release.await(30, TimeUnit.SECONDS);
                        } catch (InterruptedException e) {
                          Thread.currentThread().interrupt();
                        }
                        return null;
                      }),
              threads);
      try {
        assertThat(held.await(10, TimeUnit.SECONDS)).isTrue();
        CompletableFuture<List<String>> reads =
            CompletableFuture.supplyAsync(
                () -> {
                  store.accessed(ALICE, List.of("kept"), START.plusSeconds(6));
                  return List.of(
                      store.fullText(ALICE, "locker", 10, Optional.empty()).getFirst(),
                      store
                          .nearest(
                              ALICE,
                              new MemoryStore.Vector("model/384", vector(3)),
                              10,
                              Optional.empty())
                          .getFirst(),
                      String.valueOf(store.get(ALICE, List.of("kept")).getFirst().accessCount()),
                      String.valueOf(store.recent(ALICE, 10, Optional.empty()).size()));
                },
                threads);

        assertThat(reads.get(10, TimeUnit.SECONDS)).containsExactly("kept", "kept", "2", "1");
      } finally {
        release.countDown();
        holder.get(30, TimeUnit.SECONDS);
      }
    }
  }

  @Test
  void aSaveIsFoundByTheFirstSearchAfterItReturns() {
    try (LuceneMemoryStore store = LuceneMemoryStore.open(directory, Duration.ofHours(1))) {
      for (int i = 0; i < 50; i++) {
        store.save(memory("m" + i, "Memory number word" + i + "."), Optional.empty());

        assertThat(store.fullText(ALICE, "word" + i, 10, Optional.empty()))
            .containsExactly("m" + i);
      }
      assertThat(store.delete(ALICE, "m7")).isTrue();
      assertThat(store.fullText(ALICE, "word7", 10, Optional.empty())).isEmpty();
    }
  }

  @Test
  void recallCountsStayExactWhileTheyAreWrittenIntoTheIndex() {
    try (LuceneMemoryStore store = LuceneMemoryStore.open(directory, Duration.ofHours(1))) {
      store.save(memory("kept", "The user's locker code is 4711."), Optional.empty());
      store.accessed(ALICE, List.of("kept"), START.plusSeconds(10));
      store.accessed(ALICE, List.of("kept"), START.plusSeconds(20));
      assertThat(store.get(ALICE, List.of("kept")).getFirst().accessCount()).isEqualTo(2);

      store.writeRecalls();
      assertThat(store.get(ALICE, List.of("kept")).getFirst().accessCount()).isEqualTo(2);

      store.accessed(ALICE, List.of("kept"), START.plusSeconds(30));
      assertThat(store.get(ALICE, List.of("kept")).getFirst().accessCount()).isEqualTo(3);
      store.writeRecalls();
      store.writeRecalls();
      Memory stored = store.get(ALICE, List.of("kept")).getFirst();
      assertThat(stored.accessCount()).isEqualTo(3);
      assertThat(stored.accessedAt()).isEqualTo(START.plusSeconds(30));

      // A new vector replaces the document: it keeps the counts the index has, and adds none.
      store.accessed(ALICE, List.of("kept"), START.plusSeconds(40));
      store.embedded("kept", new MemoryStore.Vector("model/384", vector(1)));
      assertThat(store.get(ALICE, List.of("kept")).getFirst().accessCount()).isEqualTo(4);
    }

    try (LuceneMemoryStore store = LuceneMemoryStore.open(directory)) {
      Memory stored = store.get(ALICE, List.of("kept")).getFirst();
      assertThat(stored.accessCount()).isEqualTo(4);
      assertThat(stored.accessedAt()).isEqualTo(START.plusSeconds(40));
    }
  }
}
