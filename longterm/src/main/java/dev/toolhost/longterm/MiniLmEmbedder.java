package dev.toolhost.longterm;

import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import dev.langchain4j.data.embedding.Embedding;
import dev.langchain4j.data.segment.TextSegment;
import dev.langchain4j.model.embedding.onnx.AbstractInProcessEmbeddingModel;
import dev.langchain4j.model.embedding.onnx.OnnxBertBiEncoder;
import dev.langchain4j.model.embedding.onnx.PoolingMode;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.List;

/**
 * The MiniLM embedder is the bundled model: all-MiniLM-L6-v2, quantized, run by ONNX Runtime from
 * the model file inside its Maven artifact, so it needs no download and no network. 384 dimensions;
 * texts longer than the model's 256 word pieces are embedded from their start.
 *
 * <p>Each embedding runs on its caller's thread alone (ONNX Runtime's intra-op threads: one), so
 * that embeddings made at once (a recall beside a save, two users' recalls) run side by side on the
 * machine's cores instead of each asking for all of them. The runtime's default, a pool of threads
 * that spin while they wait for work, kept one thread at 65% of a core beside recalls and saves on
 * a machine of two cores, and recall's p50 was half as high again (BENCHMARKS.md, "Recall beside
 * saves on a quiet machine").
 *
 * <p>Present only when {@code toolhost-longterm-minilm} is on the class path ({@link #available}).
 * The model is loaded once per process, on first use, in about a second.
 */
public final class MiniLmEmbedder implements Embedder {

  /** The model's name as stored with an index. */
  public static final String MODEL = "all-minilm-l6-v2-q";

  private static final String MODEL_FILE = "all-minilm-l6-v2-q.onnx";
  private static final String TOKENIZER_FILE = "all-minilm-l6-v2-q-tokenizer.json";
  private static final String ENCODER = "dev.langchain4j.model.embedding.onnx.OnnxBertBiEncoder";

  /**
   * Whether the bundled model is on the class path: its two files and the encoder that runs them.
   */
  public static boolean available() {
    ClassLoader loader = MiniLmEmbedder.class.getClassLoader();
    if (loader.getResource(MODEL_FILE) == null || loader.getResource(TOKENIZER_FILE) == null) {
      return false;
    }
    try {
      Class.forName(ENCODER, false, loader);
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
      return Loaded.MODEL.embedAll(segments).content().stream().map(Embedding::vector).toList();
    } catch (RuntimeException | LinkageError e) {
      throw new EmbedderException("the bundled model failed: " + e.getMessage(), e);
    }
  }

  /** The model of the process, loaded when first asked for. */
  private static final class Loaded {
    static final Model MODEL = load();

    private static Model load() {
      ClassLoader loader = MiniLmEmbedder.class.getClassLoader();
      try (InputStream model = open(loader, MODEL_FILE);
          InputStream tokenizer = open(loader, TOKENIZER_FILE);
          OrtSession.SessionOptions options = new OrtSession.SessionOptions()) {
        options.setIntraOpNumThreads(1);
        options.setInterOpNumThreads(1);
        options.setExecutionMode(OrtSession.SessionOptions.ExecutionMode.SEQUENTIAL);
        OrtEnvironment environment = OrtEnvironment.getEnvironment();
        OrtSession session = environment.createSession(model.readAllBytes(), options);
        return new Model(new OnnxBertBiEncoder(environment, session, tokenizer, PoolingMode.MEAN));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      } catch (OrtException e) {
        throw new IllegalStateException("ONNX Runtime could not load the bundled model", e);
      }
    }

    private static InputStream open(ClassLoader loader, String name) throws IOException {
      InputStream in = loader.getResourceAsStream(name);
      if (in == null) {
        throw new IOException(name + " is not on the class path");
      }
      return in;
    }
  }

  /** The bundled model's encoder as an embedding model (several texts embedded in parallel). */
  private static final class Model extends AbstractInProcessEmbeddingModel {
    private final OnnxBertBiEncoder encoder;

    Model(OnnxBertBiEncoder encoder) {
      super(null);
      this.encoder = encoder;
    }

    @Override
    protected OnnxBertBiEncoder model() {
      return encoder;
    }

    @Override
    protected Integer knownDimension() {
      return 384;
    }
  }
}
