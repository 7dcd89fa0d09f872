package dev.toolhost.exec;

import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.testing.HostExtensionContract;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;

/**
 * The exec extension keeps the host extension contract with a workspace root in the test's own
 * directory: off until configured, then its four tools and its sandbox, which neither subagents nor
 * fired tasks may use.
 */
class ExecExtensionContractTest extends HostExtensionContract<ExecConfig> {

  /** The sandbox user must reach the workspace root through the test's directory. */
  @BeforeEach
  void openTheDirectoryToTheSandboxUser() throws IOException {
    Files.setPosixFilePermissions(directory, PosixFilePermissions.fromString("rwx--x--x"));
  }

  @Override
  protected HostExtension<ExecConfig> extension() {
    return new ExecExtension();
  }

  @Override
  protected Optional<String> validSection() {
    return Optional.of(
        """
        workspace_root: %s
        network: false
        max_timeout: 30s
        limits:
          memory_mb: 256
        """
            .formatted(directory.resolve("workspaces")));
  }

  @Override
  protected Optional<Misspelling> misspelling() {
    return Optional.of(
        new Misspelling(
            """
            workspace_root: /tmp/contract-workspaces
            limits:
              memory_mbs: 256
            """,
            3,
            3,
            "memory_mbs"));
  }

  @Override
  protected Set<String> configuredTools() {
    return Set.copyOf(ExecTools.NAMES);
  }

  // Grants nothing: no restricted profile runs commands (the contract's default).
}
