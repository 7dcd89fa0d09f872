package dev.toolhost.server;

import java.util.function.UnaryOperator;

/**
 * A command host is the host every command builds from one config file: the config's host with the
 * host extensions on the class path, attached to the message bus with the file's tool services
 * registered. {@code serve}, {@code tools}, {@code call}, {@code search} and {@code mcp} build it
 * alike, so that each sees the same catalogue the config describes.
 *
 * <p>{@link #close()} detaches from the bus, then closes the host.
 */
final class CommandHost implements AutoCloseable {

  private final Host host;
  private final BusAttachment bus;

  private CommandHost(Host host, BusAttachment bus) {
    this.host = host;
    this.bus = bus;
  }

  /**
   * Reads the config file once, builds its host and attaches it to the bus the option names,
   * registering the file's tool services; closes what it opened when any step fails.
   *
   * @param transform what the command changes in the file's host config (serve's --host and
   *     --port); the identity for the others
   * @throws ConfigException for a bad bus URI or tool services that cannot all be registered
   */
  static CommandHost open(
      ConfigOption config, UnaryOperator<HostConfig> transform, BusOption busOption) {
    ConfigReader.Reading reading = config.reading();
    Host host = config.host(transform.apply(reading.host()));
    try {
      BusAttachment bus = BusAttachment.attach(busOption.open(), host.registry());
      try {
        reading.toolServices().applyTo(bus.toolServices());
        return new CommandHost(host, bus);
      } catch (RuntimeException e) {
        bus.close();
        throw e;
      }
    } catch (RuntimeException e) {
      host.close();
      throw e;
    }
  }

  /** The host. */
  Host host() {
    return host;
  }

  @Override
  public void close() {
    bus.close();
    host.close();
  }
}
