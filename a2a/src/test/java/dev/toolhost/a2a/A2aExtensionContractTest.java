package dev.toolhost.a2a;

import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.testing.HostExtensionContract;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The A2A extension keeps the host extension contract with one remote agent (at an address where
 * nothing answers: its card is fetched in the background and fails) and its own server: off until
 * configured, then the four calling tools and the server's routes.
 */
class A2aExtensionContractTest extends HostExtensionContract<A2aConfig> {

  @Override
  protected HostExtension<A2aConfig> extension() {
    return new A2aExtension();
  }

  @Override
  protected Optional<String> validSection() {
    return Optional.of(
        """
        agents:
          billing:
            url: http://127.0.0.1:9
        default_wait: 5s
        server:
          public_url: https://toolhost.example.com
        """);
  }

  @Override
  protected Optional<Misspelling> misspelling() {
    return Optional.of(
        new Misspelling(
            """
            agents:
              billing:
                ulr: http://127.0.0.1:9
            """,
            3,
            5,
            "ulr"));
  }

  @Override
  protected Set<String> configuredTools() {
    return Set.of("list_known_agents", "get_agent_details", "invoke_agent", "cancel_agent_task");
  }

  @Override
  protected List<String> routes() {
    return List.of("GET /a2a/{agent}/.well-known/agent-card.json", "POST /a2a/{agent}");
  }

  /** Helpers and tasks have its tools; the synthesis of another agent's answer has none. */
  @Override
  protected Map<String, Set<String>> grantedTools() {
    return Map.of("subagent", configuredTools(), "scheduled", configuredTools());
  }
}
