package dev.toolhost.auth;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.KeySourceException;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.source.ImmutableJWKSet;
import com.nimbusds.jose.jwk.source.JWKSource;
import com.nimbusds.jose.jwk.source.JWKSourceBuilder;
import com.nimbusds.jose.proc.BadJOSEException;
import com.nimbusds.jose.proc.BadJWSException;
import com.nimbusds.jose.proc.DefaultJOSEObjectTypeVerifier;
import com.nimbusds.jose.proc.JWSVerificationKeySelector;
import com.nimbusds.jose.proc.SecurityContext;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.proc.BadJWTException;
import com.nimbusds.jwt.proc.DefaultJWTProcessor;
import dev.toolhost.core.spi.Authenticator;
import dev.toolhost.core.spi.Authenticator.Accepted;
import dev.toolhost.core.spi.Authenticator.Authentication;
import dev.toolhost.core.spi.Authenticator.Refused;
import dev.toolhost.core.spi.Principal;
import java.io.IOException;
import java.net.MalformedURLException;
import java.nio.ByteBuffer;
import java.text.ParseException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A JWT verifier accepts the OAuth bearer tokens of one issuer: a JWT signed by one of the issuer's
 * keys (RSA, EC or EdDSA, never {@code none} or a shared secret), whose {@code iss} is the issuer,
 * whose {@code aud} holds this host's audience, and which has not expired (a minute's clock skew
 * allowed), as the MCP authorization specification asks of a resource server. Its principal is
 * named by the token's subject, makes its calls as the user its user claim names, and may use the
 * profiles its profiles claim lists (else the config's).
 *
 * <p>Validation is nimbus-jose-jwt's; keys from a URL are fetched when a token names a key not yet
 * held, cached, and refetched on a rotation. A refusal says why in words for the caller (expired,
 * another audience, a signature no key of the issuer matches), never the token. Thread-safe.
 */
final class JwtVerifier {

  private static final Logger LOG = LoggerFactory.getLogger(JwtVerifier.class);

  // Public-key algorithms only: an HMAC key would be a secret shared with every token holder.
  private static final Set<JWSAlgorithm> ALGORITHMS =
      Set.of(
          JWSAlgorithm.RS256,
          JWSAlgorithm.RS384,
          JWSAlgorithm.RS512,
          JWSAlgorithm.PS256,
          JWSAlgorithm.PS384,
          JWSAlgorithm.PS512,
          JWSAlgorithm.ES256,
          JWSAlgorithm.ES384,
          JWSAlgorithm.ES512,
          JWSAlgorithm.EdDSA,
          JWSAlgorithm.Ed25519);

  // How far the host's clock and the issuer's may disagree, as most resource servers allow.
  private static final Duration CLOCK_SKEW = Duration.ofSeconds(60);

  /** How long a verified token is taken on trust before its signature is checked again. */
  static final Duration TRUSTED_FOR = Duration.ofSeconds(60);

  /** How many verified tokens are remembered at most. */
  static final int REMEMBERED = 4_096;

  private final AuthConfig.Jwt config;
  private final DefaultJWTProcessor<SecurityContext> processor;
  private final Clock clock;

  // A client sends one token with many requests: each verified token's principal, by the token's
  // SHA-256 digest, until it expires or TRUSTED_FOR passes (so that a key the issuer withdraws
  // stops its tokens within that time), whichever comes first. The least recently used goes
  // first. Checking an RS256 signature costs a request more than the rest of its path.
  private final Map<ByteBuffer, Verified> verified =
      new LinkedHashMap<>(64, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<ByteBuffer, Verified> eldest) {
          return size() > REMEMBERED;
        }
      };

  private record Verified(Principal principal, Instant until) {}

  /**
   * A verifier of the config's tokens.
   *
   * @throws IOException when a JWKS file cannot be read or parsed
   */
  JwtVerifier(AuthConfig.Jwt config) throws IOException {
    this(config, Clock.systemUTC());
  }

  /** A verifier of the config's tokens that reads the given clock. */
  JwtVerifier(AuthConfig.Jwt config, Clock clock) throws IOException {
    this.config = config;
    this.clock = clock;
    this.processor = new DefaultJWTProcessor<>();
    // Access tokens are typed "at+jwt" (RFC 9068); many issuers send "JWT" or no type.
    processor.setJWSTypeVerifier(
        new DefaultJOSEObjectTypeVerifier<>(
            JOSEObjectType.JWT, new JOSEObjectType("at+jwt"), null));
    processor.setJWSKeySelector(new JWSVerificationKeySelector<>(ALGORITHMS, keys(config.keys())));
    processor.setJWTClaimsSetVerifier((claims, context) -> checkClaims(claims));
  }

  /**
   * The claims' rules, written here rather than left to the library's verifier so that each refusal
   * says which rule the token broke, in words a caller can act on.
   */
  private void checkClaims(JWTClaimsSet claims) throws BadJWTException {
    Instant now = clock.instant();
    if (!config.issuer().toString().equals(claims.getIssuer())) {
      throw new BadJWTException("The token was issued by another issuer.");
    }
    if (claims.getAudience() == null || !claims.getAudience().contains(config.audience())) {
      throw new BadJWTException("The token is not for this host: its audience is another.");
    }
    Date expiry = claims.getExpirationTime();
    if (expiry == null) {
      throw new BadJWTException("The token has no expiry (exp).");
    }
    if (expiry.toInstant().plus(CLOCK_SKEW).isBefore(now)) {
      throw new BadJWTException("The token has expired.");
    }
    Date notBefore = claims.getNotBeforeTime();
    if (notBefore != null && notBefore.toInstant().minus(CLOCK_SKEW).isAfter(now)) {
      throw new BadJWTException("The token is not valid yet.");
    }
  }

  private static JWKSource<SecurityContext> keys(AuthConfig.Keys keys) throws IOException {
    return switch (keys) {
      case AuthConfig.Keys.Url url -> {
        try {
          yield JWKSourceBuilder.create(url.url().toURL()).retrying(true).build();
        } catch (MalformedURLException e) {
          throw new IOException("The JWKS URL " + url.url() + " is not a URL.", e);
        }
      }
      case AuthConfig.Keys.File file -> {
        try {
          yield new ImmutableJWKSet<>(JWKSet.load(file.path().toFile()));
        } catch (ParseException e) {
          throw new IOException(
              "The JWKS file " + file.path() + " is not a JSON Web Key Set: " + e.getMessage(), e);
        }
      }
    };
  }

  /** The principal of a JWT, or why it is refused. */
  Authentication verify(String token) {
    ByteBuffer digest = ByteBuffer.wrap(Authenticator.digest(token));
    Instant now = clock.instant();
    synchronized (verified) {
      Verified known = verified.get(digest);
      if (known != null && now.isBefore(known.until())) {
        return new Accepted(known.principal());
      }
    }
    JWTClaimsSet claims;
    try {
      claims = processor.process(token, null);
    } catch (ParseException e) {
      return new Refused("The token is not a JWT.");
    } catch (BadJWTException e) {
      // The claims' rules, whose messages are this class's own.
      return new Refused(e.getMessage());
    } catch (BadJWSException e) {
      return new Refused("The token's signature does not match the issuer's keys.");
    } catch (KeySourceException e) {
      LOG.warn("The keys of the issuer {} could not be fetched", config.issuer(), e);
      return new Refused("The issuer's keys could not be fetched to check the token; try again.");
    } catch (BadJOSEException e) {
      // No key of the issuer has the token's key id or algorithm: signed by someone else.
      return new Refused("The token is not signed by a key of the issuer " + config.issuer() + ".");
    } catch (JOSEException e) {
      return new Refused("The token could not be checked: " + e.getMessage());
    }
    Optional<String> user = text(claims, config.userClaim());
    if (user.isEmpty()) {
      return new Refused(
          "The token names no user: its '" + config.userClaim() + "' claim is missing or empty.");
    }
    List<String> profiles = profiles(claims);
    if (profiles.isEmpty()) {
      return new Refused(
          "The token's '" + config.profilesClaim() + "' claim lists no profile of this host.");
    }
    String subject = Optional.ofNullable(claims.getSubject()).orElse(user.get());
    Principal principal = new Principal(subject, user, Optional.of(profiles), false, false);
    Instant until = now.plus(TRUSTED_FOR);
    if (claims.getExpirationTime().toInstant().isBefore(until)) {
      until = claims.getExpirationTime().toInstant();
    }
    synchronized (verified) {
      verified.put(digest, new Verified(principal, until));
    }
    return new Accepted(principal);
  }

  private static Optional<String> text(JWTClaimsSet claims, String name) {
    Object value = claims.getClaim(name);
    return value instanceof String text && !text.isBlank()
        ? Optional.of(text.strip())
        : Optional.empty();
  }

  private List<String> profiles(JWTClaimsSet claims) {
    Object value = claims.getClaim(config.profilesClaim());
    if (value == null) {
      return config.profiles();
    }
    List<String> named = new ArrayList<>();
    if (value instanceof String text) {
      named.addAll(Arrays.asList(text.strip().split("\\s+")));
    } else if (value instanceof List<?> list) {
      list.forEach(item -> named.add(String.valueOf(item)));
    }
    return named.stream().filter(name -> !name.isBlank()).distinct().toList();
  }
}
