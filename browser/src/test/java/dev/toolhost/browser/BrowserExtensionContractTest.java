package dev.toolhost.browser;

import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.testing.HostExtensionContract;
import dev.toolhost.web.WebExtension;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The browser extension keeps the host extension contract with the Chromium installed here, beside
 * the web extension whose outbound policy vets its pages: off until configured, then its one tool,
 * its vetting proxy and the spawner of its browsers (which start on a session's first action).
 */
class BrowserExtensionContractTest extends HostExtensionContract<BrowserConfig> {

  @Override
  protected HostExtension<BrowserConfig> extension() {
    return new BrowserExtension();
  }

  @Override
  protected List<HostExtension<?>> companions() {
    return List.of(new WebExtension());
  }

  @Override
  protected String companionSections() {
    return "web: {}\n";
  }

  @Override
  protected Optional<String> validSection() {
    return Optional.of(
        """
        binary: /usr/bin/chromium
        profile_dir: %s
        max_browsers: 1
        idle_timeout: 1m
        """
            .formatted(directory.resolve("profiles")));
  }

  @Override
  protected Optional<Misspelling> misspelling() {
    return Optional.of(
        new Misspelling(
            """
            binary: /usr/bin/chromium
            max_browser: 1
            """,
            2,
            1,
            "max_browser"));
  }

  @Override
  protected Set<String> configuredTools() {
    return Set.of("browser");
  }

  /** Helpers and tasks have its tools; the synthesis of another agent's answer has none. */
  @Override
  protected Map<String, Set<String>> grantedTools() {
    return Map.of("subagent", configuredTools(), "scheduled", configuredTools());
  }
}
