package dev.toolhost.auth;

import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.RSASSASigner;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.jwk.gen.RSAKeyGenerator;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import dev.toolhost.core.spi.Authenticator;
import dev.toolhost.core.spi.Principal;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What checking one request's credential costs, in-process: a static token (its SHA-256 digest
 * compared in constant time with ten principals'), beside a JWT (RS256 signature, issuer, audience,
 * expiry and claims) against a JWKS file. Average time per check, in microseconds.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(value = 1)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class CredentialsBenchmark {

  private Credentials credentials;
  private String jwt;

  @Setup(Level.Trial)
  public void setUp() throws Exception {
    RSAKey key = new RSAKeyGenerator(2048).keyID("bench").generate();
    Path jwks = Files.createTempFile("jwks", ".json");
    Files.writeString(jwks, new JWKSet(key.toPublicJWK()).toString());
    SignedJWT token =
        new SignedJWT(
            new JWSHeader.Builder(JWSAlgorithm.RS256)
                .keyID(key.getKeyID())
                .type(new JOSEObjectType("at+jwt"))
                .build(),
            new JWTClaimsSet.Builder()
                .issuer("https://id.example.com")
                .audience("toolhost")
                .subject("alice")
                .expirationTime(Date.from(Instant.now().plusSeconds(3_600)))
                .build());
    token.sign(new RSASSASigner(key));
    jwt = token.serialize();
    Map<Principal, String> tokens = new java.util.LinkedHashMap<>();
    for (int i = 0; i < 10; i++) {
      tokens.put(
          new Principal("p" + i, Optional.of("u" + i), Optional.of(List.of("main")), false, false),
          "static-token-" + i);
    }
    AuthConfig.Jwt config =
        new AuthConfig.Jwt(
            URI.create("https://id.example.com"),
            "toolhost",
            new AuthConfig.Keys.File(jwks),
            "sub",
            "toolhost_profiles",
            List.of("main"));
    credentials =
        new Credentials(
            tokens, Optional.of(new JwtVerifier(config)), Optional.of("https://id.example.com"));
    if (!(credentials.authenticate(jwt) instanceof Authenticator.Accepted)) {
      throw new IllegalStateException("The JWT was refused: " + credentials.authenticate(jwt));
    }
  }

  /** The raw baseline: a static token. */
  @Benchmark
  public Object staticToken() {
    return credentials.authenticate("static-token-7");
  }

  @Benchmark
  public Object jwt() {
    return credentials.authenticate(jwt);
  }
}
