package dev.toolhost.web;

import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.testing.HostExtensionContract;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The web extension keeps the host extension contract: off until configured, then its two tools
 * (search through a SearXNG address, browse) with their outbound clients.
 */
class WebExtensionContractTest extends HostExtensionContract<WebConfig> {

  @Override
  protected HostExtension<WebConfig> extension() {
    return new WebExtension();
  }

  @Override
  protected Optional<String> validSection() {
    return Optional.of(
        """
        search:
          provider: searxng
          url: http://127.0.0.1:9/search
        browse:
          robots: false
        outbound:
          allow: [127.0.0.1]
          timeout: 5s
        """);
  }

  @Override
  protected Optional<Misspelling> misspelling() {
    return Optional.of(
        new Misspelling(
            """
            browse:
              robots: false
            outbound:
              alow: [127.0.0.1]
            """,
            4,
            3,
            "alow"));
  }

  @Override
  protected Set<String> configuredTools() {
    return Set.of("web_search", "web_browse");
  }

  /** Helpers and tasks have its tools; the synthesis of another agent's answer has none. */
  @Override
  protected Map<String, Set<String>> grantedTools() {
    return Map.of("subagent", configuredTools(), "scheduled", configuredTools());
  }
}
