package dev.toolhost.core.spi;

import java.util.List;

/**
 * The agent catalogue is a host's configured agents as other capabilities see them: each agent is a
 * tool of the registry under its own name, which a scheduled fire or a gateway calls like any other
 * tool. The agents extension shares it once the host is ready; a capability that names an agent in
 * its config {@linkplain HostExtension#uses uses} it to check the name.
 */
public interface AgentCatalog {

  /** The agents' names, which are their tools' names, in the config's order. */
  List<String> names();
}
