package dev.toolhost.auth;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.core.spi.Authenticator.Accepted;
import dev.toolhost.core.spi.Authenticator.Authentication;
import dev.toolhost.core.spi.Authenticator.Refused;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Access tokens from a real OpenID provider (oidc-provider from npm), its keys fetched by URL. */
class OidcProviderTest {

  private static final String RESOURCE = "http://toolhost.test/";

  private static OidcProvider provider;
  private static JwtVerifier verifier;

  @BeforeAll
  static void startProvider() throws Exception {
    provider = OidcProvider.start();
    verifier =
        new JwtVerifier(
            new AuthConfig.Jwt(
                provider.issuer(),
                RESOURCE,
                new AuthConfig.Keys.Url(provider.jwks()),
                "sub",
                "toolhost_profiles",
                List.of("subagent")));
  }

  @AfterAll
  static void stopProvider() throws Exception {
    if (provider != null) {
      provider.close();
    }
  }

  @Test
  void theProvidersAccessTokenForThisHostIsAccepted() throws Exception {
    Authentication result = verifier.verify(provider.token(RESOURCE));

    assertThat(result).isInstanceOf(Accepted.class);
    Accepted accepted = (Accepted) result;
    assertThat(accepted.principal().user()).contains(OidcProvider.CLIENT);
    // The provider's claim (a word list), not the config's default.
    assertThat(accepted.principal().profiles()).contains(List.of("main"));
  }

  @Test
  void theProvidersTokenForAnotherResourceIsRefused() throws Exception {
    Authentication result = verifier.verify(provider.token("http://another.test/"));

    assertThat(result).isInstanceOf(Refused.class);
    assertThat(((Refused) result).reason())
        .isEqualTo("The token is not for this host: its audience is another.");
  }
}
