package dev.toolhost.secrets;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Secrets longer than a scanner's usual reach after a keyword (an Azure or Okta access token runs
 * to a few kilobytes) are redacted whole, in one text and in a stream of chunks.
 */
class LongSecretsTest {

  private static final SecretScanner SCANNER = SecretScanner.builder(RuleSet.gitleaks()).build();

  /** A JWT's shape, about 1.5 KB, made at run time so that no scanner flags this file. */
  private static String longJwt() {
    Random random = new Random(1500);
    String alphanumeric = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789";
    StringBuilder jwt = new StringBuilder("eyJ");
    for (int i = 0; i < 40; i++) {
      jwt.append(alphanumeric.charAt(random.nextInt(alphanumeric.length())));
    }
    jwt.append(".eyJ");
    for (int i = 0; i < 1400; i++) {
      jwt.append(alphanumeric.charAt(random.nextInt(alphanumeric.length())));
    }
    jwt.append('.');
    for (int i = 0; i < 43; i++) {
      jwt.append(alphanumeric.charAt(random.nextInt(alphanumeric.length())));
    }
    return jwt.toString();
  }

  @Test
  void aJwtOfOneAndAHalfKilobytesIsRedactedWhole() {
    String jwt = longJwt();

    String redacted = SCANNER.redact("Authorization: Bearer " + jwt + "\nnext line");

    assertThat(redacted).isEqualTo("Authorization: Bearer [REDACTED:jwt]\nnext line");
  }

  @Test
  void aJwtOfOneAndAHalfKilobytesStreamedInChunksIsRedactedWhole() {
    String text = "token " + longJwt() + " done";
    var stream = SCANNER.stream();
    StringBuilder out = new StringBuilder();
    for (int i = 0; i < text.length(); i += 100) {
      out.append(stream.push(text.substring(i, Math.min(text.length(), i + 100))));
    }
    out.append(stream.finish());

    assertThat(out.toString()).isEqualTo("token [REDACTED:jwt] done");
  }
}
