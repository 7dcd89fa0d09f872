package dev.toolhost.bus;

import java.util.Map;
import java.util.Optional;
import picocli.CommandLine.Option;

/**
 * The bus option is the {@code --bus URI} every command that touches the bus takes: {@code memory:}
 * (the default) or a URI of a bus provider on the class path, such as RabbitMQ's {@code
 * amqp://user:pass@host:port/vhost}; {@code TOOLHOST_BUS} when the option is not given. The bus
 * module opens it ({@link MessageBuses}): a password may come from {@code TOOLHOST_BUS_PASSWORD},
 * and is never printed or logged.
 */
public final class BusOption {

  /** The environment variable read when {@code --bus} is not given. */
  public static final String ENVIRONMENT = "TOOLHOST_BUS";

  /** The environment variable that holds the bus password when the URI names only a user. */
  public static final String PASSWORD_ENVIRONMENT = MessageBuses.PASSWORD_ENVIRONMENT;

  @Option(
      names = "--bus",
      paramLabel = "URI",
      description =
          "The message bus: memory: (default) or amqp://user:pass@host:5672/ for RabbitMQ;"
              + " TOOLHOST_BUS when not given. With amqp://user@host:5672/ the password is read"
              + " from TOOLHOST_BUS_PASSWORD.")
  private Optional<String> uri = Optional.empty();

  /** The URI in force: the option, else the environment, else {@code memory:}. */
  public String uri() {
    return uri(System.getenv());
  }

  /** The URI in force, reading {@code TOOLHOST_BUS} from the given environment. */
  public String uri(Map<String, String> environment) {
    return uri.or(() -> Optional.ofNullable(environment.get(ENVIRONMENT)))
        .filter(text -> !text.isBlank())
        .orElse("memory:");
  }

  /** The URI in force as it may be shown: its password, if any, hidden. */
  public String shown() {
    return redact(uri());
  }

  /**
   * Opens the bus.
   *
   * @throws dev.toolhost.core.spi.ConfigException for a URI that is not memory: or a valid
   *     amqp(s):// server URI
   * @throws dev.toolhost.bus.BusException naming the URI, password hidden, when the broker cannot
   *     be reached
   */
  public MessageBus open() {
    return open(uri(), System.getenv());
  }

  public static MessageBus open(String text) {
    return MessageBuses.open(text);
  }

  public static MessageBus open(String text, Map<String, String> environment) {
    return MessageBuses.open(text, environment);
  }

  /** The URI text with the password of its user info replaced by {@code ***}. */
  public static String redact(String text) {
    return MessageBuses.redact(text);
  }
}
