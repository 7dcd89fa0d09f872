package dev.toolhost.mcp;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The poisoning scanner looks through a tool description for the known tool-poisoning patterns:
 * hidden instruction tags ({@code <IMPORTANT>}), references to secret files ({@code ~/.ssh}, {@code
 * mcp.json}), instructions to hide things from the user, and invisible zero-width or bidirectional
 * characters.
 *
 * <p>It flags; it never blocks or changes a description. Stateless and thread-safe.
 */
final class PoisoningScanner {

  private record Rule(String name, Pattern pattern) {}

  private static final List<Rule> RULES =
      List.of(
          new Rule(
              "hidden instruction tag",
              Pattern.compile(
                  "<\\s*/?\\s*(important|system|instructions?|secret|hidden|critical|admin)\\b[^>]*>",
                  Pattern.CASE_INSENSITIVE)),
          new Rule(
              "reference to a secret file",
              Pattern.compile(
                  "(~/\\.ssh|\\.ssh/|id_rsa|id_ed25519|mcp\\.json|~/\\.aws|\\.aws/credentials|"
                      + "\\.env\\b|\\.npmrc|\\.netrc|/etc/passwd|/etc/shadow|\\.git-credentials|"
                      + "claude_desktop_config\\.json)",
                  Pattern.CASE_INSENSITIVE)),
          new Rule(
              "instruction to hide something from the user",
              Pattern.compile(
                  "(do not|don't|never) (tell|mention|inform|show|reveal)[^.]{0,40}\\buser|"
                      + "ignore (all )?(previous|prior|above) instructions",
                  Pattern.CASE_INSENSITIVE)),
          new Rule(
              "invisible character (zero-width or bidirectional)",
              Pattern.compile(
                  "[\\u200B-\\u200F\\u202A-\\u202E\\u2060-\\u2064\\u2066-\\u2069\\uFEFF]"
                      + "|[\\x{E0000}-\\x{E007F}]")));

  /** The patterns found in the text, each as {@code "kind: excerpt"}; empty when clean. */
  List<String> scan(String text) {
    List<String> findings = new ArrayList<>();
    for (Rule rule : RULES) {
      Matcher matcher = rule.pattern().matcher(text);
      if (matcher.find()) {
        findings.add(rule.name() + ": " + visible(matcher.group()));
      }
    }
    return List.copyOf(findings);
  }

  private static String visible(String excerpt) {
    StringBuilder out = new StringBuilder();
    excerpt
        .codePoints()
        .forEach(
            c -> {
              if (Character.getType(c) == Character.FORMAT) {
                out.append(String.format("U+%04X", c));
              } else {
                out.appendCodePoint(c);
              }
            });
    return out.toString();
  }
}
