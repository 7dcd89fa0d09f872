package dev.toolhost.auth;

import dev.toolhost.core.spi.Authenticator;
import dev.toolhost.core.spi.Principal;
import java.security.MessageDigest;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Credentials are the bearer tokens the {@code auth:} section accepts: each static token bound to
 * its principal, and the JWTs of one issuer, when configured.
 *
 * <p>A static token is compared by its SHA-256 digest with every principal's in constant time, so
 * that neither which principal matched nor a token's length shows in the timing; a token that is no
 * static one and looks like a JWT goes to the JWT verifier. Thread-safe.
 */
final class Credentials implements Authenticator {

  /** The path of the protected resource metadata (RFC 9728). */
  static final String METADATA_PATH = "/.well-known/oauth-protected-resource";

  private final Map<Principal, byte[]> tokens;
  private final Optional<JwtVerifier> jwt;
  private final Optional<String> issuer;

  /**
   * Credentials of the given principals' tokens, and of a JWT verifier when there is one.
   *
   * @param tokens each principal's token, by principal
   * @param issuer the JWTs' issuer, when a verifier is given
   */
  Credentials(Map<Principal, String> tokens, Optional<JwtVerifier> jwt, Optional<String> issuer) {
    Map<Principal, byte[]> digests = new LinkedHashMap<>();
    tokens.forEach((principal, token) -> digests.put(principal, Authenticator.digest(token)));
    this.tokens = Map.copyOf(digests);
    this.jwt = jwt;
    this.issuer = issuer;
  }

  @Override
  public Authentication authenticate(String token) {
    byte[] given = Authenticator.digest(token);
    Principal found = null;
    for (Map.Entry<Principal, byte[]> entry : tokens.entrySet()) {
      // Every digest compared, whichever matches.
      if (MessageDigest.isEqual(given, entry.getValue())) {
        found = entry.getKey();
      }
    }
    if (found != null) {
      return new Accepted(found);
    }
    if (jwt.isPresent() && token.chars().filter(c -> c == '.').count() == 2) {
      return jwt.get().verify(token);
    }
    return new Refused("The bearer token is not valid for this host.");
  }

  @Override
  public Optional<String> authorizationServer() {
    return issuer;
  }

  @Override
  public Set<String> openPaths() {
    return jwt.isPresent() ? Set.of(METADATA_PATH) : Set.of();
  }
}
