package dev.toolhost.secrets;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import tools.jackson.databind.JsonNode;
import tools.jackson.dataformat.toml.TomlMapper;

/**
 * The token-ends layer widens the terminal boundary group of gitleaks' expressions when they are
 * compiled, leaving the rule file as gitleaks ships it, and a rule's match then ends where a value
 * ends in a URL or markup.
 */
class TokenEndsTest {

  private static final SecretScanner SCANNER = SecretSamples.scanner();

  /** The expressions of a shipped rule file, as the file writes them. */
  private static JsonNode rules(String file) throws IOException {
    try (InputStream in = RuleSet.class.getResourceAsStream(file)) {
      return TomlMapper.builder()
          .build()
          .readTree(new String(in.readAllBytes(), StandardCharsets.UTF_8))
          .path("rules");
    }
  }

  private static long written(JsonNode rules) {
    long count = 0;
    for (JsonNode rule : rules) {
      String regex = rule.path("regex").asString("");
      if (regex.contains(TokenEnds.CODE) || regex.contains(TokenEnds.CODE_OR_BOUNDARY)) {
        count++;
      }
    }
    return count;
  }

  private static long widened(RuleSet rules) {
    return rules.rules().values().stream()
        .filter(rule -> TokenEnds.widened(rule.regex().pattern()))
        .count();
  }

  @Test
  void theLayerWidensEveryRuleThatEndsAsGitleaksWritesItAndNoOther() throws IOException {
    // gitleaks' file as shipped (commit in NOTICE.md): 152 of its 221 expressions end with the
    // group, one of them (pplx) with a word boundary as a further way to end.
    assertThat(written(rules("gitleaks.toml"))).isEqualTo(152);
    assertThat(widened(RuleSet.gitleaks())).isEqualTo(152);
    assertThat(RuleSet.gitleaks().rules()).hasSize(221);
    // Toolhost's rules for tokens (OpenRouter, Brave) end so too; a URL's password ends at '@'.
    assertThat(written(rules("toolhost.toml"))).isEqualTo(2);
    assertThat(widened(RuleSet.toolhost())).isEqualTo(2);
    assertThat(widened(RuleSet.defaults())).isEqualTo(154);
    // No compiled expression keeps the narrow group.
    assertThat(RuleSet.defaults().rules().values())
        .noneMatch(rule -> rule.regex().pattern().contains(TokenEnds.CODE));
  }

  @Test
  void theRuleFileKeepsGitleaksExpressionsAsTheyAre() throws IOException {
    JsonNode gitleaks = rules("gitleaks.toml");
    for (JsonNode rule : gitleaks) {
      String regex = rule.path("regex").asString("");
      assertThat(regex).doesNotContain(TokenEnds.WIDE);
      assertThat(TokenEnds.widened(TokenEnds.widen(regex)))
          .isEqualTo(regex.contains(TokenEnds.CODE) || regex.contains(TokenEnds.CODE_OR_BOUNDARY));
    }
  }

  @ParameterizedTest(name = "followed by {0}")
  @ValueSource(
      strings = {
        "&", "#", "?", "/", "<", ">", "(", ")", "[", "]", "{", "}", "|", ",", "*", "\\\"", "\u201D",
        "\u3002", " ", "'", "\"", "`", ";", "\\n"
      })
  void aTokenOfNoFixedLengthEndsAtEachCharacterThatEndsAValue(String end) {
    String anthropic = SecretVectorsTest.family("anthropic-api-key").secret();
    String google = SecretVectorsTest.family("gcp-api-key").secret();
    String stripe = SecretVectorsTest.family("Stripe secret key").secret();

    Map<String, String> tokens =
        Map.of(
            anthropic, "anthropic-api-key", google, "gcp-api-key", stripe, "stripe-access-token");
    for (String token : tokens.keySet()) {
      String rule = tokens.get(token);
      assertThat(SCANNER.redact("x=" + token + end + "y"))
          .as(rule)
          .isEqualTo("x=[REDACTED:" + rule + "]" + end + "y");
    }
  }

  @Test
  void aTokenFollowedByACharacterTokensHoldIsNotCutShort() {
    // '.', ':', '=', '-', '+' and '~' are no ends: a value that goes on past one of them is not a
    // token of the rule's length, and a part of it is no finding.
    String google = SecretVectorsTest.family("gcp-api-key").secret();
    for (String more : new String[] {".x", ":x", "=x", "-x", "+x", "~x", "x"}) {
      assertThat(SCANNER.redaction("k " + google + more + " end").findings())
          .as(more)
          .noneMatch(finding -> finding.rule().equals("gcp-api-key"));
    }
  }
}
