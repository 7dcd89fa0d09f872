package dev.toolhost.secrets;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.core.Redactor;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** A text given to a scanner's stream in chunks comes out as the whole text's redaction. */
class SecretStreamTest {

  private static final SecretScanner SCANNER = SecretSamples.scanner();

  /** Lines of an ordinary log, long enough that the stream passes some of it on early. */
  private static String log(int from, int lines) {
    StringBuilder out = new StringBuilder();
    for (int i = from; i < from + lines; i++) {
      out.append(
          String.format(
              "2025-05-14T09:%02d:%02d.%03dZ INFO build step %d of 400 finished in %d ms%n",
              i / 60 % 60, i % 60, i * 37 % 1000, i, i * 13 % 900));
    }
    return out.toString();
  }

  /** What the stream gives back for those chunks, every push's output and finish's, joined. */
  private static String streamed(List<String> chunks) {
    Redactor.Stream stream = SCANNER.stream();
    StringBuilder out = new StringBuilder();
    for (String chunk : chunks) {
      out.append(stream.push(chunk));
    }
    return out.append(stream.finish()).toString();
  }

  /** The text cut at those places. */
  private static List<String> cut(String text, int... at) {
    List<String> chunks = new ArrayList<>();
    int from = 0;
    for (int to : at) {
      chunks.add(text.substring(from, to));
      from = to;
    }
    chunks.add(text.substring(from));
    return chunks;
  }

  /** The text in chunks of that size. */
  private static List<String> chunks(String text, int size) {
    List<String> chunks = new ArrayList<>();
    for (int at = 0; at < text.length(); at += size) {
      chunks.add(text.substring(at, Math.min(text.length(), at + size)));
    }
    return chunks;
  }

  /** A log with a secret between two parts, and the log as the stream must pass it on. */
  private record Logged(String before, String text, String expected) {

    static Logged of(String before, String secret, String after, String rule) {
      return new Logged(
          before, before + secret + after, before + "[REDACTED:" + rule + "]" + after);
    }
  }

  /** A deploy log with an RSA private key, a block longer than what the stream holds back. */
  private static Logged privateKeyLog() {
    String pem = SecretVectorsTest.family("RSA private key").secret();
    assertThat(pem.length()).isGreaterThan(SecretStream.HOLD);
    return Logged.of(
        log(0, 20) + "Deploy identity follows\n",
        pem,
        "\nDeploy identity ends\n" + log(20, 20),
        "private-key");
  }

  @Test
  void aSecretSplitAcrossTwoChunksComesOutRedacted() {
    String token = SecretVectorsTest.family("github-pat").secret();
    Logged logged =
        Logged.of(log(0, 30) + "Pushing with ", token, " to origin\n" + log(30, 30), "github-pat");
    String before = logged.before();
    String text = logged.text();
    String expected = logged.expected();

    for (int at = before.length() - 2; at <= before.length() + token.length() + 2; at++) {
      assertThat(streamed(cut(text, at))).as("cut at %d", at).isEqualTo(expected);
    }
  }

  @Test
  void aSecretSplitAcrossThreeChunksComesOutRedacted() {
    String key = SecretVectorsTest.family("anthropic-api-key").secret();
    Logged logged =
        Logged.of(
            log(0, 25) + "ANTHROPIC_KEY_FILE contents: ",
            key,
            "\n" + log(25, 25),
            "anthropic-api-key");
    String before = logged.before();
    String text = logged.text();
    String expected = logged.expected();

    for (int first = 1; first < key.length() - 1; first += 7) {
      for (int second = first + 1; second < key.length(); second += 11) {
        assertThat(streamed(cut(text, before.length() + first, before.length() + second)))
            .as("cut at %d and %d", first, second)
            .isEqualTo(expected);
      }
    }
  }

  @Test
  void anEncodedSecretSplitAcrossChunksComesOutRedacted() {
    String token = SecretVectorsTest.family("github-pat").secret();
    String encoded = SecretSamples.base64(token);
    Logged logged =
        Logged.of(log(0, 20) + "auth blob ", encoded, " sent\n" + log(20, 20), "github-pat");
    String before = logged.before();
    String text = logged.text();
    String expected = logged.expected();

    for (int at = before.length(); at < before.length() + encoded.length(); at += 5) {
      assertThat(streamed(cut(text, at))).as("cut at %d", at).isEqualTo(expected);
    }
  }

  @Test
  void textWithoutSecretsComesOutIdenticalAndAsItGoes() {
    String text = log(0, 200);
    Random random = new Random(21);
    List<String> chunks = new ArrayList<>();
    for (int at = 0; at < text.length(); ) {
      int size = 1 + random.nextInt(300);
      chunks.add(text.substring(at, Math.min(text.length(), at + size)));
      at += size;
    }
    Redactor.Stream stream = SCANNER.stream();
    StringBuilder early = new StringBuilder();
    for (String chunk : chunks) {
      early.append(stream.push(chunk));
    }

    // All but the held-back tail was passed on before the end.
    assertThat(early.length()).isGreaterThanOrEqualTo(text.length() - SecretStream.HOLD);
    assertThat(early + stream.finish()).isEqualTo(text);
    assertThat(streamed(chunks(text, 1))).isEqualTo(text);
    assertThat(SCANNER.stream().finish()).isEmpty();
  }

  @Test
  void aPrivateKeySplitOverManyChunksComesOutRedacted() {
    Logged logged = privateKeyLog();
    String text = logged.text();
    String expected = logged.expected();

    for (int size : new int[] {1, 7, 64, 100, 333}) {
      assertThat(streamed(chunks(text, size))).as("chunks of %d", size).isEqualTo(expected);
    }
  }

  @Test
  void aPrivateKeyCutInItsEndLineComesOutRedacted() {
    // The block is longer than what the stream holds back: until its END line is whole, the
    // stream must hold it from its BEGIN line, or it passes the key on unredacted.
    Logged logged = privateKeyLog();
    String text = logged.text();
    String expected = logged.expected();
    int endLine = text.indexOf("-----END");

    for (int at = endLine - 2; at <= endLine + "-----END RSA PRIVATE KEY-----".length(); at++) {
      assertThat(streamed(cut(text, at))).as("cut at %d", at - endLine).isEqualTo(expected);
    }
  }

  @Test
  void aKeywordInAnEarlyChunkAndItsValueInALaterOneAreRedacted() {
    String value = SecretSamples.random(new Random(22), SecretSamples.ALNUM, 32);
    Logged logged =
        Logged.of(
            log(0, 20) + "config.api_key = \"", value, "\"\n" + log(20, 20), "generic-api-key");
    String before = logged.before();
    String text = logged.text();
    String expected = logged.expected();

    assertThat(streamed(cut(text, before.length()))).isEqualTo(expected);
    assertThat(
            streamed(
                cut(
                    text,
                    before.length() - "api_key = \"".length(),
                    before.length() - 2,
                    before.length(),
                    before.length() + 10)))
        .isEqualTo(expected);
    // As a model streams its answer: a few characters at a time.
    assertThat(streamed(chunks(text, 3))).isEqualTo(expected);
  }

  @Test
  void manySecretsStreamedAFewCharactersAtATimeComeOutAsTheWholeTextsRedaction() {
    StringBuilder text = new StringBuilder();
    StringBuilder expected = new StringBuilder();
    int line = 0;
    for (SecretSamples.Family family : SecretSamples.families()) {
      String filler = log(line, 12);
      line += 12;
      text.append(filler).append("found ").append(family.snippet()).append(" here\n");
      expected
          .append(filler)
          .append("found ")
          .append(family.before())
          .append(family.marker())
          .append(family.after())
          .append(" here\n");
    }

    assertThat(SCANNER.redact(text.toString())).isEqualTo(expected.toString());
    for (int size : new int[] {4, 61, 512, 4096}) {
      assertThat(streamed(chunks(text.toString(), size)))
          .as("chunks of %d", size)
          .isEqualTo(expected.toString());
    }
  }

  @Test
  void aLongBase64PrivateKeyStreamedInChunksComesOutRedacted() {
    // A key base64-encoded on one line (a Kubernetes manifest's data) is a run longer than what
    // the stream holds back: the stream must hold the run until it ends, or pass the key on.
    String pem = SecretVectorsTest.family("RSA private key").secret();
    String encoded = SecretSamples.base64(pem);
    assertThat(encoded.length()).isGreaterThan(SecretStream.HOLD);
    Logged logged =
        Logged.of(
            log(0, 20) + "binaryData:\n  tls.pem: ", encoded, "\n" + log(20, 20), "private-key");
    String text = logged.text();
    String expected = logged.expected();

    assertThat(SCANNER.redact(text)).isEqualTo(expected);
    for (int size : new int[] {16, 100, 700}) {
      assertThat(streamed(chunks(text, size))).as("chunks of %d", size).isEqualTo(expected);
    }
  }
}
