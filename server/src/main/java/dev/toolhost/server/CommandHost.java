package dev.toolhost.server;

import dev.toolhost.bus.BusOption;
import dev.toolhost.bus.MessageBus;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolSet;
import dev.toolhost.core.spi.ConfigException;
import dev.toolhost.core.spi.RunningHost;
import dev.toolhost.host.HostConfig;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;

/**
 * A command host is the host every command builds from one config file: the config's host with the
 * host extensions on the class path, sharing the message bus the command's {@code --bus} names, so
 * that the tool services extension registers the file's tool services and the tools announced on
 * the bus. {@code serve}, {@code tools}, {@code call}, {@code search}, {@code mcp} and {@code chat}
 * build it alike, so that each sees the same catalogue the config describes.
 *
 * <p>{@link #close()} closes the host, then the bus.
 */
final class CommandHost implements RunningHost {

  private final Host host;
  private final MessageBus bus;

  private CommandHost(Host host, MessageBus bus) {
    this.host = host;
    this.bus = bus;
  }

  /**
   * Reads the config file once, opens the bus the option names and builds the file's host on it;
   * closes the bus when the host fails to build.
   *
   * @param transform what the command changes in the file's host config (serve's --host and
   *     --port); the identity for the others
   * @throws ConfigException for a bad config file or bus URI, or tool services that cannot all be
   *     registered
   */
  static CommandHost open(
      ConfigOption config, UnaryOperator<HostConfig> transform, BusOption busOption) {
    return open(config, transform, busOption, builder -> {});
  }

  /**
   * Opens a command host as {@link #open(ConfigOption, UnaryOperator, BusOption)} does, with what
   * the command changes in the host's builder (chat's agents, say).
   */
  static CommandHost open(
      ConfigOption config,
      UnaryOperator<HostConfig> transform,
      BusOption busOption,
      Consumer<Host.Builder> customize) {
    HostConfig hostConfig = transform.apply(config.load());
    MessageBus bus = busOption.open();
    try {
      Host.Builder builder =
          Host.builder(hostConfig).extensions(config.extensions()).service(MessageBus.class, bus);
      customize.accept(builder);
      return new CommandHost(builder.build(), bus);
    } catch (RuntimeException e) {
      bus.close();
      throw e;
    }
  }

  /** The host. */
  Host host() {
    return host;
  }

  @Override
  public ToolRegistry registry() {
    return host.registry();
  }

  @Override
  public ToolDispatcher dispatcher() {
    return host.dispatcher();
  }

  @Override
  public ToolSet toolSet(String profile) {
    return host.toolSet(profile);
  }

  @Override
  public <T> Optional<T> service(Class<T> type) {
    return host.service(type);
  }

  @Override
  public void close() {
    // The host's extensions stop using the bus first.
    host.close();
    bus.close();
  }
}
