package dev.toolhost.openrouter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.toolhost.core.spi.ConfigException;
import dev.toolhost.core.spi.ConfigProblems;
import dev.toolhost.core.spi.SectionReading;
import dev.toolhost.host.HostConfig;
import dev.toolhost.testing.TestHost;
import java.net.URI;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The {@code openrouter:} section, read as a host reads its config file, and refused. */
class OpenRouterConfigTest {

  private static HostConfig parse(String yaml) {
    return TestHost.config(yaml, List.of(new OpenRouterExtension()), Path.of(""));
  }

  /** The section of config text, read by the extension as the host reads it when it starts. */
  private static OpenRouterConfig read(String yaml) {
    HostConfig config = parse(yaml);
    SectionReading reading =
        new SectionReading(
            ConfigProblems.unplaced(), config.directory(), config.toolProfiles().names());
    OpenRouterConfig read =
        new OpenRouterExtension().read(config.section(OpenRouterExtension.NAME), reading);
    reading.problems().throwIfAny();
    return read;
  }

  @Test
  void anEmptySectionIsOpenRoutersApiWithTheKeyInOpenRouterApiKey() {
    OpenRouterConfig config = read("openrouter: {}\n");

    assertThat(config).isEqualTo(OpenRouterConfig.defaults());
    assertThat(config.baseUrl()).isEqualTo(URI.create("https://openrouter.ai/api/v1"));
    assertThat(config.apiKeyEnv()).isEqualTo("OPENROUTER_API_KEY");
    assertThat(config.referer()).isEmpty();
  }

  @Test
  void aKeyWithNoValueIsNoSectionSoTheToolsStayOff() {
    // As for every section: "openrouter:" alone is no section; "openrouter: {}" turns it on.
    assertThat(parse("openrouter:\n").sections()).doesNotContainKey("openrouter");
    assertThat(parse("openrouter: {}\n").sections()).containsKey("openrouter");
  }

  @Test
  void everyKeyIsRead() {
    OpenRouterConfig config =
        read(
            """
                openrouter:
                  api_key_env: OR_MANAGEMENT_KEY
                  base_url: http://127.0.0.2:8089/api/v1
                  referer: https://agents.example.com/toolhost
                """);

    assertThat(config)
        .isEqualTo(
            new OpenRouterConfig(
                URI.create("http://127.0.0.2:8089/api/v1"),
                "OR_MANAGEMENT_KEY",
                Optional.of("https://agents.example.com/toolhost")));
  }

  @Test
  void aBlankRefererIsNone() {
    assertThat(read("openrouter:\n  referer: \" \"\n").referer()).isEmpty();
  }

  @Test
  void aBaseUrlThatIsNotHttpIsRefusedWithItsPlace() {
    assertThatThrownBy(() -> parse("openrouter:\n  base_url: ftp://openrouter.ai/api/v1\n"))
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            "toolhost.yaml line 2, column 13: 'openrouter.base_url' is"
                + " 'ftp://openrouter.ai/api/v1' (expected an http or https URL, such as"
                + " https://openrouter.ai/api/v1)");
    assertThatThrownBy(() -> parse("openrouter:\n  base_url: openrouter.ai/api/v1\n"))
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            "toolhost.yaml line 2, column 13: 'openrouter.base_url' is 'openrouter.ai/api/v1'"
                + " (expected an http or https URL, such as https://openrouter.ai/api/v1)");
    assertThatThrownBy(() -> parse("openrouter:\n  base_url: \"https://open router.ai\"\n"))
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            "toolhost.yaml line 2, column 13: 'openrouter.base_url' is 'https://open"
                + " router.ai' (expected an http or https URL, such as"
                + " https://openrouter.ai/api/v1)");
  }

  @Test
  void aKeyInPlaceOfAVariableNameIsRefusedSayingTheKeyNeverGoesInTheConfig() {
    assertThatThrownBy(() -> parse("openrouter:\n  api_key_env: sk-or-v1-abc123\n"))
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            "toolhost.yaml line 2, column 16: 'openrouter.api_key_env' is 'sk-or-v1-abc123'"
                + " (expected the name of an environment variable, such as OPENROUTER_API_KEY;"
                + " the key itself never goes in the config)");
  }

  @Test
  void everyProblemIsReportedAtOnce() {
    assertThatThrownBy(
            () -> parse("openrouter:\n  base_url: file:///etc/passwd\n  api_key_env: \"1KEY\"\n"))
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            """
            toolhost.yaml line 2, column 13: 'openrouter.base_url' is 'file:///etc/passwd' (expected an http or https URL, such as https://openrouter.ai/api/v1)
            toolhost.yaml line 3, column 16: 'openrouter.api_key_env' is '1KEY' (expected the name of an environment variable, such as OPENROUTER_API_KEY; the key itself never goes in the config)\
            """);
  }

  @Test
  void aTypoKeyIsRefusedWithItsPlaceAndTheNearestKey() {
    assertThatThrownBy(() -> parse("openrouter:\n  base_uri: https://openrouter.ai/api/v1\n"))
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            "toolhost.yaml line 2, column 3: unknown key 'base_uri' under 'openrouter' (did you"
                + " mean 'base_url'? expected one of: api_key_env, base_url, referer)");
  }

  @Test
  void aValueOfTheWrongTypeIsRefusedWithItsPlace() {
    assertThatThrownBy(() -> parse("openrouter:\n  base_url: [https://openrouter.ai]\n"))
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            "toolhost.yaml line 2, column 13: wrong type for 'openrouter.base_url': expected a"
                + " string, got a list");
  }
}
