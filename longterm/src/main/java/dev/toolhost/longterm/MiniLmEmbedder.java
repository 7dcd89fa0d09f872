package dev.toolhost.longterm;

import dev.langchain4j.data.embedding.Embedding;
import dev.langchain4j.data.segment.TextSegment;
import dev.langchain4j.model.embedding.onnx.allminilml6v2q.AllMiniLmL6V2QuantizedEmbeddingModel;
import java.util.List;

/**
 * The MiniLM embedder is the bundled model: all-MiniLM-L6-v2, quantized, run by ONNX Runtime from
 * the model file inside its Maven artifact, so it needs no download and no network. 384 dimensions;
 * texts longer than the model's 256 word pieces are embedded from their start.
 *
 * <p>Present only when {@code toolhost-longterm-minilm} is on the class path ({@link #available}).
 * Loading the model takes about a second, on first use.
 */
public final class MiniLmEmbedder implements Embedder {

  /** The model's name as stored with an index. */
  public static final String MODEL = "all-minilm-l6-v2-q";

  private static final String CLASS =
      "dev.langchain4j.model.embedding.onnx.allminilml6v2q.AllMiniLmL6V2QuantizedEmbeddingModel";

  private volatile AllMiniLmL6V2QuantizedEmbeddingModel model;

  /** Whether the bundled model is on the class path. */
  public static boolean available() {
    try {
      Class.forName(CLASS, false, MiniLmEmbedder.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }

  @Override
  public String model() {
    return MODEL;
  }

  @Override
  public int dimension() {
    return 384;
  }

  @Override
  public List<float[]> embed(List<String> texts) {
    try {
      List<TextSegment> segments = texts.stream().map(TextSegment::from).toList();
      return loaded().embedAll(segments).content().stream().map(Embedding::vector).toList();
    } catch (RuntimeException e) {
      throw new EmbedderException("the bundled model failed: " + e.getMessage(), e);
    }
  }

  private AllMiniLmL6V2QuantizedEmbeddingModel loaded() {
    AllMiniLmL6V2QuantizedEmbeddingModel loaded = model;
    if (loaded == null) {
      synchronized (this) {
        if (model == null) {
          model = new AllMiniLmL6V2QuantizedEmbeddingModel();
        }
        loaded = model;
      }
    }
    return loaded;
  }
}
