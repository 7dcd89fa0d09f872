package dev.toolhost.openrouter;

import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.testing.HostExtensionContract;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The OpenRouter extension keeps the host extension contract: off until configured, then its
 * account tools with their outbound client, its key read from the environment.
 */
class OpenRouterExtensionContractTest extends HostExtensionContract<OpenRouterConfig> {

  @Override
  protected HostExtension<OpenRouterConfig> extension() {
    return new OpenRouterExtension();
  }

  @Override
  protected Optional<String> validSection() {
    return Optional.of(
        """
        api_key_env: CONTRACT_OPENROUTER_KEY
        base_url: http://127.0.0.1:9/api/v1
        referer: https://toolhost.dev
        """);
  }

  @Override
  protected Optional<Misspelling> misspelling() {
    return Optional.of(
        new Misspelling(
            """
            api_key_env: CONTRACT_OPENROUTER_KEY
            base_ulr: http://127.0.0.1:9/api/v1
            """,
            2,
            1,
            "base_ulr"));
  }

  @Override
  protected Map<String, String> environment() {
    return Map.of("CONTRACT_OPENROUTER_KEY", "sk-or-v1-contract");
  }

  @Override
  protected Set<String> configuredTools() {
    return OpenRouterToolsTest.NAMES;
  }

  /** Helpers and tasks have its tools; the synthesis of another agent's answer has none. */
  @Override
  protected Map<String, Set<String>> grantedTools() {
    return Map.of("subagent", configuredTools(), "scheduled", configuredTools());
  }
}
