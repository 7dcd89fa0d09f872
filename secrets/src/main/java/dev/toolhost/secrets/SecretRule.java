package dev.toolhost.secrets;

import com.google.re2j.Pattern;
import java.util.List;
import java.util.Objects;

/**
 * A secret rule recognises one kind of secret, as a gitleaks rule file describes it: a regular
 * expression (RE2 syntax) whose secret is one of its groups, the least Shannon entropy the secret
 * must have, the keywords of which one must appear for the rule to run, and the allow-lists that
 * let a match through.
 *
 * @param id the rule's id, such as {@code github-pat}: what a redaction marker names
 * @param description what the rule finds
 * @param regex the expression, compiled by RE2/J
 * @param secretGroup the group that holds the secret; 0 for the first group there is, else the
 *     whole match
 * @param entropy the least Shannon entropy (bits per character) of a secret; 0 for none
 * @param keywords lower-case words one of which must appear in the text for the rule to run
 * @param allowlists what the rule lets through
 */
public record SecretRule(
    String id,
    String description,
    Pattern regex,
    int secretGroup,
    double entropy,
    List<String> keywords,
    List<Allowlist> allowlists) {

  public SecretRule {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(description, "description");
    Objects.requireNonNull(regex, "regex");
    keywords =
        keywords.stream().map(keyword -> keyword.toLowerCase(java.util.Locale.ROOT)).toList();
    allowlists = List.copyOf(allowlists);
  }

  /**
   * An allow-list lets a match through: when one of its expressions matches the secret (or the
   * whole match, or its line, as its target says), or the secret holds one of its stop words. With
   * condition AND, both must hold.
   *
   * @param regexes the expressions
   * @param target what the expressions are matched against
   * @param stopwords lower-case words that mark a placeholder or example, not a secret
   * @param both whether an expression and a stop word must both hold (gitleaks' {@code AND})
   */
  public record Allowlist(
      List<Pattern> regexes, Target target, List<String> stopwords, boolean both) {

    public Allowlist {
      regexes = List.copyOf(regexes);
      Objects.requireNonNull(target, "target");
      stopwords = stopwords.stream().map(word -> word.toLowerCase(java.util.Locale.ROOT)).toList();
    }

    /** Whether this list lets the secret through, found in that match on that line. */
    boolean allows(String secret, String match, String line) {
      if (regexes.isEmpty() && stopwords.isEmpty()) {
        // A list of file paths or commits only: nothing in it applies to text.
        return false;
      }
      String against =
          switch (target) {
            case SECRET -> secret;
            case MATCH -> match;
            case LINE -> line;
          };
      boolean regex = regexes.stream().anyMatch(pattern -> pattern.matcher(against).find());
      String lower = secret.toLowerCase(java.util.Locale.ROOT);
      boolean stopword = stopwords.stream().anyMatch(lower::contains);
      if (both) {
        return (regexes.isEmpty() || regex) && (stopwords.isEmpty() || stopword);
      }
      return regex || stopword;
    }
  }

  /** What an allow-list's expressions are matched against. */
  public enum Target {
    /** The secret alone (gitleaks' default). */
    SECRET,
    /** The rule's whole match. */
    MATCH,
    /** The line the match is on. */
    LINE
  }
}
