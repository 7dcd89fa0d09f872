package dev.toolhost.server;

import dev.toolhost.bus.MessageBus;
import dev.toolhost.bus.RemoteTools;
import dev.toolhost.bus.ToolServices;
import dev.toolhost.core.ToolRegistry;

/**
 * A bus attachment is a host's link to the message bus: the bus and the remote tools that workers
 * and tool services announce on it, registered in the host's registry while they live.
 *
 * @param bus the bus
 * @param remoteTools the announced tools
 * @param toolServices the tool services, configured and announced
 */
record BusAttachment(MessageBus bus, RemoteTools remoteTools, ToolServices toolServices)
    implements AutoCloseable {

  /** Starts listening for announcements on the bus, registering into the registry. */
  static BusAttachment attach(MessageBus bus, ToolRegistry registry) {
    ToolServices services = new ToolServices(bus, registry);
    return new BusAttachment(bus, new RemoteTools(bus, registry, services).start(), services);
  }

  @Override
  public void close() {
    remoteTools.close();
    bus.close();
  }
}
