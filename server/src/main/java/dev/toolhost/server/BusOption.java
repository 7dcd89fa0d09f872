package dev.toolhost.server;

import dev.toolhost.bus.InMemoryBus;
import dev.toolhost.bus.MessageBus;
import dev.toolhost.rabbitmq.RabbitBus;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.Optional;
import picocli.CommandLine.Option;

/**
 * The bus option is the {@code --bus URI} every command that touches the bus takes: {@code memory:}
 * (the default) or {@code amqp://user:pass@host:port/vhost}; {@code TOOLHOST_BUS} when the option
 * is not given.
 */
final class BusOption {

  /** The environment variable read when {@code --bus} is not given. */
  static final String ENVIRONMENT = "TOOLHOST_BUS";

  @Option(
      names = "--bus",
      paramLabel = "URI",
      description =
          "The message bus: memory: (default) or amqp://user:pass@host:5672/ for RabbitMQ;"
              + " TOOLHOST_BUS when not given.")
  private Optional<String> uri = Optional.empty();

  /** The URI in force: the option, else the environment, else {@code memory:}. */
  String uri() {
    return uri(System.getenv());
  }

  /** The URI in force, reading {@code TOOLHOST_BUS} from the given environment. */
  String uri(java.util.Map<String, String> environment) {
    return uri.or(() -> Optional.ofNullable(environment.get(ENVIRONMENT)))
        .filter(text -> !text.isBlank())
        .orElse("memory:");
  }

  /**
   * Opens the bus.
   *
   * @throws ConfigException for a URI that is not memory: or amqp(s)://
   * @throws dev.toolhost.bus.BusException naming the URI, password hidden, when the broker cannot
   *     be reached
   */
  MessageBus open() {
    return open(uri());
  }

  static MessageBus open(String text) {
    if (text.equals("memory:")) {
      return new InMemoryBus();
    }
    URI parsed;
    try {
      parsed = new URI(text);
    } catch (URISyntaxException e) {
      throw new ConfigException(
          "--bus: '"
              + text.replaceAll(":[^:@/]*@", ":***@")
              + "' is not a URI (expected memory: or"
              + " amqp://user:pass@host:5672/)");
    }
    String scheme = parsed.getScheme() == null ? "" : parsed.getScheme();
    if (scheme.equals("amqp") || scheme.equals("amqps")) {
      return RabbitBus.connect(parsed);
    }
    throw new ConfigException(
        "--bus: unknown scheme in '"
            + RabbitBus.redact(parsed)
            + "' (expected memory: or amqp://user:pass@host:5672/)");
  }
}
