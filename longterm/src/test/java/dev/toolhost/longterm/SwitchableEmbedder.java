package dev.toolhost.longterm;

import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The real bundled model behind a switch that makes it fail, as an endpoint that is down does: the
 * fault the tests inject, with real vectors whenever it is on.
 */
final class SwitchableEmbedder implements Embedder {

  private static final MiniLmEmbedder MODEL = new MiniLmEmbedder();

  final AtomicBoolean failing = new AtomicBoolean();
  final AtomicInteger calls = new AtomicInteger();
  private final String model;

  SwitchableEmbedder() {
    this(MiniLmEmbedder.MODEL);
  }

  /** The bundled model under another name, as a change of model looks to the store. */
  SwitchableEmbedder(String model) {
    this.model = model;
  }

  @Override
  public String model() {
    return model;
  }

  @Override
  public int dimension() {
    return MODEL.dimension();
  }

  @Override
  public List<float[]> embed(List<String> texts) {
    calls.incrementAndGet();
    if (failing.get()) {
      throw new EmbedderException("connection refused");
    }
    return MODEL.embed(texts);
  }
}
