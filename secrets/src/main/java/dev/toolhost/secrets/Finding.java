package dev.toolhost.secrets;

/**
 * A finding is one secret found in a text: where it is, and what found it. It never holds the
 * secret itself, so it may be logged and counted.
 *
 * @param rule the id of the rule that recognised it, or the name of the known secret it is
 * @param start where its span starts in the scanned text (the encoded span, for an encoded secret)
 * @param end where its span ends, exclusive
 * @param encoding how the secret was written there
 * @param known whether it is a secret the host holds, found by its value
 */
public record Finding(String rule, int start, int end, Encoding encoding, boolean known) {

  /** A finding of a rule's match. */
  public Finding(String rule, int start, int end, Encoding encoding) {
    this(rule, start, end, encoding, false);
  }

  /** The length of its span. */
  public int length() {
    return end - start;
  }

  /** How a secret was written where it was found. */
  public enum Encoding {
    PLAIN,
    BASE64,
    HEX,
    PERCENT,
    UNICODE_ESCAPES
  }
}
