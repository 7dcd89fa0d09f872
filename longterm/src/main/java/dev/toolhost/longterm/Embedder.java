package dev.toolhost.longterm;

import java.util.List;

/**
 * An embedder turns text into vectors whose cosine similarity follows meaning: the bundled
 * all-MiniLM-L6-v2 ({@link MiniLmEmbedder}) or an OpenAI-compatible endpoint ({@link
 * EndpointEmbedder}).
 *
 * <p>Thread-safe. A failure is an {@link EmbedderException}: long-term memory then saves without a
 * vector and embeds later, and recall falls back to full text and associations.
 */
public interface Embedder extends AutoCloseable {

  /** The model's name, stored with the index: a different name re-embeds every memory. */
  String model();

  /** The length of every vector this embedder gives. */
  int dimension();

  /**
   * The vectors of the given texts, in their order.
   *
   * @throws EmbedderException when the model cannot embed them now
   */
  List<float[]> embed(List<String> texts);

  /** Releases the model; nothing by default. */
  @Override
  default void close() {}
}
