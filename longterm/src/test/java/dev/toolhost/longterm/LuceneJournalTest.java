package dev.toolhost.longterm;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Lucene store's journal: a change whose method returned survives a host that dies before
 * Lucene's commit. The dead host is a copy of the index's directory taken while the store is open
 * and has not committed (its commit interval is an hour), as the disk would be after a crash.
 */
class LuceneJournalTest {

  @TempDir Path live;
  @TempDir Path crashed;

  private static Memory memory(String id, String content) {
    Instant now = Instant.parse("2026-01-01T00:00:00Z");
    return new Memory(
        id,
        "alice",
        Optional.empty(),
        MemoryType.FACT,
        content,
        0.6,
        Optional.of("chat"),
        now,
        now,
        0,
        List.of());
  }

  @Test
  void savesDeletesAndVectorsWhoseCallsReturnedSurviveADeathBeforeLucenesCommit()
      throws IOException {
    float[] vector = new float[384];
    vector[7] = 1;
    try (LuceneMemoryStore store = LuceneMemoryStore.open(live, Duration.ofHours(1))) {
      store.save(memory("kept", "The user's locker code is 4711."), Optional.empty());
      store.save(memory("gone", "A memory deleted before the crash."), Optional.empty());
      store.delete(Owner.of("alice"), "gone");
      store.embedded("kept", new MemoryStore.Vector("model/384", vector));

      assertThat(Files.size(live.resolve(LuceneMemoryStore.JOURNAL))).isPositive();
      try (Stream<Path> files = Files.list(live)) {
        for (Path file : files.toList()) {
          Files.copy(file, crashed.resolve(file.getFileName()));
        }
      }
    }

    try (LuceneMemoryStore store = LuceneMemoryStore.open(crashed)) {
      assertThat(store.get(Owner.of("alice"), List.of("kept", "gone")))
          .extracting(Memory::content, Memory::source)
          .containsExactly(
              org.assertj.core.groups.Tuple.tuple(
                  "The user's locker code is 4711.", Optional.of("chat")));
      assertThat(store.fullText(Owner.of("alice"), "locker", 10, Optional.empty()))
          .containsExactly("kept");
      assertThat(
              store.nearest(
                  Owner.of("alice"),
                  new MemoryStore.Vector("model/384", vector),
                  10,
                  Optional.empty()))
          .containsExactly("kept");
      assertThat(Files.size(crashed.resolve(LuceneMemoryStore.JOURNAL))).isZero();
    }
  }

  @Test
  void skillsSavedAndDeletedSurviveADeathBeforeLucenesCommit() throws IOException {
    Instant at = Instant.parse("2026-01-01T00:00:00Z");
    try (LuceneMemoryStore store = LuceneMemoryStore.open(live, Duration.ofHours(1))) {
      store.saveSkill(new Skill("alice", "kept", "Kept.", "1. keep", at));
      store.saveSkill(new Skill("alice", "gone", "Gone.", "1. go", at));
      store.deleteSkill("alice", "gone");
      try (Stream<Path> files = Files.list(live)) {
        for (Path file : files.toList()) {
          Files.copy(file, crashed.resolve(file.getFileName()));
        }
      }
    }

    try (LuceneMemoryStore store = LuceneMemoryStore.open(crashed)) {
      assertThat(store.skills("alice"))
          .containsExactly(new Skill("alice", "kept", "Kept.", "1. keep", at));
    }
  }

  @Test
  void anInterruptedCallerNeitherLosesItsSaveNorBreaksTheIndex() {
    try (LuceneMemoryStore store = LuceneMemoryStore.open(live)) {
      Thread.currentThread().interrupt();
      store.save(memory("first", "Saved by a caller whose deadline passed."), Optional.empty());
      boolean stillInterrupted = Thread.interrupted();

      store.save(memory("second", "Saved after it."), Optional.empty());

      assertThat(stillInterrupted).isTrue();
      assertThat(store.get(Owner.of("alice"), List.of("first", "second"))).hasSize(2);
    }
  }
}
