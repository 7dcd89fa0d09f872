package dev.toolhost.benchmarks;

import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.RSASSASigner;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.jwk.gen.RSAKeyGenerator;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import dev.toolhost.host.HostConfig;
import dev.toolhost.server.Host;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Comparator;
import java.util.Date;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
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
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The cost of identity and audit on the HTTP API: {@code POST /v1/tools/add/invoke} on four hosts
 * alike but for who calls and what is kept, in one run. The raw baseline is a principal's static
 * token with no journal; beside it a JWT (RS256, checked for signature, issuer, audience and expiry
 * against a JWKS file) with no journal, the static token with the audit journal on (JSON lines
 * under a temporary directory), and a JWT with the journal on. Each call is one HTTP/1.1 exchange
 * over a kept-alive connection with the JDK's client.
 *
 * <p>Average time per call, in microseconds; the ratio of each to {@code staticToken} is the cost.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(value = 1)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class IdentityCostBenchmark {

  private static final String TOKEN = "bench-alice-token-5d1c";
  private static final String ISSUER = "https://id.example.com";
  private static final String BODY = "{\"arguments\": " + AddTool.ARGUMENTS + "}";

  private Path directory;
  private Host staticHost;
  private Host jwtHost;
  private Host staticJournalHost;
  private Host jwtJournalHost;
  private HttpClient client;
  private String jwt;

  @Setup(Level.Trial)
  public void setUp() throws Exception {
    directory = Files.createTempDirectory("identity-bench");
    RSAKey key = new RSAKeyGenerator(2048).keyID("bench").generate();
    Path jwks = directory.resolve("jwks.json");
    Files.writeString(jwks, new JWKSet(key.toPublicJWK()).toString());
    SignedJWT token =
        new SignedJWT(
            new JWSHeader.Builder(JWSAlgorithm.RS256)
                .keyID(key.getKeyID())
                .type(new JOSEObjectType("at+jwt"))
                .build(),
            new JWTClaimsSet.Builder()
                .issuer(ISSUER)
                .audience("toolhost")
                .subject("alice")
                .expirationTime(Date.from(Instant.now().plusSeconds(3_600)))
                .build());
    token.sign(new RSASSASigner(key));
    jwt = token.serialize();
    String principals =
        """
        auth:
          principals:
            alice: {token_env: ALICE_TOKEN, user: alice, profiles: [main]}
        """;
    String jwts =
        """
        auth:
          jwt:
            issuer: %s
            audience: toolhost
            jwks_file: %s
            profiles: [main]
        """
            .formatted(ISSUER, jwks);
    String journal = "audit:\n  state_dir: %s\n";
    staticHost = start(principals);
    jwtHost = start(jwts);
    staticJournalHost = start(principals + journal.formatted(directory.resolve("audit-static")));
    jwtJournalHost = start(jwts + journal.formatted(directory.resolve("audit-jwt")));
    client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    for (Host host : new Host[] {staticHost, staticJournalHost}) {
      check(invoke(host, TOKEN));
    }
    for (Host host : new Host[] {jwtHost, jwtJournalHost}) {
      check(invoke(host, jwt));
    }
  }

  private Host start(String yaml) {
    Host host =
        Host.builder(HostConfig.parse("http:\n  port: 0\n" + yaml, "toolhost.yaml", directory))
            .environment(Map.of("ALICE_TOKEN", TOKEN))
            .build();
    AddTool.register(host.registry());
    host.start();
    return host;
  }

  private static void check(String answer) {
    if (!answer.contains("\"content\":\"5\"")) {
      throw new IllegalStateException("The invoke did not answer 5: " + answer);
    }
  }

  private String invoke(Host host, String bearer) throws Exception {
    URI uri = host.uri().resolve("/v1/tools/" + AddTool.INLINE_NAME + "/invoke");
    HttpResponse<String> response =
        client.send(
            HttpRequest.newBuilder(uri)
                .header("Authorization", "Bearer " + bearer)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(BODY))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    return response.body();
  }

  @TearDown(Level.Trial)
  public void tearDown() throws Exception {
    client.close();
    for (Host host : new Host[] {staticHost, jwtHost, staticJournalHost, jwtJournalHost}) {
      host.close();
    }
    try (Stream<Path> files = Files.walk(directory)) {
      for (Path file : files.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(file);
      }
    }
  }

  /** The raw baseline: a principal's static token, no journal. */
  @Benchmark
  public int staticToken() throws Exception {
    return invoke(staticHost, TOKEN).length();
  }

  @Benchmark
  public int jwt() throws Exception {
    return invoke(jwtHost, jwt).length();
  }

  @Benchmark
  public int staticTokenWithJournal() throws Exception {
    return invoke(staticJournalHost, TOKEN).length();
  }

  @Benchmark
  public int jwtWithJournal() throws Exception {
    return invoke(jwtJournalHost, jwt).length();
  }
}
