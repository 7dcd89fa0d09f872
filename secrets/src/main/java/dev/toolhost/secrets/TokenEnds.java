package dev.toolhost.secrets;

/**
 * Token ends are the characters a rule's match may end at: a layer over gitleaks' expressions that
 * widens their terminal boundary group, written for source code, to the characters that end a value
 * in a URL, a query, a fragment, HTML and Markdown as well.
 *
 * <p>Most of gitleaks' rules for tokens of no fixed length (and many of fixed length) end with the
 * same group, {@value #CODE}: the token must be followed by a backtick, a quote, white space, a
 * semicolon, an escaped line break or the end of the text. In {@code ?api_key=sk-proj-...&page=2},
 * {@code <code>ghp_...</code>} or {@code [key](https://x.test/?k=AIza...)} something else follows,
 * and the rule does not match. The widened group, {@value #WIDE}, adds:
 *
 * <ul>
 *   <li>{@code & # ?} and {@code /}: what ends a query value, a fragment or a path segment;
 *   <li>{@code < > ( ) [ ] { } | , *}: what closes HTML, Markdown links, tables and emphasis, JSON
 *       and lists;
 *   <li>a backslash: an escaped quote or tab after a token in JSON written inside a string (the
 *       escaped line break was already there);
 *   <li>any character outside ASCII (a curly quote, a full stop or comma of another script): no
 *       token's alphabet holds one. It is written as a negated class of ASCII, not as a range up to
 *       U+10FFFF: RE2/J folds the case of every character of a class under {@code (?i)}, which for
 *       that range takes seconds a rule.
 * </ul>
 *
 * <p>The characters a token itself may hold ({@code . : = - _ + ~}) are left out: one of them after
 * a match would let the match stop inside a longer value. gitleaks' variant that also accepts a
 * word boundary ({@code |\b}, Perplexity's rule) is widened the same way; other end conditions are
 * left as they are. The rule file is not edited: the expression is rewritten when it is compiled,
 * so a newer gitleaks file gets the layer as it is, and {@link RuleSet} applies it to every rule
 * file it reads.
 */
final class TokenEnds {

  /** gitleaks' terminal boundary group, as its rule file writes it. */
  static final String CODE = "(?:[\\x60'\"\\s;]|\\\\[nr]|$)";

  /** The same group with a word boundary as a further way to end. */
  static final String CODE_OR_BOUNDARY = "(?:[\\x60'\"\\s;]|\\\\[nr]|$|\\b)";

  /** The widened group. */
  static final String WIDE =
      "(?:[\\x60'\"\\s;&#?/<>()\\[\\]{}|,*\\\\]|(?-i:[^\\x00-\\x7F])|\\\\[nr]|$)";

  /** The widened group of the variant with a word boundary. */
  static final String WIDE_OR_BOUNDARY =
      "(?:[\\x60'\"\\s;&#?/<>()\\[\\]{}|,*\\\\]|(?-i:[^\\x00-\\x7F])|\\\\[nr]|$|\\b)";

  private TokenEnds() {}

  /** The expression with each of gitleaks' terminal boundary groups widened. */
  static String widen(String regex) {
    if (!regex.contains("|\\\\[nr]|$")) {
      return regex;
    }
    return regex.replace(CODE_OR_BOUNDARY, WIDE_OR_BOUNDARY).replace(CODE, WIDE);
  }

  /** Whether the expression holds a widened group. */
  static boolean widened(String regex) {
    return regex.contains(WIDE) || regex.contains(WIDE_OR_BOUNDARY);
  }
}
