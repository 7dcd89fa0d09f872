package dev.toolhost.core;

/**
 * A redactor removes secrets from text on its way out of the host: the secrets it knows by value
 * and those its rules recognise, in plain and encoded forms, each replaced by a marker such as
 * {@code [REDACTED:github-pat]}. Core defines it so that every path out (tool results, the agent
 * loop's model requests and chat stream, logs) can call the one scanner the host runs, without
 * depending on the module that implements it.
 *
 * <p>Implementations are thread-safe; a {@link Stream} is for one sequence of chunks.
 */
public interface Redactor {

  /** A redactor that changes nothing: the host's when it runs no secret scanner. */
  Redactor NONE =
      new Redactor() {
        @Override
        public String redact(String text) {
          return text;
        }

        @Override
        public Stream stream() {
          return new Stream() {
            @Override
            public String push(String chunk) {
              return chunk;
            }

            @Override
            public String finish() {
              return "";
            }
          };
        }
      };

  /** The text with every secret found in it replaced by its marker. */
  String redact(String text);

  /** A stream that redacts a text given in chunks, a secret split across two of them included. */
  Stream stream();

  /**
   * A redacting stream is one text given in chunks (a streamed tool result, a model's answer sent
   * to a chat client): it holds back the end of what it was given until it knows no secret starts
   * there, so that what it returns, joined, is the redacted whole. Not thread-safe.
   */
  interface Stream {

    /** Takes the next chunk and returns the redacted text that is now safe to pass on. */
    String push(String chunk);

    /** Returns the redacted rest, once the last chunk was pushed. */
    String finish();
  }
}
