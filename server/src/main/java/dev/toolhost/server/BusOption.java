package dev.toolhost.server;

import dev.toolhost.bus.InMemoryBus;
import dev.toolhost.bus.MessageBus;
import dev.toolhost.core.spi.ConfigException;
import dev.toolhost.rabbitmq.RabbitBus;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.Option;

/**
 * The bus option is the {@code --bus URI} every command that touches the bus takes: {@code memory:}
 * (the default) or {@code amqp://user:pass@host:port/vhost}; {@code TOOLHOST_BUS} when the option
 * is not given.
 *
 * <p>So that a password need not appear in {@code ps} or a shell history, a URI with a user and no
 * password ({@code amqp://toolhost@broker:5672/}) takes it from {@code TOOLHOST_BUS_PASSWORD}. A
 * URI that does not parse as a server address (a port that is not a number, say) is refused, naming
 * the URI with its password hidden; the password is never printed or logged.
 */
final class BusOption {

  /** The environment variable read when {@code --bus} is not given. */
  static final String ENVIRONMENT = "TOOLHOST_BUS";

  /** The environment variable that holds the bus password when the URI names only a user. */
  static final String PASSWORD_ENVIRONMENT = "TOOLHOST_BUS_PASSWORD";

  private static final String EXPECTED = "expected memory: or amqp://user:pass@host:5672/";

  @Option(
      names = "--bus",
      paramLabel = "URI",
      description =
          "The message bus: memory: (default) or amqp://user:pass@host:5672/ for RabbitMQ;"
              + " TOOLHOST_BUS when not given. With amqp://user@host:5672/ the password is read"
              + " from TOOLHOST_BUS_PASSWORD.")
  private Optional<String> uri = Optional.empty();

  /** The URI in force: the option, else the environment, else {@code memory:}. */
  String uri() {
    return uri(System.getenv());
  }

  /** The URI in force, reading {@code TOOLHOST_BUS} from the given environment. */
  String uri(Map<String, String> environment) {
    return uri.or(() -> Optional.ofNullable(environment.get(ENVIRONMENT)))
        .filter(text -> !text.isBlank())
        .orElse("memory:");
  }

  /** The URI in force as it may be shown: its password, if any, hidden. */
  String shown() {
    return redact(uri());
  }

  /**
   * Opens the bus.
   *
   * @throws ConfigException for a URI that is not memory: or a valid amqp(s):// server URI
   * @throws dev.toolhost.bus.BusException naming the URI, password hidden, when the broker cannot
   *     be reached
   */
  MessageBus open() {
    return open(uri(), System.getenv());
  }

  static MessageBus open(String text) {
    return open(text, Map.of());
  }

  static MessageBus open(String text, Map<String, String> environment) {
    if (text.equals("memory:")) {
      return new InMemoryBus();
    }
    URI parsed;
    try {
      // A server authority: host and numeric port, not any text between // and /.
      parsed = new URI(text).parseServerAuthority();
    } catch (URISyntaxException e) {
      throw new ConfigException(
          "--bus: '" + redact(text) + "' is not a valid URI (" + reason(e) + "; " + EXPECTED + ")");
    }
    String scheme = parsed.getScheme() == null ? "" : parsed.getScheme();
    if (!scheme.equals("amqp") && !scheme.equals("amqps")) {
      throw new ConfigException(
          "--bus: unknown scheme in '" + redact(text) + "' (" + EXPECTED + ")");
    }
    if (parsed.getHost() == null) {
      throw new ConfigException("--bus: '" + redact(text) + "' names no host (" + EXPECTED + ")");
    }
    return RabbitBus.connect(withPassword(parsed, environment));
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
  static String redact(String text) {
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
