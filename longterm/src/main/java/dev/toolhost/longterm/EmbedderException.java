package dev.toolhost.longterm;

/** An embedder exception says an embedder could not embed text now; it may work later. */
public final class EmbedderException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  /** An exception with the given message. */
  public EmbedderException(String message) {
    super(message);
  }

  /** An exception with the given message and cause. */
  public EmbedderException(String message, Throwable cause) {
    super(message, cause);
  }
}
