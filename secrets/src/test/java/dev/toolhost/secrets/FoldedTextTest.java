package dev.toolhost.secrets;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * A folded text drops what hides a token and folds look-alike forms to ASCII, knowing where each of
 * its characters came from; ordinary text, in any script, is not folded at all.
 */
class FoldedTextTest {

  private static final SecretScanner SCANNER = SecretSamples.scanner();

  @Test
  void ordinaryTextInAnyScriptHidesNothing() {
    for (String text :
        new String[] {
          "Build 412 passed: 1,204 tests in 3 minutes.",
          "Le café est fermé; à demain.",
          "Привет, мир — это тест.",
          "鍵は「設定」にあります。",
          "Deployed 🚀 to prod ✅ (2 of 3)",
          "“Quoted” — with an en dash – and an apostrophe’s mark"
        }) {
      assertThat(FoldedText.hides(text)).as(text).isFalse();
    }
  }

  @Test
  void invisibleAndLookAlikeCharactersHideAndAreFolded() {
    for (String hiding :
        new String[] {
          "\u200B",
          "\u200C",
          "\u200D",
          "\u2060",
          "\uFEFF",
          "\u00AD",
          "\u202A",
          "\u202E",
          "\u2066",
          "\u2069",
          "\u200E",
          "\u200F",
          "\uFE0F",
          "\uDB40\uDC41"
        }) {
      String text = "gh" + hiding + "p_";
      assertThat(FoldedText.hides(text)).as("U+%04X", (int) hiding.charAt(0)).isTrue();
      assertThat(FoldedText.of(text).text()).isEqualTo("ghp_");
    }
    assertThat(FoldedText.of("ｇｈｐ＿").text()).isEqualTo("ghp_");
    assertThat(FoldedText.of("\uD835\uDC20\uD835\uDC21\uD835\uDC29_").text()).isEqualTo("ghp_");
    assertThat(FoldedText.of("a\u00A0b\u3000c").text()).isEqualTo("a b c");
  }

  @Test
  void eachFoldedCharacterKnowsItsSpanInTheOriginal() {
    FoldedText folded = FoldedText.of("a\u200Bb\uD835\uDC1Cｃ");

    assertThat(folded.text()).isEqualTo("abcc");
    assertThat(folded.starts()).containsExactly(0, 2, 3, 5);
    assertThat(folded.ends()).containsExactly(1, 3, 5, 6);
  }

  @Test
  void theRedactionCoversTheWholeHiddenTokenAndNothingAroundIt() {
    String token = SecretVectorsTest.family("github-pat").secret();
    String hidden =
        token.substring(0, 4) + "\u200B" + token.substring(4, 20) + "\u00AD" + token.substring(20);
    String text = "push \u2060" + hidden + "\u200B failed";

    assertThat(SCANNER.redact(text)).isEqualTo("push \u2060[REDACTED:github-pat]\u200B failed");
    assertThat(SCANNER.redact("push " + LeakPathsTest.fullWidth(token) + " failed"))
        .isEqualTo("push [REDACTED:github-pat] failed");
  }

  @Test
  void aKnownValueIsFoundThoughInvisibleCharactersSplitIt() {
    String value = SecretSamples.random(new java.util.Random(21), SecretSamples.ALNUM, 32);
    SecretScanner scanner =
        SecretScanner.builder(SecretSamples.RULES).known("TOOLHOST_TOKEN", value).build();

    assertThat(
            scanner.redact(
                "token " + value.substring(0, 10) + "\u200D" + value.substring(10) + " sent"))
        .isEqualTo("token [REDACTED:TOOLHOST_TOKEN] sent");
  }
}
