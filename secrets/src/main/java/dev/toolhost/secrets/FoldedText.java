package dev.toolhost.secrets;

import java.text.Normalizer;
import java.util.Arrays;
import java.util.BitSet;

/**
 * A folded text is a text as the rules should read it: without the characters that hide a token
 * from them, and with look-alike forms folded to ASCII, each of its characters knowing the span of
 * the original text it came from, so that a match in the folded text redacts the whole hidden token
 * in the original and nothing around it.
 *
 * <p>Removed: the invisible format characters (Unicode category Cf: zero-width space, joiner and
 * non-joiner U+200B to U+200D, word joiner U+2060, byte order mark U+FEFF, soft hyphen U+00AD, the
 * bidirectional controls U+200E, U+200F, U+202A to U+202E and U+2066 to U+2069, the tag characters
 * U+E0000 to U+E007F, and the rest of the category); the variation selectors (U+FE00 to U+FE0F,
 * U+E0100 to U+E01EF), the combining grapheme joiner U+034F and the Hangul fillers, which show
 * nothing either. Folded: the full-width forms U+FF01 to U+FF5E to their ASCII characters, the
 * ideographic space to a space, and every other character of a compatibility form to its NFKC form
 * (mathematical letters and digits, circled and superscript digits, ligatures, non-breaking
 * spaces). Characters no reader would take for another (letters of other scripts, Cyrillic
 * look-alikes included) are kept as they are.
 *
 * <p>A scanner folds only a text that holds such a character ({@link #hides}), so that ordinary
 * text keeps its speed. Immutable.
 *
 * @param text the folded text
 * @param starts for each character of the folded text, where its source starts in the original
 * @param ends for each character of the folded text, where its source ends in the original
 */
record FoldedText(String text, int[] starts, int[] ends) {

  // The characters of the Basic Multilingual Plane that are removed or folded, found once.
  private static final BitSet HIDING = hiding();

  /** Whether the text holds a character that folding removes or changes. */
  static boolean hides(CharSequence text) {
    int length = text.length();
    for (int i = 0; i < length; i++) {
      char c = text.charAt(i);
      if (c >= 0xA0 && (HIDING.get(c) || Character.isHighSurrogate(c) && hiding(text, i))) {
        return true;
      }
    }
    return false;
  }

  /** Whether the character may hide a token or be folded; for a surrogate, say so if unsure. */
  static boolean hiding(char c) {
    return c >= 0xA0 && (HIDING.get(c) || Character.isSurrogate(c));
  }

  private static boolean hiding(CharSequence text, int at) {
    return at + 1 < text.length()
        && Character.isLowSurrogate(text.charAt(at + 1))
        && changed(Character.toCodePoint(text.charAt(at), text.charAt(at + 1)));
  }

  /** The text folded, with where each of its characters came from. */
  static FoldedText of(String text) {
    StringBuilder folded = new StringBuilder(text.length());
    int[] starts = new int[text.length()];
    int[] ends = new int[text.length()];
    int count = 0;
    for (int i = 0; i < text.length(); ) {
      int c = text.codePointAt(i);
      int next = i + Character.charCount(c);
      String replacement = folded(c);
      for (int k = 0; k < replacement.length(); k++) {
        if (count == starts.length) {
          starts = Arrays.copyOf(starts, count * 2 + 16);
          ends = Arrays.copyOf(ends, count * 2 + 16);
        }
        folded.append(replacement.charAt(k));
        starts[count] = i;
        ends[count] = next;
        count++;
      }
      i = next;
    }
    return new FoldedText(
        folded.toString(), Arrays.copyOf(starts, count), Arrays.copyOf(ends, count));
  }

  /** The finding, found in the folded text, at the span of the original text it came from. */
  Finding original(Finding finding) {
    return new Finding(
        finding.rule(),
        starts[finding.start()],
        ends[finding.end() - 1],
        finding.encoding(),
        finding.known());
  }

  /** What a code point becomes: nothing, its fold, or itself. */
  private static String folded(int c) {
    if (c < 0xA0) {
      return Character.toString(c);
    }
    if (invisible(c)) {
      return "";
    }
    if (c >= 0xFF01 && c <= 0xFF5E) {
      return Character.toString(c - 0xFF01 + '!');
    }
    if (c == 0x3000) {
      return " ";
    }
    String single = Character.toString(c);
    if (Normalizer.isNormalized(single, Normalizer.Form.NFKC)) {
      return single;
    }
    StringBuilder out = new StringBuilder();
    // A compatibility form may fold to characters that are themselves invisible (none is today).
    Normalizer.normalize(single, Normalizer.Form.NFKC)
        .codePoints()
        .filter(each -> !invisible(each))
        .forEach(out::appendCodePoint);
    return out.toString();
  }

  private static boolean invisible(int c) {
    return Character.getType(c) == Character.FORMAT
        || c >= 0xFE00 && c <= 0xFE0F
        || c >= 0xE0100 && c <= 0xE01EF
        || c == 0x034F
        || c == 0x115F
        || c == 0x1160
        || c == 0x3164
        || c == 0xFFA0;
  }

  private static boolean changed(int c) {
    return c >= 0xA0
        && (invisible(c)
            || c >= 0xFF01 && c <= 0xFF5E
            || c == 0x3000
            || !Normalizer.isNormalized(Character.toString(c), Normalizer.Form.NFKC));
  }

  private static BitSet hiding() {
    BitSet hiding = new BitSet(0x10000);
    for (int c = 0xA0; c < 0x10000; c++) {
      if (!Character.isSurrogate((char) c) && changed(c)) {
        hiding.set(c);
      }
    }
    return hiding;
  }

  @Override
  public boolean equals(Object other) {
    return other instanceof FoldedText that
        && text.equals(that.text)
        && Arrays.equals(starts, that.starts)
        && Arrays.equals(ends, that.ends);
  }

  @Override
  public int hashCode() {
    return text.hashCode() * 31 + Arrays.hashCode(starts) * 17 + Arrays.hashCode(ends);
  }

  @Override
  public String toString() {
    return "FoldedText[" + text + "]";
  }
}
