package dev.toolhost.a2a;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.toolhost.core.spi.ConfigException;
import dev.toolhost.core.spi.ConfigProblems;
import dev.toolhost.core.spi.ConfigSections;
import dev.toolhost.core.spi.SectionReading;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/** The {@code a2a:} section: what it reads, and every problem of a wrong one at once. */
class A2aConfigTest {

  @TempDir Path dir;

  private A2aConfig read(String json) {
    SectionReading reading = new SectionReading(ConfigProblems.unplaced(), dir, List.of("main"));
    JsonNode section = A2aWire.JSON.readTree(json);
    ConfigSections.check("a2a", new A2aExtension().configSchema(), section, reading.problems());
    A2aConfig config = reading.problems().count() == 0 ? A2aConfig.read(section, reading) : null;
    reading.problems().throwIfAny();
    return config;
  }

  @Test
  void agentsComeFromTheSectionAndTheWellKnownFileTheSectionWinning() throws Exception {
    Files.writeString(
        dir.resolve("well-known-agents.json"),
        "[{\"name\": \"billing\", \"url\": \"http://elsewhere.example\"},"
            + " {\"agentName\": \"hr\", \"url\": \"https://hr.example.com\"}]");
    A2aConfig config =
        read(
            """
            {"agents": {"billing": {"url": "https://billing.example.com", "auth_env": "BILLING_TOKEN"}},
             "well_known_agents": "well-known-agents.json", "default_wait": "5s",
             "server": {"public_url": "https://toolhost.example.com", "max_tasks": 50}}""");
    assertThat(config.agents().keySet()).containsExactly("billing", "hr");
    A2aConfig.RemoteAgent billing = config.agents().get("billing");
    assertThat(billing.url()).isEqualTo(URI.create("https://billing.example.com"));
    assertThat(billing.authEnv()).contains("BILLING_TOKEN");
    assertThat(billing.cardUrl())
        .isEqualTo(URI.create("https://billing.example.com/.well-known/agent-card.json"));
    assertThat(config.defaultWait()).isEqualTo(Duration.ofSeconds(5));
    assertThat(config.server()).isPresent();
    assertThat(config.server().get().maxTasks()).isEqualTo(50);
  }

  @Test
  void anEmptySectionHasNoAgentsAndNoServer() {
    A2aConfig config = read("{}");
    assertThat(config.agents()).isEmpty();
    assertThat(config.server()).isEqualTo(Optional.empty());
  }

  @Test
  void everyProblemIsReportedAtOnce() {
    assertThatThrownBy(
            () ->
                read(
                    """
                    {"agents": {"a": {"url": "ftp://x"}, "b": {"url": "https://b.example", "auth_env": "not a name"},
                                "c": {"url": "https://user:pw@c.example"}},
                     "well_known_agents": "missing.json", "default_wait": "soon",
                     "server": {"public_url": "nowhere"}}"""))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("'a2a.agents.a.url' is 'ftp://x'")
        .hasMessageContaining("'a2a.agents.b.auth_env' is 'not a name'")
        .hasMessageContaining("'a2a.agents.c.url'")
        .hasMessageContaining("missing.json")
        .hasMessageContaining("'a2a.default_wait' is 'soon'")
        .hasMessageContaining("'a2a.server.public_url' is 'nowhere'");
  }

  @Test
  void anUnknownKeyIsRefusedByTheSchema() {
    assertThatThrownBy(() -> read("{\"agent\": {}}"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("agent");
  }
}
