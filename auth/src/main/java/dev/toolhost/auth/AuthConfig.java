package dev.toolhost.auth;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import dev.toolhost.core.spi.ConfigProblems;
import dev.toolhost.core.spi.ConfigSections;
import dev.toolhost.core.spi.EnvironmentNames;
import dev.toolhost.core.spi.SectionReading;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;
import tools.jackson.databind.JsonNode;

/**
 * An auth config is the {@code auth:} section of a host config: the principals that may call the
 * host, each bound to a credential, and the OAuth bearer tokens (JWT) it accepts. The host's single
 * token ({@code http.token_env}) stays what it was beside them: the operator's, with every profile.
 *
 * <pre>{@code
 * auth:
 *   principals:
 *     alice:
 *       token_env: ALICE_TOKEN      # its bearer token, read from this variable
 *       user: alice                 # every call of this principal is made as this user
 *       profiles: [main]            # the profiles it may use; the first is its default
 *     gateway:
 *       token_env: GATEWAY_TOKEN
 *       profiles: [main, subagent]
 *       act_as_users: true          # a trusted front end that names the user per call
 *       audit: true                 # may read the audit journal
 *   jwt:                            # OAuth 2.1 bearer tokens, as the MCP authorization spec says
 *     issuer: https://id.example.com
 *     audience: toolhost
 *     jwks_url: https://id.example.com/jwks   # or jwks_file
 *     user_claim: sub
 *     profiles_claim: toolhost_profiles
 *     profiles: [main]              # a token without the profiles claim gets these
 * }</pre>
 *
 * @param principals the principals with static tokens, by name, in the file's order
 * @param jwt the JWTs accepted, if any
 */
public record AuthConfig(Map<String, StaticPrincipal> principals, Optional<Jwt> jwt) {

  public AuthConfig {
    principals = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(principals));
    Objects.requireNonNull(jwt, "jwt");
  }

  /**
   * A principal with a static bearer token.
   *
   * @param tokenEnv the environment variable that holds its token
   * @param user the user its calls are made as, if it names one
   * @param profiles the profiles it may use, its default first; never empty
   * @param actAsUsers whether a request may name the user its calls act for
   * @param audit whether it may read the audit journal and every owner's resources
   */
  public record StaticPrincipal(
      String tokenEnv,
      Optional<String> user,
      List<String> profiles,
      boolean actAsUsers,
      boolean audit) {
    public StaticPrincipal {
      Objects.requireNonNull(tokenEnv, "tokenEnv");
      Objects.requireNonNull(user, "user");
      profiles = List.copyOf(profiles);
    }
  }

  /**
   * The OAuth bearer tokens accepted: JWTs signed by the issuer's keys, for this host's audience.
   *
   * @param issuer the {@code iss} a token must carry, and the authorization server the protected
   *     resource metadata names
   * @param audience the value a token's {@code aud} must hold
   * @param keys where the issuer's public keys are: a JWKS URL, fetched and cached, or a file
   * @param userClaim the claim that names the user a token's calls are made as
   * @param profilesClaim the claim that lists a token's profiles (a JSON list, or names separated
   *     by spaces)
   * @param profiles the profiles of a token without that claim, its default first
   */
  public record Jwt(
      URI issuer,
      String audience,
      Keys keys,
      String userClaim,
      String profilesClaim,
      List<String> profiles) {
    public Jwt {
      Objects.requireNonNull(issuer, "issuer");
      Objects.requireNonNull(audience, "audience");
      Objects.requireNonNull(keys, "keys");
      Objects.requireNonNull(userClaim, "userClaim");
      Objects.requireNonNull(profilesClaim, "profilesClaim");
      profiles = List.copyOf(profiles);
    }
  }

  /** Where an issuer's keys are: a JWKS URL or a JWKS file. */
  public sealed interface Keys {
    /** A JWKS URL, fetched when a token needs a key not yet held, and cached. */
    record Url(URI url) implements Keys {}

    /** A JWKS file, read once at start. */
    record File(Path path) implements Keys {}
  }

  private static final String AT = "/" + AuthExtension.NAME;
  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}");

  /**
   * Reads a section its schema accepts, adding its problems to the reading's; the result is only
   * meaningful when none was added.
   */
  public static AuthConfig read(JsonNode section, SectionReading reading) {
    ConfigProblems problems = reading.problems();
    Raw raw = ConfigSections.bind(AuthExtension.NAME, section, Raw.class);
    Map<String, StaticPrincipal> principals = new LinkedHashMap<>();
    if (raw.principals() != null) {
      raw.principals()
          .forEach(
              (name, given) -> {
                String at = AT + "/principals/" + name;
                if (!NAME.matcher(name).matches()) {
                  problems.atKey(
                      at,
                      "the principal '"
                          + name
                          + "' needs a plain name (letters, digits, _ . @ -, up to 64)");
                }
                if (given == null) {
                  problems.atValue(at, "'auth.principals." + name + "' is empty");
                  return;
                }
                principals.put(name, principal(name, given, at, reading));
              });
    }
    Optional<Jwt> jwt = raw.jwt() == null ? Optional.empty() : Optional.of(jwt(raw.jwt(), reading));
    if (principals.isEmpty() && jwt.isEmpty()) {
      problems.atValue(
          AT,
          "'auth' names no principal and no jwt: add principals (each with a token_env) or a jwt"
              + " section, or leave the section out");
    }
    return new AuthConfig(principals, jwt);
  }

  private static StaticPrincipal principal(
      String name, RawPrincipal given, String at, SectionReading reading) {
    ConfigProblems problems = reading.problems();
    String key = "auth.principals." + name;
    if (given.tokenEnv() == null) {
      problems.atValue(
          at,
          "'"
              + key
              + ".token_env' is missing (expected the name of the environment variable that holds"
              + " its bearer token, such as ALICE_TOKEN)");
    }
    String tokenEnv =
        EnvironmentNames.read(
                given.tokenEnv(),
                at + "/token_env",
                Optional.of("ALICE_TOKEN"),
                "bearer token",
                problems)
            .orElse("");
    Optional<String> user = Optional.ofNullable(given.user()).map(String::strip);
    if (user.isPresent() && user.get().isEmpty()) {
      problems.atValue(at + "/user", "'" + key + ".user' is empty");
    }
    if (user.isEmpty() && !Boolean.TRUE.equals(given.actAsUsers())) {
      problems.atKey(
          at,
          "'"
              + key
              + "' names no user: give it a 'user' its calls are made as, or 'act_as_users:"
              + " true' for a trusted front end that names the user per call");
    }
    List<String> profiles = profiles(given.profiles(), at + "/profiles", key, reading);
    return new StaticPrincipal(
        tokenEnv,
        user,
        profiles,
        Boolean.TRUE.equals(given.actAsUsers()),
        Boolean.TRUE.equals(given.audit()));
  }

  private static List<String> profiles(
      List<String> given, String at, String key, SectionReading reading) {
    if (given == null || given.isEmpty()) {
      reading
          .problems()
          .atKey(
              at.substring(0, at.lastIndexOf('/')),
              "'"
                  + key
                  + ".profiles' is missing or empty (expected the profiles it may use, its"
                  + " default first, such as [main])");
      return List.of("main");
    }
    List<String> profiles = new ArrayList<>();
    for (int i = 0; i < given.size(); i++) {
      String profile = given.get(i) == null ? "" : given.get(i).strip();
      if (!reading.profiles().contains(profile)) {
        reading
            .problems()
            .atValue(
                at + "/" + i,
                "'"
                    + key
                    + ".profiles' names '"
                    + profile
                    + "', which is no profile of this host (expected one of: "
                    + String.join(", ", reading.profiles())
                    + ")");
      } else if (!profiles.contains(profile)) {
        profiles.add(profile);
      }
    }
    return profiles.isEmpty() ? List.of("main") : profiles;
  }

  private static Jwt jwt(RawJwt raw, SectionReading reading) {
    ConfigProblems problems = reading.problems();
    String at = AT + "/jwt";
    URI issuer = url(raw.issuer(), at, "issuer", "https://id.example.com", problems);
    String audience = raw.audience() == null ? "" : raw.audience().strip();
    if (audience.isEmpty()) {
      problems.atValue(
          raw.audience() == null ? at : at + "/audience",
          "'auth.jwt.audience' is missing or empty (expected the audience a token for this host"
              + " carries, such as toolhost or this host's URL)");
    }
    Keys keys = new Keys.Url(URI.create("http://invalid.invalid/jwks"));
    if ((raw.jwksUrl() == null) == (raw.jwksFile() == null)) {
      problems.atKey(
          at,
          "'auth.jwt' needs exactly one of jwks_url (the issuer's JWKS endpoint) and jwks_file");
    } else if (raw.jwksUrl() != null) {
      keys =
          new Keys.Url(url(raw.jwksUrl(), at, "jwks_url", "https://id.example.com/jwks", problems));
    } else {
      try {
        keys = new Keys.File(reading.directory().resolve(raw.jwksFile().strip()));
      } catch (InvalidPathException e) {
        problems.atValue(
            at + "/jwks_file",
            "'auth.jwt.jwks_file' is '" + raw.jwksFile() + "' (expected a file)");
      }
    }
    String userClaim = claim(raw.userClaim(), "sub", at + "/user_claim", problems);
    String profilesClaim =
        claim(raw.profilesClaim(), "toolhost_profiles", at + "/profiles_claim", problems);
    List<String> profiles =
        raw.profiles() == null
            ? List.of("main")
            : profiles(raw.profiles(), at + "/profiles", "auth.jwt", reading);
    return new Jwt(issuer, audience, keys, userClaim, profilesClaim, profiles);
  }

  private static URI url(
      String given, String at, String key, String example, ConfigProblems problems) {
    if (given != null) {
      try {
        URI url = new URI(given.strip());
        if (url.getHost() != null
            && ("https".equalsIgnoreCase(url.getScheme())
                || "http".equalsIgnoreCase(url.getScheme()))) {
          return url;
        }
      } catch (URISyntaxException e) {
        // Reported below.
      }
    }
    problems.atValue(
        given == null ? at : at + "/" + key,
        "'auth.jwt."
            + key
            + "' is "
            + (given == null ? "missing" : "'" + given + "'")
            + " (expected an http or https URL, such as "
            + example
            + ")");
    return URI.create(example);
  }

  private static String claim(String given, String fallback, String at, ConfigProblems problems) {
    if (given == null) {
      return fallback;
    }
    if (given.isBlank()) {
      problems.atValue(
          at, "'" + ConfigProblems.dotted(at) + "' is empty (expected a claim's name)");
      return fallback;
    }
    return given.strip();
  }

  // ---- the section's raw shape: every key optional, so every field may be null ----

  record Raw(
      @JsonPropertyDescription("a mapping of principal names to their token and rights")
          Map<String, RawPrincipal> principals,
      RawJwt jwt) {}

  record RawPrincipal(
      @JsonPropertyDescription("the name of the environment variable that holds the token")
          String tokenEnv,
      String user,
      @JsonPropertyDescription("a list of profile names, the default first") List<String> profiles,
      Boolean actAsUsers,
      Boolean audit) {}

  record RawJwt(
      String issuer,
      String audience,
      String jwksUrl,
      String jwksFile,
      String userClaim,
      String profilesClaim,
      @JsonPropertyDescription("a list of profile names, the default first")
          List<String> profiles) {}
}
