package dev.toolhost.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.Redactor;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSpec;
import dev.toolhost.core.spi.ConfigException;
import dev.toolhost.host.HostConfig;
import dev.toolhost.secrets.LogRedaction;
import dev.toolhost.secrets.RedactingOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;
import tools.jackson.databind.json.JsonMapper;

/**
 * The {@code secrets:} section: refused with its place when wrong, and when right, what a host of
 * it does to a tool's result.
 */
class SecretsConfigTest {

  private static final String ALNUM =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

  /** A company rule: what {@code rules:} adds to gitleaks' set. */
  private static final String COMPANY_RULES =
      """
      [[rules]]
      id = "acme-deploy-key"
      description = "An ACME deploy key."
      regex = '''\\bacmedk_[a-z0-9]{24}\\b'''
      keywords = ["acmedk_"]
      """;

  @TempDir Path dir;

  private static HostConfig parse(String yaml) {
    return HostConfig.parse(yaml, "secrets.yaml");
  }

  /** A fake secret made at run time, so that no secret-looking literal is in the source. */
  private static String random(long seed, String alphabet, int length) {
    Random random = new Random(seed);
    StringBuilder out = new StringBuilder();
    for (int i = 0; i < length; i++) {
      out.append(alphabet.charAt(random.nextInt(alphabet.length())));
    }
    return out.toString();
  }

  private Path write(String name, String text) throws Exception {
    Path file = dir.resolve(name);
    Files.createDirectories(file.getParent());
    Files.writeString(file, text);
    return file;
  }

  @Test
  void aTypoKeyIsRefusedWithItsPlaceAndTheNearestKey() {
    assertThatThrownBy(() -> parse("secrets:\n  policy: redact\n  replace_rule: true\n"))
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            "secrets.yaml line 3, column 3: unknown key 'replace_rule' under 'secrets' (did you"
                + " mean 'replace_rules'? expected one of: allow, depth, policy, profiles,"
                + " replace_rules, rules, secret_env, sources)");
    assertThatThrownBy(() -> parse("secrets:\n  allow:\n    value: [x]\n"))
        .isInstanceOf(ConfigException.class)
        .hasMessageStartingWith(
            "secrets.yaml line 3, column 5: unknown key 'value' under 'secrets.allow' (did you"
                + " mean 'values'?");
  }

  @Test
  void aPolicyThatIsNoActionIsRefusedNamingTheAllowedOnes() {
    assertThatThrownBy(
            () ->
                parse(
                    """
                    secrets:
                      policy: maybe
                      profiles: {subagent: never}
                      sources: {"mcp:docs": sometimes}
                    """))
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            """
            secrets.yaml line 2, column 11: 'secrets.policy' is 'maybe' (expected one of: redact, block, off)
            secrets.yaml line 3, column 24: 'secrets.profiles.subagent' is 'never' (expected one of: redact, block, off)
            secrets.yaml line 4, column 25: 'secrets.sources.mcp:docs' is 'sometimes' (expected one of: redact, block, off)\
            """);
  }

  @Test
  void aProfileThatDoesNotExistIsRefused() {
    assertThatThrownBy(
            () ->
                parse(
                    """
                    profiles:
                      reviewer:
                        extends: main
                    secrets:
                      profiles:
                        reviewer: block
                        reveiwer: block
                    """))
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            "secrets.yaml line 7, column 5: 'secrets.profiles' names an unknown profile"
                + " 'reveiwer' (known profiles: main, subagent, scheduled, a2a_synthesis,"
                + " reviewer)");
  }

  @Test
  void aRulesFileThatIsMissingOrDoesNotParseIsRefusedNamingIt() throws Exception {
    write(
        "rules/broken.toml",
        "[[rules]]\nid = \"acme-session\"\nregex = '''(?<=session=)[a-z0-9]{32}'''\n");
    write("rules/not-toml.toml", "[[rules]\nid = ");
    Path config =
        write(
            "toolhost.yaml",
            """
            secrets:
              rules:
                - rules/missing.toml
                - rules/broken.toml
                - rules/not-toml.toml
            """);

    assertThatThrownBy(() -> HostConfig.load(config))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining(
            config
                + " line 3, column 7: 'secrets.rules[0]' is 'rules/missing.toml', which cannot be"
                + " read (NoSuchFileException: "
                + dir.resolve("rules/missing.toml")
                + "; expected a gitleaks-format TOML rule file)")
        .hasMessageContaining(
            config
                + " line 4, column 7: 'secrets.rules[1]': "
                + dir.resolve("rules/broken.toml")
                + ": rule 'acme-session': the expression does not compile:")
        .hasMessageContaining(
            config
                + " line 5, column 7: 'secrets.rules[2]': "
                + dir.resolve("rules/not-toml.toml")
                + ": not a TOML rule file:");
  }

  @Test
  void replacingTheRulesWithNoRulesFileIsRefused() {
    assertThatThrownBy(() -> parse("secrets:\n  replace_rules: true\n"))
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            "secrets.yaml line 2, column 18: 'secrets.replace_rules' is true but 'secrets.rules'"
                + " lists no rule file (the scanner would run no rule)");
  }

  @Test
  void aDepthBeyondFiveIsRefused() {
    assertThatThrownBy(() -> parse("secrets:\n  depth: 9\n"))
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            "secrets.yaml line 2, column 10: 'secrets.depth' is 9 (expected 0 to 5 levels of"
                + " encoding)");
    assertThatThrownBy(() -> parse("secrets:\n  depth: -1\n"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("'secrets.depth' is -1");
  }

  @Test
  void anAllowedRuleThatIsNoRuleIsRefused() {
    assertThatThrownBy(() -> parse("secrets:\n  allow:\n    rules: [generic-api-ky]\n"))
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            "secrets.yaml line 3, column 13: 'secrets.allow.rules[0]' names no rule:"
                + " 'generic-api-ky' (rule ids are gitleaks', such as generic-api-key)");
  }

  @Test
  void configCheckNamesASecretsProblemWithItsPlace() throws Exception {
    Path bad = write("bad.yaml", "secrets:\n  policy: maybe\n");
    Path good = write("good.yaml", "secrets:\n  policy: block\n  depth: 3\n");

    CommandRun invalid = CommandRun.of("config", "check", bad.toString());
    CommandRun valid = CommandRun.of("config", "check", good.toString());

    assertThat(invalid.exitCode()).isEqualTo(CommandLine.ExitCode.USAGE);
    assertThat(invalid.err())
        .contains(
            bad
                + " line 2, column 11: 'secrets.policy' is 'maybe' (expected one of: redact,"
                + " block, off)");
    assertThat(valid.exitCode()).as(valid.err()).isZero();
    assertThat(valid.out()).contains(good + ": valid");
  }

  /** The host of a config file with a rules file beside it, and a tool that leaks. */
  private Host host(String policyLines, Map<String, String> environment, String leaked)
      throws Exception {
    write("rules/company.toml", COMPANY_RULES);
    Path config =
        write(
            "toolhost.yaml",
            """
            http:
              port: 0
            secrets:
              rules: [rules/company.toml]
              secret_env: [DB_URL]
              depth: 2
            %s"""
                .formatted(policyLines));
    Host host = Host.builder(HostConfig.load(config)).environment(environment).build();
    host.registry()
        .register(
            new ToolSpec(
                "deploy_status",
                "Says how the last deploy went.",
                JsonMapper.shared().createObjectNode().put("type", "object"),
                "builtin:deploy"),
            (call, arguments) -> ToolResult.success("Deployed with " + leaked + "."));
    return host;
  }

  @Test
  void aValidSectionIsAcceptedAndItsHostRedactsByItsRulesAndKnownValues() throws Exception {
    String deployKey = "acmedk_" + random(1, "abcdefghijklmnopqrstuvwxyz0123456789", 24);
    String githubPat = "ghp_" + random(2, ALNUM, 36);
    String password = random(3, ALNUM, 20);
    String dbUrl = "postgres://app:" + password + "@db.internal:5432/app";

    try (Host host =
        host(
            "  policy: redact\n",
            Map.of("DB_URL", dbUrl),
            deployKey + ", " + githubPat + " and " + dbUrl)) {
      ToolResult result =
          host.dispatcher().dispatch(host.toolSet("main"), ToolCall.of("deploy_status", "{}"));

      assertThat(result.isError()).isFalse();
      assertThat(result.text())
          .isEqualTo(
              "Deployed with [REDACTED:acme-deploy-key], [REDACTED:github-pat] and"
                  + " [REDACTED:DB_URL].\n"
                  + "[toolhost: 3 secrets were removed from this result]");
    }
  }

  @Test
  void theSectionsRulesRedactTheProcesssLogLinesWhileItsHostRuns() throws Exception {
    String deployKey = "acmedk_" + random(5, "abcdefghijklmnopqrstuvwxyz0123456789", 24);
    String line = "deploy failed with " + deployKey + "\n";
    ByteArrayOutputStream log = new ByteArrayOutputStream();
    // As the command line's standard error is built, over a base that knows no rule of its own.
    PrintStream err =
        new PrintStream(
            new RedactingOutputStream(log, () -> LogRedaction.over(Redactor.NONE)),
            true,
            StandardCharsets.UTF_8);

    try (Host host = host("  policy: redact\n", Map.of(), deployKey)) {
      err.print(line);
    }
    String whileRunning = log.toString(StandardCharsets.UTF_8);
    err.print(line);

    assertThat(whileRunning).isEqualTo("deploy failed with [REDACTED:acme-deploy-key]\n");
    assertThat(log.toString(StandardCharsets.UTF_8)).endsWith(line);
  }

  @Test
  void blockForProfileMainAnswersAnError() throws Exception {
    String deployKey = "acmedk_" + random(4, "abcdefghijklmnopqrstuvwxyz0123456789", 24);

    try (Host host = host("  profiles: {main: block}\n", Map.of(), deployKey)) {
      ToolResult main =
          host.dispatcher().dispatch(host.toolSet("main"), ToolCall.of("deploy_status", "{}"));
      ToolResult subagent =
          host.dispatcher().dispatch(host.toolSet("subagent"), ToolCall.of("deploy_status", "{}"));

      assertThat(main).isInstanceOf(ToolResult.Failure.class);
      assertThat(((ToolResult.Failure) main).error().code()).isEqualTo(ErrorCode.EXECUTION_FAILED);
      assertThat(main.text())
          .contains("deploy_status", "acme-deploy-key")
          .doesNotContain(deployKey.substring("acmedk_".length()));
      assertThat(subagent.isError()).isFalse();
      assertThat(subagent.text()).startsWith("Deployed with [REDACTED:acme-deploy-key].\n");
    }
  }
}
