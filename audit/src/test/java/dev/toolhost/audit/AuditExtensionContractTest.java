package dev.toolhost.audit;

import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.testing.HostExtensionContract;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The audit extension keeps the host extension contract: off until configured, then a journal in
 * its directory and the route that reads it.
 */
class AuditExtensionContractTest extends HostExtensionContract<AuditConfig> {

  @Override
  protected HostExtension<AuditConfig> extension() {
    return new AuditExtension();
  }

  @Override
  protected Optional<String> validSection() {
    return Optional.of("state_dir: journal\nmax_file_mb: 1\nkeep_files: 2\n");
  }

  @Override
  protected Optional<Misspelling> misspelling() {
    return Optional.of(new Misspelling("keep_file: 2\n", 1, 1, "keep_file"));
  }

  @Override
  protected Set<String> configuredTools() {
    return Set.of();
  }

  @Override
  protected List<String> routes() {
    return List.of("GET " + AuditExtension.PATH);
  }
}
