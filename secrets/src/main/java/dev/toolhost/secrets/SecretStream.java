package dev.toolhost.secrets;

import dev.toolhost.core.Redactor;
import java.util.ArrayList;
import java.util.List;

/**
 * A secret stream redacts one text given in chunks, so that a secret split across two chunks is
 * still found. It holds back the last {@link #HOLD} characters of what it was given (longer than
 * any one-line secret), everything from an unfinished PEM block's {@code -----BEGIN} on, and an
 * encoded run longer than that which reaches the end, until the next chunk or the end shows what
 * they are; and it scans each part with the {@link #CONTEXT} characters that went before it, so
 * that a rule that needs its keyword ({@code api_key = ...}) finds a secret whose keyword was in
 * the part already passed on.
 *
 * <p>What it returns, joined, is the redaction of the whole text, up to the marker of a secret that
 * started in a part already passed on (its rest is redacted as its own finding). Not thread-safe:
 * one stream, one sequence of chunks.
 */
final class SecretStream implements Redactor.Stream {

  /** How many characters are held back for the next chunk. */
  static final int HOLD = 512;

  /** How many characters already passed on are scanned again as context. */
  static final int CONTEXT = 256;

  /** The most an unfinished PEM block holds back before it is passed on anyway. */
  static final int MAX_BLOCK = 64 * 1024;

  private final SecretScanner scanner;
  private final StringBuilder pending = new StringBuilder();
  private String context = "";

  /** Where the encoded run that reaches the end of the pending text starts. */
  private int run;

  SecretStream(SecretScanner scanner) {
    this.scanner = scanner;
  }

  @Override
  public String push(String chunk) {
    int length = pending.length();
    pending.append(chunk);
    int i = chunk.length();
    while (i > 0 && encoded(chunk.charAt(i - 1))) {
      i--;
    }
    if (i > 0) {
      run = length + i;
    }
    int safe = pending.length() - HOLD;
    int begin = unfinishedBlock();
    if (begin >= 0 && pending.length() < MAX_BLOCK) {
      safe = Math.min(safe, begin);
    }
    // An encoded run (a key base64-encoded on one line) that reaches the end may go on in the next
    // chunk, and is longer than what is held back: it is held whole, as a PEM block is.
    if (pending.length() - run > HOLD && pending.length() < MAX_BLOCK) {
      safe = Math.min(safe, run);
    }
    return safe <= 0 ? "" : emit(safe, false);
  }

  /**
   * Where the last PEM block of the pending text begins when its END line is not whole yet, or -1:
   * "-----END" alone is not the end, for the rest of the line ("RSA PRIVATE KEY-----") is what the
   * rule needs to see the key. Looked for as the scanner reads the text: in its folded form when it
   * holds characters that hide a token (a block written in full-width forms is still a block).
   */
  private int unfinishedBlock() {
    String text = pending.toString();
    FoldedText folded = FoldedText.hides(text) ? FoldedText.of(text) : null;
    String view = folded == null ? text : folded.text();
    // The private-key rule ignores case: so does the hold.
    int begin = view.toUpperCase(java.util.Locale.ROOT).lastIndexOf("-----BEGIN");
    if (begin < 0) {
      return -1;
    }
    int end = view.indexOf("-----END", begin);
    if (end >= 0 && view.indexOf("-----", end + "-----END".length()) >= 0) {
      return -1;
    }
    return folded == null ? begin : folded.starts()[begin];
  }

  /** Whether the character may be part of a base64, hex, percent- or unicode-escaped run. */
  private static boolean encoded(char c) {
    return c >= 'A' && c <= 'Z'
        || c >= 'a' && c <= 'z'
        || c >= '0' && c <= '9'
        || c == '+'
        || c == '/'
        || c == '_'
        || c == '-'
        || c == '='
        || c == '%'
        || c == '\\'
        // A JWT's parts are joined by dots: its run goes on through them.
        || c == '.'
        // A zero-width space or a full-width letter hides nothing from the scan of a folded text.
        || FoldedText.hiding(c);
  }

  @Override
  public String finish() {
    return emit(pending.length(), true);
  }

  /** Redacts and passes on the pending text up to {@code upTo}, or less if a secret crosses it. */
  private String emit(int upTo, boolean last) {
    String text = context + pending;
    int offset = context.length();
    List<Finding> findings = scanner.scan(text);
    int cut = offset + upTo;
    if (!last) {
      for (Finding finding : findings) {
        if (finding.start() < cut && finding.end() > cut) {
          cut = Math.max(offset, finding.start());
        }
      }
    }
    if (cut <= offset) {
      return "";
    }
    List<Finding> passed = new ArrayList<>();
    for (Finding finding : findings) {
      if (finding.end() > offset && finding.start() < cut) {
        // One that began in the context was passed on up to there; its rest goes now.
        passed.add(
            new Finding(
                finding.rule(),
                Math.max(offset, finding.start()) - offset,
                Math.min(cut, finding.end()) - offset,
                finding.encoding(),
                finding.known()));
      }
    }
    String out = pending.substring(0, cut - offset);
    String redacted = SecretScanner.apply(out, passed);
    String emitted = context + out;
    context = emitted.substring(Math.max(0, emitted.length() - CONTEXT));
    pending.delete(0, cut - offset);
    run = Math.max(0, run - (cut - offset));
    return redacted;
  }
}
