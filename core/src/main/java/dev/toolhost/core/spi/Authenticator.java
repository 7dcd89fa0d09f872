package dev.toolhost.core.spi;

import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * An authenticator finds the principal a bearer token belongs to: the contract an extension (the
 * {@code auth:} section's) provides and an HTTP front asks for every request but those to its
 * {@linkplain #openPaths open paths}. A host's own single token is the front's to check first.
 *
 * <p>Thread-safe; {@link #authenticate} may block (a JWT's keys fetched from their URL) and never
 * throws for a bad token: it refuses it, saying why.
 */
public interface Authenticator {

  /** The principal the token belongs to, or why it is refused. */
  Authentication authenticate(String token);

  /**
   * The OAuth authorization servers that issue this host's tokens, when it takes OAuth bearer
   * tokens: a 401 then names the host's protected resource metadata (RFC 9728) in its {@code
   * WWW-Authenticate} challenge, as the MCP authorization specification has it.
   */
  Optional<String> authorizationServer();

  /** Paths served with no credential (protected resource metadata); GET only. */
  default Set<String> openPaths() {
    return Set.of();
  }

  /**
   * The SHA-256 digest of a token, as every credential is held and compared: in constant time
   * ({@link java.security.MessageDigest#isEqual}) with a digest of the same length whatever the
   * token's, so that neither a token nor its length shows in the timing.
   */
  static byte[] digest(String token) {
    try {
      return java.security.MessageDigest.getInstance("SHA-256")
          .digest(token.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException("Every Java platform has SHA-256", e);
    }
  }

  /** What became of a token: a principal, or a refusal. */
  sealed interface Authentication {}

  /**
   * The token is good.
   *
   * @param principal whose token it is
   */
  record Accepted(Principal principal) implements Authentication {
    public Accepted {
      Objects.requireNonNull(principal, "principal");
    }
  }

  /**
   * The token is refused.
   *
   * @param reason why, for the caller and the {@code WWW-Authenticate} challenge's {@code
   *     error_description}: never the token, never a key
   */
  record Refused(String reason) implements Authentication {
    public Refused {
      Objects.requireNonNull(reason, "reason");
    }
  }
}
