package dev.toolhost.agent;

import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.testing.HostExtensionContract;
import java.util.Optional;
import java.util.Set;

/**
 * The conversations extension keeps the host extension contract: off until configured, then its
 * embedded store opened under the state directory and closed with the host; no tools of its own.
 */
class ConversationsExtensionContractTest extends HostExtensionContract<ConversationsConfig> {

  @Override
  protected HostExtension<ConversationsConfig> extension() {
    return new ConversationsExtension();
  }

  @Override
  protected Optional<String> validSection() {
    return Optional.of("state_dir: " + directory.resolve("state") + "\n");
  }

  @Override
  protected Optional<Misspelling> misspelling() {
    return Optional.of(new Misspelling("stat_dir: state\n", 1, 1, "stat_dir"));
  }

  @Override
  protected Set<String> configuredTools() {
    return Set.of();
  }
}
