package dev.toolhost.auth;

import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.testing.HostExtensionContract;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The auth extension keeps the host extension contract: off until configured, then principals whose
 * tokens come from the environment, and OAuth tokens with their protected resource metadata.
 */
class AuthExtensionContractTest extends HostExtensionContract<AuthConfig> {

  @Override
  protected HostExtension<AuthConfig> extension() {
    return new AuthExtension();
  }

  @Override
  protected Optional<String> validSection() {
    // The JWKS URL is fetched only when a token needs a key: nothing listens there.
    return Optional.of(
        """
        principals:
          alice:
            token_env: CONTRACT_ALICE_TOKEN
            user: alice
            profiles: [main]
        jwt:
          issuer: https://id.example.com
          audience: toolhost
          jwks_url: http://127.0.0.1:9/jwks
        """);
  }

  @Override
  protected Optional<Misspelling> misspelling() {
    return Optional.of(
        new Misspelling(
            """
            principals:
              alice:
                token_evn: CONTRACT_ALICE_TOKEN
            """,
            3,
            5,
            "token_evn"));
  }

  @Override
  protected Map<String, String> environment() {
    return Map.of("CONTRACT_ALICE_TOKEN", "contract-alice-token");
  }

  @Override
  protected Set<String> configuredTools() {
    return Set.of();
  }

  @Override
  protected List<String> routes() {
    return List.of("GET " + Credentials.METADATA_PATH);
  }
}
