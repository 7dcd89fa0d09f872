package dev.toolhost.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.toolhost.core.spi.Authenticator;
import dev.toolhost.core.spi.Authenticator.Accepted;
import dev.toolhost.core.spi.ConfigException;
import dev.toolhost.core.spi.Principal;
import dev.toolhost.testing.TestHost;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The auth: section read, checked at its lines, and started with tokens from the environment. */
class AuthConfigTest {

  /** A section with one principal, alice, whose token is in ALICE_TOKEN. */
  private static final String ALICE =
      """
      auth:
        principals:
          alice:
            token_env: ALICE_TOKEN
            user: alice
            profiles: [main]
      """;

  private static final Map<String, String> TOKENS =
      Map.of("ALICE_TOKEN", "alice-secret-token", "GATEWAY_TOKEN", "gateway-secret-token");

  @Test
  void eachStaticTokenNamesItsPrincipalWithItsUserAndProfiles() {
    try (TestHost host =
        host(
            ALICE
                + """
                    gateway:
                      token_env: GATEWAY_TOKEN
                      profiles: [subagent, main]
                      act_as_users: true
                      audit: true
                """,
            TOKENS)) {
      Authenticator authenticator = host.runtime().service(Authenticator.class).orElseThrow();

      Principal alice = accepted(authenticator, "alice-secret-token");
      Principal gateway = accepted(authenticator, "gateway-secret-token");

      assertThat(alice)
          .isEqualTo(
              new Principal(
                  "alice", Optional.of("alice"), Optional.of(List.of("main")), false, false));
      assertThat(gateway.defaultProfile()).isEqualTo("subagent");
      assertThat(gateway.actAsUsers()).isTrue();
      assertThat(gateway.audit()).isTrue();
      assertThat(authenticator.authenticate("alice-secret-tokenx"))
          .isInstanceOf(Authenticator.Refused.class);
      // No JWT configured: no open path, no authorization server.
      assertThat(authenticator.openPaths()).isEmpty();
      assertThat(authenticator.authorizationServer()).isEmpty();
    }
  }

  @Test
  void everyProblemOfTheSectionIsPlacedAtItsLine() {
    assertThatThrownBy(
            () ->
                host(
                    """
                    auth:
                      principals:
                        alice:
                          token_env: alice's token
                          profiles: [main, nosuch]
                        bob:
                          token_env: BOB_TOKEN
                          user: bob
                      jwt:
                        issuer: id.example.com
                        audience: toolhost
                    """,
                    TOKENS))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining(
            "toolhost.yaml line 4, column 18: 'auth.principals.alice.token_env' is 'alice's token'")
        .hasMessageContaining(
            "line 3, column 5: 'auth.principals.alice' names no user: give it a 'user'")
        .hasMessageContaining(
            "line 5, column 24: 'auth.principals.alice.profiles' names 'nosuch', which is no"
                + " profile of this host")
        .hasMessageContaining(
            "line 6, column 5: 'auth.principals.bob.profiles' is missing or empty")
        .hasMessageContaining("line 9, column 3: 'auth.jwt' needs exactly one of jwks_url")
        .hasMessageContaining("line 10, column 13: 'auth.jwt.issuer' is 'id.example.com'")
        .hasMessageContaining("expected the name of an environment variable, such as ALICE_TOKEN");
  }

  @Test
  void aTokenVariableThatIsNotSetStopsTheHostNamingIt() {
    assertThatThrownBy(() -> host(ALICE, Map.of()))
        .hasMessageContaining(
            "auth.principals.alice.token_env names ALICE_TOKEN, which is not set in the host's"
                + " environment");
  }

  @Test
  void twoPrincipalsWithOneTokenStopTheHost() {
    assertThatThrownBy(
            () ->
                host(
                    ALICE
                        + """
                            mallory:
                              token_env: SAME_TOKEN
                              user: mallory
                              profiles: [main]
                        """,
                    Map.of("ALICE_TOKEN", "one-token", "SAME_TOKEN", "one-token")))
        .hasMessageContaining(
            "The principals 'alice' and 'mallory' have the same bearer token: give each its own.");
  }

  private static Principal accepted(Authenticator authenticator, String token) {
    Authenticator.Authentication result = authenticator.authenticate(token);
    assertThat(result).isInstanceOf(Accepted.class);
    return ((Accepted) result).principal();
  }

  private static TestHost host(String yaml, Map<String, String> environment) {
    return TestHost.builder()
        .config(yaml)
        .environment(environment)
        .extensions(List.of(new AuthExtension()))
        .start();
  }
}
