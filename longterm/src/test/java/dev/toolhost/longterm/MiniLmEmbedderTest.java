package dev.toolhost.longterm;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

class MiniLmEmbedderTest {

  private final MiniLmEmbedder model = new MiniLmEmbedder();

  private static double cosine(float[] a, float[] b) {
    double dot = 0;
    double normA = 0;
    double normB = 0;
    for (int i = 0; i < a.length; i++) {
      dot += a[i] * b[i];
      normA += a[i] * a[i];
      normB += b[i] * b[i];
    }
    return dot / Math.sqrt(normA * normB);
  }

  @Test
  void aTextIsNearerToOneOfTheSameMeaningThanToAnUnrelatedOne() {
    List<float[]> vectors =
        model.embed(
            List.of(
                "The user prefers dark mode in every editor.",
                "Dark themes are what this user likes in their editors.",
                "The invoice for March was paid by bank transfer."));

    assertThat(vectors).hasSize(3).allSatisfy(vector -> assertThat(vector).hasSize(384));
    assertThat(cosine(vectors.get(0), vectors.get(1)))
        .isGreaterThan(cosine(vectors.get(0), vectors.get(2)) + 0.2);
  }

  @Test
  void embeddingsMadeOnManyThreadsAtOnceAreTheOnesMadeOneAtATime() throws Exception {
    List<String> texts = new ArrayList<>();
    for (int i = 0; i < 16; i++) {
      texts.add("memory number " + i + " about the project's deadline and its owner");
    }
    List<float[]> alone = new ArrayList<>();
    for (String text : texts) {
      alone.add(model.embed(List.of(text)).getFirst());
    }

    List<Future<float[]>> together = new ArrayList<>();
    try (ExecutorService threads = Executors.newFixedThreadPool(8)) {
      for (String text : texts) {
        together.add(threads.submit(() -> model.embed(List.of(text)).getFirst()));
      }
      for (int i = 0; i < texts.size(); i++) {
        assertThat(together.get(i).get()).containsExactly(alone.get(i));
      }
    }
  }
}
