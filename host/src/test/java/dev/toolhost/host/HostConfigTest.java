package dev.toolhost.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.toolhost.core.ToolProfile;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.spi.ConfigException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The host's own sections of the config file ({@code http}, {@code builtins}, {@code telemetry},
 * {@code profiles}), read with no extension: every key, the defaults, and every problem refused
 * with its place. (The sections of every extension together: the server module's {@code
 * ComposedConfigTest}.)
 */
class HostConfigTest {

  @TempDir Path dir;

  @Test
  void noFileMeansTheEmbeddedDefaults() {
    HostConfig config = HostConfig.defaults();

    assertThat(config.http().host()).isEqualTo("127.0.0.1");
    assertThat(config.http().port()).isEqualTo(8080);
    assertThat(config.http().token()).isEmpty();
    assertThat(config.http().tokenEnv()).isEqualTo("TOOLHOST_TOKEN");
    assertThat(config.builtins().guides()).isTrue();
    assertThat(config.telemetry().recordContent()).isFalse();
    assertThat(config.profiles()).isEmpty();
    assertThat(config.toolProfiles().names())
        .containsExactly("main", "subagent", "scheduled", "a2a_synthesis");
  }

  @Test
  void anEmptyFileMeansTheDefaults() {
    assertThat(HostConfig.parse("# nothing here yet\n", "config.yaml"))
        .isEqualTo(HostConfig.defaults());
  }

  @Test
  void everyKeyIsRead() throws Exception {
    Path file = dir.resolve("config.yaml");
    Files.writeString(
        file,
        """
        http:
          host: 0.0.0.0
          port: 9090
          token_env: MY_TOKEN
        builtins:
          guides: false
        telemetry:
          record_content: true
        profiles:
          reviewer:
            extends: subagent
            allow_sources: [builtin:guides]
            deny_sources: [mcp:github]
            allow_tools: [web_search]
            deny_tools: [shell]
        """);

    HostConfig config = HostConfig.load(file);

    assertThat(config.http())
        .isEqualTo(new HostConfig.Http("0.0.0.0", 9090, Optional.empty(), "MY_TOKEN"));
    assertThat(config.builtins().guides()).isFalse();
    assertThat(config.telemetry().recordContent()).isTrue();
    assertThat(config.profiles())
        .containsExactly(
            HostConfig.Profile.of("reviewer")
                .extending("subagent")
                .allowingSources("builtin:guides")
                .denyingSources("mcp:github")
                .allowingTools("web_search")
                .denyingTools("shell"));
  }

  @Test
  void userProfileIsComposedOntoTheProfileItExtends() {
    HostConfig config =
        HostConfig.parse(
            """
            profiles:
              reviewer:
                extends: subagent
                allow_sources: [builtin:guides, builtin:web]
                deny_sources: [builtin:web]
              guides_only:
                allow_sources: [builtin:guides]
              strict_reviewer:
                extends: reviewer
                deny_tools: [get_tool_guide]
            """,
            "config.yaml");

    ToolProfiles profiles = config.toolProfiles();

    assertThat(profiles.names())
        .containsExactly(
            "main",
            "subagent",
            "scheduled",
            "a2a_synthesis",
            "guides_only",
            "reviewer",
            "strict_reviewer");
    ToolProfile reviewer = profiles.get("reviewer");
    assertThat(reviewer.allows("list_tool_guides", "builtin:guides")).isTrue();
    assertThat(reviewer.allows("web_search", "builtin:web")).isFalse();
    ToolProfile guidesOnly = profiles.get("guides_only");
    assertThat(guidesOnly.allows("list_tool_guides", "builtin:guides")).isTrue();
    assertThat(guidesOnly.allows("web_search", "builtin:web")).isFalse();
    ToolProfile strict = profiles.get("strict_reviewer");
    assertThat(strict.allows("list_tool_guides", "builtin:guides")).isTrue();
    assertThat(strict.allows("get_tool_guide", "builtin:guides")).isFalse();
    assertThat(strict.deniedSources()).isEqualTo(Set.of("subagent", "builtin:web"));
  }

  @Test
  void aProfileWithNoBodyAllowsNothing() {
    HostConfig config = HostConfig.parse("profiles:\n  locked:\n", "config.yaml");

    assertThat(config.toolProfiles().get("locked").allows("list_tool_guides", "builtin:guides"))
        .isFalse();
  }

  @Test
  void unknownKeyIsRefusedWithItsLine() {
    String yaml =
        """
        # the host
        http:
          host: 127.0.0.1
          prot: 8081
        """;

    assertThatThrownBy(() -> HostConfig.parse(yaml, "config.yaml"))
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            "config.yaml line 4, column 3: unknown key 'prot' under 'http' (did you mean 'port'? expected one of:"
                + " allowed_hosts, allowed_origins, host, port, token, token_env)");
  }

  @Test
  void unknownProfileKeyIsRefusedWithItsLine() {
    String yaml =
        """
        profiles:
          reviewer:
            extends: subagent
            allow_source: [builtin:guides]
        """;

    assertThatThrownBy(() -> HostConfig.parse(yaml, "config.yaml"))
        .hasMessage(
            "config.yaml line 4, column 5: unknown key 'allow_source' under 'profiles.reviewer'"
                + " (did you mean 'allow_sources'? expected one of: allow_sources, allow_tools,"
                + " deny_sources, deny_tools,"
                + " extends)");
  }

  @Test
  void wrongTypeIsRefusedWithItsLineAndWhatWasExpected() {
    assertThatThrownBy(() -> HostConfig.parse("http:\n  port: eighty\n", "config.yaml"))
        .hasMessage(
            "config.yaml line 2, column 9: wrong type for 'http.port': expected an integer, got"
                + " 'eighty'");
    assertThatThrownBy(() -> HostConfig.parse("http:\n  port: 80.5\n", "config.yaml"))
        .hasMessage(
            "config.yaml line 2, column 9: wrong type for 'http.port': expected an integer, got"
                + " the number 80.5");
    assertThatThrownBy(
            () ->
                HostConfig.parse(
                    "profiles:\n  reviewer:\n    allow_sources: builtin:guides\n", "config.yaml"))
        .hasMessage(
            "config.yaml line 3, column 20: wrong type for 'profiles.reviewer.allow_sources':"
                + " expected a list of strings, got 'builtin:guides'");
    assertThatThrownBy(() -> HostConfig.parse("http: [127.0.0.1]\n", "config.yaml"))
        .hasMessage(
            "config.yaml line 1, column 7: wrong type for 'http': expected a mapping with keys:"
                + " allowed_hosts, allowed_origins, host, port, token, token_env, got a list");
    assertThatThrownBy(() -> HostConfig.parse("builtins:\n  guides: maybe\n", "config.yaml"))
        .hasMessageStartingWith(
            "config.yaml line 2, column 11: wrong type for 'builtins.guides': expected true or"
                + " false");
  }

  @Test
  void portOutOfRangeIsRefusedWithItsLine() {
    assertThatThrownBy(() -> HostConfig.parse("http:\n  port: 70000\n", "config.yaml"))
        .hasMessage(
            "config.yaml line 2, column 9: 'http.port' is 70000, out of range (expected 0 to"
                + " 65535; 0 picks a free port)");
  }

  @Test
  void profileExtendingAnUnknownProfileIsRefusedWithItsLine() {
    String yaml =
        """
        profiles:
          reviewer:
            extends: subagnet
        """;

    assertThatThrownBy(() -> HostConfig.parse(yaml, "config.yaml"))
        .hasMessage(
            "config.yaml line 3, column 14: profile 'reviewer' extends 'subagnet', which is not a"
                + " profile (expected one of: main, subagent, scheduled, a2a_synthesis,"
                + " reviewer)");
  }

  @Test
  void userProfileReusingABuiltInNameIsRefusedWithItsLine() {
    String yaml =
        """
        profiles:
          subagent:
            allow_sources: ['*']
        """;

    assertThatThrownBy(() -> HostConfig.parse(yaml, "config.yaml"))
        .hasMessage(
            "config.yaml line 2, column 3: profile 'subagent' has the name of a built-in profile"
                + " (built-in profiles: main, subagent, scheduled, a2a_synthesis); extend it under"
                + " another name instead");
  }

  @Test
  void profilesExtendingEachOtherInACycleAreRefused() {
    String yaml =
        """
        profiles:
          a:
            extends: b
          b:
            extends: a
        """;

    assertThatThrownBy(() -> HostConfig.parse(yaml, "config.yaml"))
        .hasMessage(
            "config.yaml line 3, column 14: profiles extend each other in a cycle: a -> b -> a");
  }

  @Test
  void duplicateKeyIsRefusedWithItsLine() {
    assertThatThrownBy(() -> HostConfig.parse("http:\n  port: 1\n  port: 2\n", "config.yaml"))
        .hasMessage(
            "config.yaml line 3, column 3: duplicate key 'port' under 'http' (each key may appear"
                + " once)");
  }

  @Test
  void textThatIsNotYamlIsRefusedWithWhereTheParserGaveUp() {
    assertThatThrownBy(() -> HostConfig.parse("http:\n  port: [1, 2\n", "config.yaml"))
        .hasMessage(
            "config.yaml line 3, column 1: not valid YAML: while parsing a flow sequence,"
                + " expected ',' or ']', but got <stream end>");
    assertThatThrownBy(() -> HostConfig.parse("http:\n\tport: 1\n", "config.yaml"))
        .hasMessageStartingWith("config.yaml line 2, column 1: not valid YAML: ")
        .hasMessageContaining("(Do not use \\t(TAB) for indentation)");
  }

  @Test
  void aListOrMappingInsideAListOfStringsIsRefusedWithItsLine() {
    String yaml =
        """
        profiles:
          reviewer:
            allow_sources: [builtin:guides, [builtin:web]]
            deny_tools:
              - {name: shell}
        """;

    assertThatThrownBy(() -> HostConfig.parse(yaml, "config.yaml"))
        .hasMessage(
            "config.yaml line 3, column 37: wrong type for 'profiles.reviewer.allow_sources[1]':"
                + " expected a string, got a list\n"
                + "config.yaml line 5, column 9: wrong type for 'profiles.reviewer.deny_tools[0]':"
                + " expected a string, got a mapping");
  }

  @Test
  void everyProblemIsReportedAtOnce() {
    String yaml =
        """
        http:
          port: -1
        profiles:
          reviewer:
            allow_tools: ['']
        """;

    assertThatThrownBy(() -> HostConfig.parse(yaml, "config.yaml"))
        .hasMessage(
            "config.yaml line 2, column 9: 'http.port' is -1, out of range (expected 0 to 65535; 0"
                + " picks a free port)\n"
                + "config.yaml line 5, column 19: 'profiles.reviewer.allow_tools[0]' is empty"
                + " (expected a tool name)");
  }

  @Test
  void tokenAndTokenEnvTogetherAreRefused() {
    assertThatThrownBy(
            () -> HostConfig.parse("http:\n  token: abc\n  token_env: X\n", "config.yaml"))
        .hasMessage(
            "config.yaml line 2, column 3: set either 'token' or 'token_env' under 'http', not"
                + " both");
  }

  @Test
  void missingFileIsRefusedNamingIt() {
    Path missing = dir.resolve("missing.yaml");

    assertThatThrownBy(() -> HostConfig.load(missing))
        .isInstanceOf(ConfigException.class)
        .hasMessageStartingWith(missing + ": no such config file");
  }

  @Test
  void errorMessagesNameTheFileAsGiven() throws Exception {
    Path file = dir.resolve("host.yaml");
    Files.writeString(file, "telemetry:\n  record_contents: true\n");

    assertThatThrownBy(() -> HostConfig.load(file))
        .hasMessageStartingWith(file + " line 2, column 3: unknown key 'record_contents'");
  }

  @Test
  void tokenComesFromTheLiteralOrTheNamedEnvironmentVariable() {
    HostConfig.Http http = HostConfig.Http.defaults();

    assertThat(http.bearerToken(Map.of())).isEmpty();
    assertThat(http.bearerToken(Map.of("TOOLHOST_TOKEN", "s3cret"))).contains("s3cret");
    assertThat(http.bearerToken(Map.of("TOOLHOST_TOKEN", " "))).isEmpty();
    assertThat(http.withToken("literal").bearerToken(Map.of("TOOLHOST_TOKEN", "s3cret")))
        .contains("literal");
  }

  @Test
  void theTokenIsNeverShown() {
    HostConfig config =
        HostConfig.defaults().withHttp(HostConfig.Http.defaults().withToken("s3cret"));

    assertThat(config.toString()).doesNotContain("s3cret").contains("token=(set)");
  }

  @Test
  void profilesBuiltInCodeAreCheckedToo() {
    HostConfig config =
        HostConfig.defaults()
            .withProfiles(List.of(HostConfig.Profile.of("reviewer").extending("nobody")));

    assertThatThrownBy(config::toolProfiles)
        .isInstanceOf(ConfigException.class)
        .hasMessageStartingWith("profile 'reviewer' extends 'nobody', which is not a profile");
  }
}
