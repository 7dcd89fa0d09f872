package dev.toolhost.bus;

import dev.toolhost.core.spi.ConfigException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Message buses are the buses a URI can name: {@code memory:} for the in-process bus, and the
 * schemes of the {@link MessageBusProvider}s on the class path (RabbitMQ's {@code amqp://} and
 * {@code amqps://}). A URI with a user and no password takes it from {@link #PASSWORD_ENVIRONMENT},
 * so that a password need not appear in {@code ps} or a shell history; the password is never
 * printed or logged, and a URI that does not parse is refused naming it with the password hidden.
 */
public final class MessageBuses {

  /** The environment variable that holds the bus password when the URI names only a user. */
  public static final String PASSWORD_ENVIRONMENT = "TOOLHOST_BUS_PASSWORD";

  private MessageBuses() {}

  /** The providers on the class path. */
  private static List<MessageBusProvider> providers() {
    List<MessageBusProvider> found = new ArrayList<>();
    ServiceLoader.load(MessageBusProvider.class).forEach(found::add);
    return found;
  }

  /** What a bus URI may be, for an error message: memory: or one of the providers' forms. */
  private static String expected(List<MessageBusProvider> providers) {
    StringBuilder expected = new StringBuilder("expected memory:");
    for (MessageBusProvider provider : providers) {
      expected.append(" or ").append(provider.example());
    }
    return expected.toString();
  }

  /**
   * Opens the bus the URI names, with no password from an environment.
   *
   * @throws ConfigException for a URI that is not memory: or a valid URI of a provider's scheme
   * @throws BusException naming the URI, password hidden, when the bus cannot be reached
   */
  public static MessageBus open(String text) {
    return open(text, Map.of());
  }

  /**
   * Opens the bus the URI names, reading a missing password from the given environment.
   *
   * @throws ConfigException for a URI that is not memory: or a valid URI of a provider's scheme
   * @throws BusException naming the URI, password hidden, when the bus cannot be reached
   */
  public static MessageBus open(String text, Map<String, String> environment) {
    if (text.equals("memory:")) {
      return new InMemoryBus();
    }
    List<MessageBusProvider> providers = providers();
    URI parsed;
    try {
      // A server authority: host and numeric port, not any text between // and /.
      parsed = new URI(text).parseServerAuthority();
    } catch (URISyntaxException e) {
      throw new ConfigException(
          "--bus: '"
              + redact(text)
              + "' is not a valid URI ("
              + reason(e)
              + "; "
              + expected(providers)
              + ")");
    }
    String scheme = parsed.getScheme() == null ? "" : parsed.getScheme().toLowerCase(Locale.ROOT);
    MessageBusProvider provider =
        providers.stream()
            .filter(candidate -> candidate.schemes().contains(scheme))
            .findFirst()
            .orElseThrow(
                () ->
                    new ConfigException(
                        "--bus: unknown scheme in '"
                            + redact(text)
                            + "' ("
                            + expected(providers)
                            + ")"));
    if (parsed.getHost() == null) {
      throw new ConfigException(
          "--bus: '" + redact(text) + "' names no host (" + expected(providers) + ")");
    }
    return provider.open(withPassword(parsed, environment));
  }

  /** The URI with the password from the environment when it names a user and no password. */
  private static URI withPassword(URI uri, Map<String, String> environment) {
    String userInfo = uri.getRawUserInfo();
    String password = environment.get(PASSWORD_ENVIRONMENT);
    if (userInfo == null || userInfo.contains(":") || password == null || password.isEmpty()) {
      return uri;
    }
    String encoded = URLEncoder.encode(password, StandardCharsets.UTF_8).replace("+", "%20");
    return URI.create(
        uri.toString()
            .replaceFirst(
                Pattern.quote(userInfo + "@"),
                Matcher.quoteReplacement(userInfo + ":" + encoded + "@")));
  }

  /** Why a URI does not parse, without echoing it (the exception's message holds it whole). */
  private static String reason(URISyntaxException e) {
    String reason = e.getReason();
    return reason == null || reason.isBlank()
        ? "it does not parse"
        : reason.toLowerCase(Locale.ROOT);
  }

  /**
   * The URI text with the password of its user info replaced by {@code ***}, whether or not the
   * rest of it parses: {@code amqp://u:pw@host:notaport/} shows as {@code
   * amqp://u:***@host:notaport/}.
   */
  public static String redact(String text) {
    int start = text.indexOf("://");
    if (start < 0) {
      return text;
    }
    int authorityStart = start + 3;
    int authorityEnd = text.length();
    for (char end : new char[] {'/', '?', '#'}) {
      int at = text.indexOf(end, authorityStart);
      if (at >= 0 && at < authorityEnd) {
        authorityEnd = at;
      }
    }
    String authority = text.substring(authorityStart, authorityEnd);
    int at = authority.lastIndexOf('@');
    if (at < 0) {
      return text;
    }
    int colon = authority.indexOf(':');
    if (colon < 0 || colon > at) {
      return text;
    }
    return text.substring(0, authorityStart)
        + authority.substring(0, colon)
        + ":***"
        + authority.substring(at)
        + text.substring(authorityEnd);
  }
}
