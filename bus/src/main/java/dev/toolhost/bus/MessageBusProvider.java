package dev.toolhost.bus;

import java.net.URI;
import java.util.Set;

/**
 * A message bus provider opens the buses of its URI schemes: the RabbitMQ module's opens {@code
 * amqp://} and {@code amqps://}. Found with {@link java.util.ServiceLoader} (a {@code
 * META-INF/services/dev.toolhost.bus.MessageBusProvider} line), so that the command line names no
 * broker: {@link MessageBuses#open} picks the provider by the URI's scheme.
 */
public interface MessageBusProvider {

  /** The URI schemes it opens, lower case, such as {@code amqp}. */
  Set<String> schemes();

  /** A URI of its form, for a message that says what is expected, such as {@code amqp://...}. */
  String example();

  /**
   * Opens the bus the URI names; the URI has a host and a numeric port, if any.
   *
   * @throws BusException naming the URI, password hidden, when the bus cannot be reached
   */
  MessageBus open(URI uri);
}
