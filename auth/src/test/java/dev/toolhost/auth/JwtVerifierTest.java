package dev.toolhost.auth;

import static org.assertj.core.api.Assertions.assertThat;

import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jose.crypto.RSASSASigner;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.jwk.gen.RSAKeyGenerator;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.PlainJWT;
import com.nimbusds.jwt.SignedJWT;
import dev.toolhost.core.spi.Authenticator.Accepted;
import dev.toolhost.core.spi.Authenticator.Authentication;
import dev.toolhost.core.spi.Authenticator.Refused;
import dev.toolhost.core.spi.Principal;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Date;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** JWTs signed by keys made in the test, checked against a JWKS file. */
class JwtVerifierTest {

  private static final String ISSUER = "https://id.example.com";
  private static final String AUDIENCE = "toolhost";

  @TempDir Path directory;
  private RSAKey issuerKey;
  private JwtVerifier verifier;

  @BeforeEach
  void makeKeys() throws Exception {
    issuerKey = new RSAKeyGenerator(2048).keyID("issuer-key").generate();
    Path jwks = directory.resolve("jwks.json");
    Files.writeString(jwks, new JWKSet(issuerKey.toPublicJWK()).toString());
    verifier =
        new JwtVerifier(
            new AuthConfig.Jwt(
                URI.create(ISSUER),
                AUDIENCE,
                new AuthConfig.Keys.File(jwks),
                "sub",
                "toolhost_profiles",
                List.of("main")));
  }

  @Test
  void aGoodTokenNamesItsSubjectAsPrincipalAndUser() throws Exception {
    Authentication result = verifier.verify(token(issuerKey, claims -> {}));

    assertThat(result).isInstanceOf(Accepted.class);
    Principal principal = ((Accepted) result).principal();
    assertThat(principal.name()).isEqualTo("alice");
    assertThat(principal.user()).contains("alice");
    assertThat(principal.profiles()).contains(List.of("main"));
    assertThat(principal.actAsUsers()).isFalse();
    assertThat(principal.audit()).isFalse();
  }

  @Test
  void theProfilesClaimListsTheProfilesAsAListOrAsWords() throws Exception {
    Principal listed =
        accepted(token(issuerKey, c -> c.claim("toolhost_profiles", List.of("subagent", "main"))));
    Principal worded =
        accepted(token(issuerKey, c -> c.claim("toolhost_profiles", "main subagent")));

    assertThat(listed.profiles()).contains(List.of("subagent", "main"));
    assertThat(listed.defaultProfile()).isEqualTo("subagent");
    assertThat(worded.profiles()).contains(List.of("main", "subagent"));
  }

  @Test
  void aTokenForAnotherAudienceIsRefusedSayingSo() throws Exception {
    assertThat(reason(token(issuerKey, c -> c.audience("another-service"))))
        .isEqualTo("The token is not for this host: its audience is another.");
  }

  @Test
  void anExpiredTokenIsRefusedSayingSo() throws Exception {
    assertThat(
            reason(
                token(
                    issuerKey, c -> c.expirationTime(Date.from(Instant.now().minusSeconds(3600))))))
        .isEqualTo("The token has expired.");
  }

  @Test
  void aTokenSignedByAnotherKeyIsRefusedEvenWithTheIssuersKeyId() throws Exception {
    RSAKey other = new RSAKeyGenerator(2048).keyID("issuer-key").generate();

    assertThat(reason(token(other, c -> {})))
        .isEqualTo("The token's signature does not match the issuer's keys.");
  }

  @Test
  void aTokenSignedByAKeyTheIssuerDoesNotHaveIsRefused() throws Exception {
    RSAKey other = new RSAKeyGenerator(2048).keyID("someone-else").generate();

    assertThat(reason(token(other, c -> {}))).startsWith("The token is not signed by a key of");
  }

  @Test
  void aTokenOfAnotherIssuerIsRefused() throws Exception {
    assertThat(reason(token(issuerKey, c -> c.issuer("https://evil.example.com"))))
        .isEqualTo("The token was issued by another issuer.");
  }

  @Test
  void anUnsignedOrSharedSecretTokenIsRefused() throws Exception {
    String unsigned = new PlainJWT(claims(c -> {}).build()).serialize();
    SignedJWT hmac = new SignedJWT(new JWSHeader(JWSAlgorithm.HS256), claims(c -> {}).build());
    hmac.sign(new MACSigner(new byte[32]));

    assertThat(verifier.verify(unsigned)).isInstanceOf(Refused.class);
    assertThat(verifier.verify(hmac.serialize())).isInstanceOf(Refused.class);
  }

  @Test
  void aTokenWithoutExpiryOrUserIsRefused() throws Exception {
    assertThat(reason(token(issuerKey, c -> c.expirationTime(null))))
        .isEqualTo("The token has no expiry (exp).");
    assertThat(reason(token(issuerKey, c -> c.subject(null))))
        .isEqualTo("The token names no user: its 'sub' claim is missing or empty.");
  }

  @Test
  void whatIsNotAJwtIsRefusedWithoutEchoingIt() {
    assertThat(reason("not.a-jwt.at-all")).isEqualTo("The token is not a JWT.");
  }

  @Test
  void aRememberedTokenIsNeverTrustedPastItsExpiry() throws Exception {
    Instant start = Instant.now();
    AtomicReference<Instant> now = new AtomicReference<>(start);
    Clock clock =
        new Clock() {
          @Override
          public ZoneId getZone() {
            return ZoneOffset.UTC;
          }

          @Override
          public Clock withZone(ZoneId zone) {
            return this;
          }

          @Override
          public Instant instant() {
            return now.get();
          }
        };
    Path jwks = directory.resolve("jwks.json");
    JwtVerifier timed =
        new JwtVerifier(
            new AuthConfig.Jwt(
                URI.create(ISSUER),
                AUDIENCE,
                new AuthConfig.Keys.File(jwks),
                "sub",
                "toolhost_profiles",
                List.of("main")),
            clock);
    String token = token(issuerKey, c -> c.expirationTime(Date.from(start.plusSeconds(30))));

    Authentication first = timed.verify(token);
    Authentication again = timed.verify(token);
    // Past its expiry and the minute of clock skew every check allows: refused, remembered or not.
    now.set(start.plusSeconds(100));
    Authentication late = timed.verify(token);

    assertThat(first).isInstanceOf(Accepted.class);
    assertThat(again).isEqualTo(first);
    assertThat(late).isEqualTo(new Refused("The token has expired."));
  }

  private Principal accepted(String token) {
    Authentication result = verifier.verify(token);
    assertThat(result).isInstanceOf(Accepted.class);
    return ((Accepted) result).principal();
  }

  private String reason(String token) {
    Authentication result = verifier.verify(token);
    assertThat(result).isInstanceOf(Refused.class);
    return ((Refused) result).reason();
  }

  private static JWTClaimsSet.Builder claims(Consumer<JWTClaimsSet.Builder> change) {
    JWTClaimsSet.Builder claims =
        new JWTClaimsSet.Builder()
            .issuer(ISSUER)
            .audience(AUDIENCE)
            .subject("alice")
            .issueTime(new Date())
            .expirationTime(Date.from(Instant.now().plusSeconds(600)));
    change.accept(claims);
    return claims;
  }

  /** A token signed by the key, with the usual claims changed as given. */
  static String token(RSAKey key, Consumer<JWTClaimsSet.Builder> change) throws Exception {
    SignedJWT jwt =
        new SignedJWT(
            new JWSHeader.Builder(JWSAlgorithm.RS256)
                .keyID(key.getKeyID())
                .type(new JOSEObjectType("at+jwt"))
                .build(),
            claims(change).build());
    jwt.sign(new RSASSASigner(key));
    return jwt.serialize();
  }
}
