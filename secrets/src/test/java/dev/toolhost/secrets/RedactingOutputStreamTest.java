package dev.toolhost.secrets;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.core.Redactor;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/** What a logger writes through a redacting stream comes out line by line, its secrets redacted. */
class RedactingOutputStreamTest {

  private static final String TOKEN =
      SecretSamples.random(new Random(0x10661L), SecretSamples.ALNUM, 32);

  private static final String PAT = SecretVectorsTest.family("github-pat").secret();

  private static final SecretScanner SCANNER =
      SecretScanner.builder(SecretSamples.RULES).known("TOOLHOST_TOKEN", TOKEN).build();

  private final ByteArrayOutputStream target = new ByteArrayOutputStream();
  private final AtomicInteger made = new AtomicInteger();
  private final Supplier<Redactor> redactors =
      () -> {
        made.incrementAndGet();
        return SCANNER;
      };

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  private String written() {
    return target.toString(StandardCharsets.UTF_8);
  }

  @Test
  void linesWrittenInPiecesComeOutRedacted() throws IOException {
    RedactingOutputStream stream = new RedactingOutputStream(target, redactors);

    stream.write(bytes("12:00:01 WARN push failed with "));
    byte[] pat = bytes(PAT);
    stream.write(pat, 0, 10);
    stream.write(pat, 10, pat.length - 10);
    // Nothing goes on before the line ends: the secret could still be on its way.
    assertThat(target.size()).isZero();
    stream.write('\n');
    stream.write(bytes("12:00:02 INFO retrying as é-user\n12:00:03 DEBUG header "));
    for (byte b : bytes(TOKEN)) {
      stream.write(b);
    }
    stream.write(bytes(" sent\n12:00:04 INFO done"));

    assertThat(written())
        .isEqualTo(
            "12:00:01 WARN push failed with [REDACTED:github-pat]\n"
                + "12:00:02 INFO retrying as é-user\n"
                + "12:00:03 DEBUG header [REDACTED:TOOLHOST_TOKEN] sent\n");
    // A flush passes whole lines only (a print stream flushes after every write); closing passes
    // the rest.
    stream.flush();
    assertThat(written()).endsWith("sent\n");
    stream.close();
    assertThat(written()).endsWith("sent\n12:00:04 INFO done").doesNotContain(PAT, TOKEN);
    assertThat(made).hasValue(1);
  }

  @Test
  void aCommandThatWritesNothingNeverAsksForARedactor() throws IOException {
    RedactingOutputStream stream = new RedactingOutputStream(target, redactors);

    stream.flush();
    stream.close();

    assertThat(made).hasValue(0);
    assertThat(target.size()).isZero();
  }

  @Test
  void aLineLongerThanTheLimitIsPassedOnInPieces() throws IOException {
    RedactingOutputStream stream = new RedactingOutputStream(target, redactors);

    stream.write(bytes("x".repeat(RedactingOutputStream.MAX_LINE + 10)));

    assertThat(target.size()).isEqualTo(RedactingOutputStream.MAX_LINE);
    stream.close();
    assertThat(target.size()).isEqualTo(RedactingOutputStream.MAX_LINE + 10);
  }
}
