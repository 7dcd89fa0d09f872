package dev.toolhost.search;

import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.testing.HostExtensionContract;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The service search extension keeps the host extension contract: it reads no section (a {@code
 * search:} key is unknown to the file) and is on by default with its one tool.
 */
class ServiceSearchExtensionContractTest extends HostExtensionContract<Void> {

  @Override
  protected HostExtension<Void> extension() {
    return new ServiceSearchExtension();
  }

  @Override
  protected Optional<String> validSection() {
    return Optional.empty();
  }

  @Override
  protected Optional<Misspelling> misspelling() {
    return Optional.empty();
  }

  @Override
  protected Set<String> configuredTools() {
    return Set.of("search_known_services");
  }

  @Override
  protected Set<String> toolsWithoutSection() {
    return Set.of("search_known_services");
  }

  @Override
  protected List<String> routes() {
    return List.of("GET " + ServiceSearchExtension.PATH);
  }

  /** Helpers and tasks have its tools; the synthesis of another agent's answer has none. */
  @Override
  protected Map<String, Set<String>> grantedTools() {
    return Map.of("subagent", configuredTools(), "scheduled", configuredTools());
  }
}
