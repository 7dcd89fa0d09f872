package dev.toolhost.secrets;

import static dev.toolhost.secrets.SecretSamples.hex;
import static dev.toolhost.secrets.SecretSamples.percent;
import static dev.toolhost.secrets.SecretSamples.unicode;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** A secret the host holds is redacted by its value, under its name, in every form. */
class KnownSecretsTest {

  /**
   * Thirty characters no rule knows, with punctuation as a password has: a '~', '>' or '?' at each
   * place in a group of three, so that its base64 differs between the alphabets at every alignment.
   */
  private static final String VALUE = "Tq7~fNw2Lx>R9bKc?4VzH8m~Pd3YsG";

  private static final String MARKER = "[REDACTED:TOOLHOST_TOKEN]";

  private static final SecretScanner SCANNER =
      SecretScanner.builder(SecretSamples.RULES).known("TOOLHOST_TOKEN", VALUE).build();

  private static void assertRedacted(String text, String expected, Finding.Encoding encoding) {
    SecretScanner.Redaction redaction = SCANNER.redaction(text);
    assertThat(redaction.text()).isEqualTo(expected);
    assertThat(redaction.findings())
        .extracting(Finding::rule, Finding::encoding, Finding::known)
        .containsExactly(tuple("TOOLHOST_TOKEN", encoding, true));
  }

  @Test
  void noRuleFindsTheValueOnItsOwn() {
    assertThat(SecretSamples.scanner().redaction("The token is " + VALUE + " today.").findings())
        .isEmpty();
  }

  @Test
  void theValueIsRedactedInPlainText() {
    assertRedacted(
        "The token is " + VALUE + " today.",
        "The token is " + MARKER + " today.",
        Finding.Encoding.PLAIN);
    // A rule (generic-api-key) finds it too here; the known value wins and names it.
    assertRedacted(
        "export TOOLHOST_TOKEN='" + VALUE + "'\n",
        "export TOOLHOST_TOKEN='" + MARKER + "'\n",
        Finding.Encoding.PLAIN);
  }

  static Stream<Arguments> alphabetsAndAlignments() {
    return Stream.of(Base64.getEncoder(), Base64.getUrlEncoder())
        .flatMap(
            encoder ->
                Stream.of(0, 1, 2)
                    .map(
                        alignment ->
                            Arguments.of(
                                encoder == Base64.getEncoder() ? "standard" : "URL-safe",
                                alignment)));
  }

  private static Base64.Encoder encoder(String alphabet) {
    return alphabet.equals("standard") ? Base64.getEncoder() : Base64.getUrlEncoder();
  }

  @ParameterizedTest(name = "{0} at alignment {1}")
  @MethodSource("alphabetsAndAlignments")
  void theValueIsRedactedInBase64TextAtEachAlignment(String alphabet, int alignment) {
    // A config file encoded whole: it decodes to text, and the groups that hold the value go.
    String first = "# toolhost\nid=";
    String lead = first + "x".repeat(3 + Math.floorMod(alignment - first.length(), 3));
    int at = lead.length();
    assertThat(at % 3).isEqualTo(alignment);
    String file = lead + VALUE + "\n# end\n";
    String encoded = encoder(alphabet).encodeToString(file.getBytes(StandardCharsets.UTF_8));
    assertThat(encoded).containsAnyOf("+", "/", "-", "_");

    assertRedacted(
        "data " + encoded + " end",
        "data "
            + SecretSamples.redactedSpan(encoded, at, at + VALUE.length(), 3, 4, MARKER)
            + " end",
        Finding.Encoding.BASE64);
  }

  @ParameterizedTest(name = "{0} at alignment {1}")
  @MethodSource("alphabetsAndAlignments")
  void theValueIsRedactedInBase64BinaryAtEachAlignment(String alphabet, int alignment) {
    // Among bytes that are no text (nothing to decode and scan), the value is found by its own
    // encoded characters: those that hold its bits only. The one or two at each edge that also
    // hold a byte around it stay.
    // Bytes that encode to no '/': the scanner also tries what lies between slashes on its own (a
    // URL path's segments), and a segment that decodes to mostly the value would be found whole.
    byte[] before = {(byte) 0x9c, 0x00, (byte) 0x81, 0x01, (byte) 0x80, 0x1b};
    byte[] after = {0x02, (byte) 0x90, 0x00, (byte) 0x81, 0x1b};
    int at = 3 + alignment;
    byte[] value = VALUE.getBytes(StandardCharsets.UTF_8);
    byte[] blob = new byte[at + value.length + after.length];
    System.arraycopy(before, 0, blob, 0, at);
    System.arraycopy(value, 0, blob, at, value.length);
    System.arraycopy(after, 0, blob, at + value.length, after.length);
    String encoded = encoder(alphabet).encodeToString(blob);
    int start = Math.ceilDiv(at * 8, 6);
    int end = (at + value.length) * 8 / 6;
    assertThat(encoded.substring(0, start) + encoded.substring(end)).doesNotContain("/");

    assertRedacted(
        "blob " + encoded + " end",
        "blob " + encoded.substring(0, start) + MARKER + encoded.substring(end) + " end",
        Finding.Encoding.BASE64);
  }

  @Test
  void theValueIsRedactedInHexOfEitherCase() {
    assertRedacted("hex " + hex(VALUE) + " end", "hex " + MARKER + " end", Finding.Encoding.HEX);
    assertRedacted(
        "HEX " + hex(VALUE).toUpperCase() + " END", "HEX " + MARKER + " END", Finding.Encoding.HEX);
    // Inside a longer hex run, only the value's hex goes.
    assertRedacted(
        "hex " + hex("id=" + VALUE + ";") + " end",
        "hex " + hex("id=") + MARKER + hex(";") + " end",
        Finding.Encoding.HEX);
  }

  @Test
  void theValueIsRedactedPercentEncoded() {
    assertRedacted(
        "GET /cb?t=" + percent(VALUE) + "&x=1",
        "GET /cb?t=" + MARKER + "&x=1",
        Finding.Encoding.PERCENT);
    assertRedacted(
        "GET /cb?t=" + percent(VALUE).toLowerCase() + "&x=1",
        "GET /cb?t=" + MARKER + "&x=1",
        Finding.Encoding.PERCENT);
    // As a URL encoder writes it: only the punctuation escaped.
    String urlEncoded = java.net.URLEncoder.encode(VALUE, StandardCharsets.UTF_8);
    assertThat(urlEncoded).contains("%7E", "%3E", "%3F");
    assertRedacted(
        "GET /cb?t=" + urlEncoded + "&x=1",
        "GET /cb?t=" + MARKER + "&x=1",
        Finding.Encoding.PERCENT);
  }

  @Test
  void theValueIsRedactedUnicodeEscaped() {
    assertRedacted(
        "{\"t\":\"" + unicode(VALUE) + "\"}",
        "{\"t\":\"" + MARKER + "\"}",
        Finding.Encoding.UNICODE_ESCAPES);
    assertRedacted(
        "{\"t\":\"" + unicode(VALUE).toUpperCase().replace("\\U", "\\u") + "\"}",
        "{\"t\":\"" + MARKER + "\"}",
        Finding.Encoding.UNICODE_ESCAPES);
  }

  @Test
  void valuesShorterThanTheMinimumAreIgnored() {
    String shorter = "Kx7#qPz2Lw".substring(0, SecretScanner.MIN_KNOWN_LENGTH - 1);
    String shortest = "Kx7#qPz2Lw".substring(0, SecretScanner.MIN_KNOWN_LENGTH);
    SecretScanner scanner =
        SecretScanner.builder(SecretSamples.RULES)
            .known("SHORTER", shorter)
            .known("SHORTEST", shortest)
            .build();

    assertThat(scanner.redact("pin " + shorter + " here")).isEqualTo("pin " + shorter + " here");
    assertThat(scanner.redact("pin " + shortest + " here"))
        .isEqualTo("pin [REDACTED:SHORTEST] here");
  }

  @Test
  void aKnownValueWinsOverTheRuleThatFindsIt() {
    String token = SecretVectorsTest.family("github-pat").secret();
    SecretScanner scanner =
        SecretScanner.builder(SecretSamples.RULES).known("GITHUB_TOKEN", token).build();

    assertThat(scanner.redact("token " + token + " end"))
        .isEqualTo("token [REDACTED:GITHUB_TOKEN] end");
    assertThat(scanner.redact("echo " + SecretSamples.base64(token)))
        .isEqualTo("echo [REDACTED:GITHUB_TOKEN]");
    assertThat(scanner.redact("echo " + hex(token))).isEqualTo("echo [REDACTED:GITHUB_TOKEN]");
  }
}
