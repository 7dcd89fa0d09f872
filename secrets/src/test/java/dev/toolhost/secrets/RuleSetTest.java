package dev.toolhost.secrets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * A rule set is gitleaks' rules, read from TOML and compiled on RE2/J, with a config's rule files
 * adding to them or replacing them by id.
 */
class RuleSetTest {

  private static final RuleSet GITLEAKS = RuleSet.gitleaks();

  /** A company rule file: one rule of its own, and gitleaks' github-pat replaced. */
  private static final String COMPANY_RULES =
      """
      [[rules]]
      id = "acme-deploy-key"
      description = "An ACME deploy key."
      regex = '''\\bacmedk_([a-z0-9]{24})\\b'''
      secretGroup = 1
      keywords = ["acmedk_"]

      [[rules]]
      id = "github-pat"
      description = "A GitHub token, as the company issues them."
      regex = '''\\bghc_[A-Za-z0-9]{30}\\b'''
      keywords = ["ghc_"]
      """;

  private static String shippedText() throws IOException {
    try (InputStream in = RuleSet.class.getResourceAsStream("gitleaks.toml")) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  @Test
  void theShippedSetHas221TextRulesAndEveryExpressionCompilesOnRe2j() throws IOException {
    // gitleaks' file has one rule more, which matches file paths only: it means nothing for text.
    assertThat(shippedText().lines().filter(line -> line.equals("[[rules]]"))).hasSize(222);
    assertThat(GITLEAKS.rules()).hasSize(221);
    assertThat(GITLEAKS.rules().values())
        .allSatisfy(
            rule -> {
              assertThat(rule.regex().pattern()).isNotBlank();
              assertThatCode(() -> com.google.re2j.Pattern.compile(rule.regex().pattern()))
                  .as(rule.id())
                  .doesNotThrowAnyException();
            });
    assertThat(GITLEAKS.rule("github-pat")).isPresent();
    assertThat(GITLEAKS.rule("generic-api-key")).isPresent();
  }

  @Test
  void javaUtilRegexCannotCompileAShippedExpressionThatRe2jDoes() {
    // gitleaks writes for Go's RE2: jwt-base64 names its groups (?P<name>...), which Java's own
    // engine refuses. This, and RE2's linear time, is why the rules run on RE2/J.
    List<String> refusedByJava =
        GITLEAKS.rules().values().stream()
            .filter(rule -> !compilesOnJavaUtilRegex(rule.regex().pattern()))
            .map(SecretRule::id)
            .toList();
    assertThat(refusedByJava).containsExactly("jwt-base64");

    String jwtBase64 = GITLEAKS.rule("jwt-base64").orElseThrow().regex().pattern();
    assertThat(jwtBase64).contains("(?P<alg>");
    assertThatThrownBy(() -> java.util.regex.Pattern.compile(jwtBase64))
        .isInstanceOf(java.util.regex.PatternSyntaxException.class);
    assertThatCode(() -> com.google.re2j.Pattern.compile(jwtBase64)).doesNotThrowAnyException();
  }

  private static boolean compilesOnJavaUtilRegex(String regex) {
    try {
      java.util.regex.Pattern.compile(regex);
      return true;
    } catch (java.util.regex.PatternSyntaxException e) {
      return false;
    }
  }

  @Test
  void aRuleFileAddsARuleAndReplacesOneOfTheSameId() {
    RuleSet company = RuleSet.parse(COMPANY_RULES, "rules/company.toml");

    RuleSet merged = GITLEAKS.with(company);

    assertThat(company.rules().keySet()).containsExactly("acme-deploy-key", "github-pat");
    assertThat(merged.rules()).hasSize(222);
    assertThat(merged.rule("acme-deploy-key").orElseThrow().secretGroup()).isEqualTo(1);
    assertThat(merged.rule("github-pat").orElseThrow().description())
        .isEqualTo("A GitHub token, as the company issues them.");
    // Replaced in its place: the order of the set is gitleaks' file order.
    assertThat(List.copyOf(merged.rules().keySet()).indexOf("github-pat"))
        .isEqualTo(List.copyOf(GITLEAKS.rules().keySet()).indexOf("github-pat"));
    assertThat(GITLEAKS.rule("acme-deploy-key")).isEmpty();

    Random random = new Random(0xAC3EL);
    String deployKey = SecretSamples.random(random, "abcdefghijklmnopqrstuvwxyz0123456789", 24);
    String companyPat = "ghc_" + SecretSamples.random(random, SecretSamples.ALNUM, 30);
    String gitleaksPat = SecretVectorsTest.family("github-pat").secret();
    SecretScanner scanner = SecretScanner.builder(merged).build();

    assertThat(scanner.redact("deploy with acmedk_" + deployKey + " now"))
        .isEqualTo("deploy with acmedk_[REDACTED:acme-deploy-key] now");
    assertThat(scanner.redact("push with " + companyPat + " now"))
        .isEqualTo("push with [REDACTED:github-pat] now");
    // The replaced rule no longer runs: gitleaks' own GitHub token shape is not found.
    assertThat(scanner.scan("push with " + gitleaksPat + " now")).isEmpty();
  }

  @Test
  void aBadExpressionIsRefusedNamingTheFileAndTheRule() {
    String lookbehind =
        """
        [[rules]]
        id = "acme-deploy-key"
        regex = '''acmedk_[a-z0-9]{24}'''

        [[rules]]
        id = "acme-session"
        regex = '''(?<=session=)[a-z0-9]{32}'''
        """;

    // RE2 has no look-around: an expression that needs it is refused, not skipped.
    assertThatThrownBy(() -> RuleSet.parse(lookbehind, "rules/company.toml"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith(
            "rules/company.toml: rule 'acme-session': the expression does not compile:")
        .hasMessageNotContaining("acme-deploy-key");
    assertThatThrownBy(
            () ->
                RuleSet.parse(
                    "[[rules]]\nid = \"unclosed\"\nregex = '''(acme_[a-z]+'''\n",
                    "rules/other.toml"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("rules/other.toml: rule 'unclosed': the expression does not");
    assertThatThrownBy(
            () ->
                RuleSet.parse(
                    "[[rules]]\nid = \"acme\"\nregex = '''acme'''\n"
                        + "[[rules.allowlists]]\nregexes = ['''(?!test)''']\n",
                    "rules/allow.toml"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("rules/allow.toml: rule 'acme' allow-list: the expression");
    assertThatThrownBy(() -> RuleSet.parse("[[rules]]\nregex = '''acme'''\n", "rules/noid.toml"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("rules/noid.toml: rule 1 has no id");
    assertThatThrownBy(() -> RuleSet.parse("rules = [ unclosed", "rules/broken.toml"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("rules/broken.toml: not a TOML rule file:");
  }

  @Test
  void anInputThatMakesABacktrackingEngineStruggleIsScannedAndHoldsNothing() {
    // generic-api-key opens with a lazy [\w.-]{0,50}? before its keyword and a [ \t\w.-]{0,20}
    // run after it: a long run of keywords with no assignment makes a backtracking engine try
    // every split at every place. No timing is asserted here (see SecretScanBenchmark); the scan
    // ends, and finds nothing in it.
    SecretScanner scanner = SecretSamples.scanner();
    String keywords = "key".repeat(70_000);
    String runs = ("a".repeat(50) + "secret" + " ".repeat(20)).repeat(3_000);
    String dashes = ("token" + "-".repeat(45)).repeat(4_000);

    assertThat(scanner.scan(keywords)).isEmpty();
    assertThat(scanner.scan(runs)).isEmpty();
    assertThat(scanner.scan(dashes)).isEmpty();
    assertThat(scanner.redact(keywords + "\n" + runs)).isEqualTo(keywords + "\n" + runs);
  }
}
