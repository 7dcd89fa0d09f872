package dev.toolhost.secrets;

import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.testing.HostExtensionContract;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The secrets extension keeps the host extension contract: on by default with the shipped rules, it
 * registers no tool, adds no route and takes no tool from a profile, with a section or without.
 */
class SecretsExtensionContractTest extends HostExtensionContract<SecretsConfig> {

  @Override
  protected HostExtension<SecretsConfig> extension() {
    return new SecretsExtension();
  }

  @Override
  protected Optional<String> validSection() {
    return Optional.of(
        """
        policy: block
        sources:
          "mcp:*": redact
        secret_env: [CONTRACT_TOKEN]
        allow:
          values: ["not-a-secret"]
        depth: 2
        """);
  }

  @Override
  protected Optional<Misspelling> misspelling() {
    return Optional.of(
        new Misspelling(
            """
            policy: block
            alow:
              values: ["not-a-secret"]
            """,
            2,
            1,
            "alow"));
  }

  @Override
  protected Map<String, String> environment() {
    return Map.of("CONTRACT_TOKEN", "s3cr3t-value-of-the-contract");
  }

  @Override
  protected Set<String> configuredTools() {
    return Set.of();
  }
}
