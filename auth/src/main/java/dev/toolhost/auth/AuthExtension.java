package dev.toolhost.auth;

import dev.toolhost.core.ApiError;
import dev.toolhost.core.spi.Authenticator;
import dev.toolhost.core.spi.ConfigException;
import dev.toolhost.core.spi.ConfigSections;
import dev.toolhost.core.spi.HostContext;
import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.core.spi.Principal;
import dev.toolhost.core.spi.Route;
import dev.toolhost.core.spi.SectionReading;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * The auth extension binds credentials to principals (the {@code auth:} section, {@link
 * AuthConfig}): it provides the host's {@link Authenticator}, which an HTTP front asks for the
 * principal of every request, and, with OAuth bearer tokens, serves the protected resource metadata
 * (RFC 9728) at {@code /.well-known/oauth-protected-resource}, open to every caller as a client
 * finds there where to get a token.
 *
 * <p>Off until configured: without the section the host's single token, if any, is its only
 * credential. Every token is read from its variable at start; one that is not set, or two
 * principals with the same token, stop the host naming them.
 */
public final class AuthExtension implements HostExtension<AuthConfig> {

  /** The section's key. */
  public static final String NAME = "auth";

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public Set<Class<?>> provides() {
    return Set.of(Authenticator.class);
  }

  @Override
  public JsonNode configSchema() {
    return ConfigSections.schema(AuthConfig.Raw.class);
  }

  @Override
  public AuthConfig read(JsonNode section, SectionReading reading) {
    return AuthConfig.read(section, reading);
  }

  @Override
  public void start(HostContext host, Optional<AuthConfig> section) {
    if (section.isEmpty()) {
      return;
    }
    AuthConfig config = section.get();
    Map<Principal, String> tokens = new LinkedHashMap<>();
    Map<String, String> namesByToken = new LinkedHashMap<>();
    config
        .principals()
        .forEach(
            (name, given) -> {
              String token = host.environment().get(given.tokenEnv());
              if (token == null || token.isBlank()) {
                throw new ConfigException(
                    "auth.principals."
                        + name
                        + ".token_env names "
                        + given.tokenEnv()
                        + ", which is not set in the host's environment: set it to the"
                        + " principal's bearer token.");
              }
              String other = namesByToken.putIfAbsent(token.strip(), name);
              if (other != null) {
                throw new ConfigException(
                    "The principals '"
                        + other
                        + "' and '"
                        + name
                        + "' have the same bearer token: give each its own.");
              }
              // The scanner and the sandbox (which start after, as they use the authenticator)
              // redact it wherever it shows, whatever its variable is called.
              host.secret("auth.principals." + name + ".token", token.strip());
              tokens.put(
                  new Principal(
                      name,
                      given.user(),
                      Optional.of(given.profiles()),
                      given.actAsUsers(),
                      given.audit()),
                  token.strip());
            });
    Optional<JwtVerifier> verifier = Optional.empty();
    if (config.jwt().isPresent()) {
      try {
        verifier = Optional.of(new JwtVerifier(config.jwt().get()));
      } catch (IOException e) {
        throw new ConfigException("auth.jwt: " + e.getMessage());
      }
      String issuer = config.jwt().get().issuer().toString();
      host.route(new Route("GET", Credentials.METADATA_PATH, request -> metadata(request, issuer)));
    }
    host.provide(
        Authenticator.class,
        new Credentials(tokens, verifier, config.jwt().map(jwt -> jwt.issuer().toString())));
  }

  /**
   * The protected resource metadata: this host (as the request names it, which the request guard
   * has checked) and the authorization server that issues its tokens.
   */
  private static Route.Answer metadata(Route.Request request, String issuer) {
    Optional<String> host = request.header("host");
    if (host.isEmpty()) {
      return Route.Answer.error(ApiError.INVALID_REQUEST, "The request names no Host.");
    }
    ObjectNode document = JsonMapper.shared().createObjectNode();
    document.put("resource", "http://" + host.get() + "/");
    document.putArray("authorization_servers").add(issuer);
    document.putArray("bearer_methods_supported").add("header");
    document.put("resource_name", "Toolhost");
    return Route.Answer.json(document.toString());
  }
}
