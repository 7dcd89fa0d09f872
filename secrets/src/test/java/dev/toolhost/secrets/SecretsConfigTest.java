package dev.toolhost.secrets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.Redactor;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSpec;
import dev.toolhost.core.spi.ConfigException;
import dev.toolhost.host.HostConfig;
import dev.toolhost.testing.TestHost;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.assertj.core.api.AbstractThrowableAssert;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.json.JsonMapper;

/**
 * The {@code secrets:} section: refused with its place when wrong, and when right, what a host of
 * it does to a tool's result, on a host with the secrets extension alone.
 */
class SecretsConfigTest {

  private static final String LOWER_ALNUM = "abcdefghijklmnopqrstuvwxyz0123456789";

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
    return TestHost.config(yaml, List.of(new SecretsExtension()), Path.of(""));
  }

  /** Asserts that the config text is refused, and gives the refusal to check its message. */
  private static AbstractThrowableAssert<?, ? extends Throwable> refused(String yaml) {
    return assertThatThrownBy(() -> parse(yaml)).isInstanceOf(ConfigException.class);
  }

  /** A fake secret made at run time, so that no secret-looking literal is in the source. */
  private static String random(long seed, String alphabet, int length) {
    return SecretSamples.random(new Random(seed), alphabet, length);
  }

  private Path write(String name, String text) throws Exception {
    Path file = dir.resolve(name);
    Files.createDirectories(file.getParent());
    Files.writeString(file, text);
    return file;
  }

  @Test
  void aTypoKeyIsRefusedWithItsPlaceAndTheNearestKey() {
    refused("secrets:\n  policy: redact\n  replace_rule: true\n")
        .hasMessage(
            "toolhost.yaml line 3, column 3: unknown key 'replace_rule' under 'secrets' (did you"
                + " mean 'replace_rules'? expected one of: allow, depth, policy, profiles,"
                + " replace_rules, rules, secret_env, sources)");
    refused("secrets:\n  allow:\n    value: [x]\n")
        .hasMessageStartingWith(
            "toolhost.yaml line 3, column 5: unknown key 'value' under 'secrets.allow' (did you"
                + " mean 'values'?");
  }

  @Test
  void aPolicyThatIsNoActionIsRefusedNamingTheAllowedOnes() {
    refused(
            """
                    secrets:
                      policy: maybe
                      profiles: {subagent: never}
                      sources: {"mcp:docs": sometimes}
                    """)
        .hasMessage(
            """
            toolhost.yaml line 2, column 11: 'secrets.policy' is 'maybe' (expected one of: redact, block, off)
            toolhost.yaml line 3, column 24: 'secrets.profiles.subagent' is 'never' (expected one of: redact, block, off)
            toolhost.yaml line 4, column 25: 'secrets.sources.mcp:docs' is 'sometimes' (expected one of: redact, block, off)\
            """);
  }

  @Test
  void aProfileThatDoesNotExistIsRefused() {
    refused(
            """
                    profiles:
                      reviewer:
                        extends: main
                    secrets:
                      profiles:
                        reviewer: block
                        reveiwer: block
                    """)
        .hasMessage(
            "toolhost.yaml line 7, column 5: 'secrets.profiles' names an unknown profile"
                + " 'reveiwer' (known profiles: main, subagent, scheduled, a2a_synthesis,"
                + " reviewer)");
  }

  @Test
  void aRulesFileThatIsMissingOrDoesNotParseIsRefusedNamingIt() throws Exception {
    write(
        "rules/broken.toml",
        "[[rules]]\nid = \"acme-session\"\nregex = '''(?<=session=)[a-z0-9]{32}'''\n");
    write("rules/not-toml.toml", "[[rules]\nid = ");
    String config =
        """
        secrets:
          rules:
            - rules/missing.toml
            - rules/broken.toml
            - rules/not-toml.toml
        """;

    assertThatThrownBy(() -> TestHost.config(config, List.of(new SecretsExtension()), dir))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining(
            "toolhost.yaml line 3, column 7: 'secrets.rules[0]' is 'rules/missing.toml', which cannot be"
                + " read (NoSuchFileException: "
                + dir.resolve("rules/missing.toml")
                + "; expected a gitleaks-format TOML rule file)")
        .hasMessageContaining(
            "toolhost.yaml line 4, column 7: 'secrets.rules[1]': "
                + dir.resolve("rules/broken.toml")
                + ": rule 'acme-session': the expression does not compile:")
        .hasMessageContaining(
            "toolhost.yaml line 5, column 7: 'secrets.rules[2]': "
                + dir.resolve("rules/not-toml.toml")
                + ": not a TOML rule file:");
  }

  @Test
  void replacingTheRulesWithNoRulesFileIsRefused() {
    refused("secrets:\n  replace_rules: true\n")
        .hasMessage(
            "toolhost.yaml line 2, column 18: 'secrets.replace_rules' is true but 'secrets.rules'"
                + " lists no rule file (the scanner would run no rule)");
  }

  @Test
  void aDepthBeyondFiveIsRefused() {
    refused("secrets:\n  depth: 9\n")
        .hasMessage(
            "toolhost.yaml line 2, column 10: 'secrets.depth' is 9 (expected 0 to 5 levels of"
                + " encoding)");
    refused("secrets:\n  depth: -1\n").hasMessageContaining("'secrets.depth' is -1");
  }

  @Test
  void anAllowedRuleThatIsNoRuleIsRefused() {
    refused("secrets:\n  allow:\n    rules: [generic-api-ky]\n")
        .hasMessage(
            "toolhost.yaml line 3, column 13: 'secrets.allow.rules[0]' names no rule:"
                + " 'generic-api-ky' (rule ids are gitleaks', such as generic-api-key)");
  }

  /** The host of a config file with a rules file beside it, and a tool that leaks. */
  private TestHost host(String policyLines, Map<String, String> environment, String leaked)
      throws Exception {
    write("rules/company.toml", COMPANY_RULES);
    TestHost host =
        TestHost.builder()
            .config(
                """
                profiles:
                  helper: {extends: main}
                secrets:
                  rules: [rules/company.toml]
                  secret_env: [DB_URL]
                  depth: 2
                %s"""
                    .formatted(policyLines))
            .directory(dir)
            .environment(environment)
            .extensions(List.of(new SecretsExtension()))
            .start();
    host.runtime()
        .registry()
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
    String deployKey = "acmedk_" + random(1, LOWER_ALNUM, 24);
    String githubPat = "ghp_" + random(2, SecretSamples.ALNUM, 36);
    String password = random(3, SecretSamples.ALNUM, 20);
    String dbUrl = "postgres://app:" + password + "@db.internal:5432/app";

    try (TestHost host =
        host(
            "  policy: redact\n",
            Map.of("DB_URL", dbUrl),
            deployKey + ", " + githubPat + " and " + dbUrl)) {
      ToolResult result = host.call("deploy_status", "{}");

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
    String deployKey = "acmedk_" + random(5, LOWER_ALNUM, 24);
    String line = "deploy failed with " + deployKey + "\n";
    ByteArrayOutputStream log = new ByteArrayOutputStream();
    // As the command line's standard error is built, over a base that knows no rule of its own.
    PrintStream err =
        new PrintStream(
            new RedactingOutputStream(log, () -> LogRedaction.over(Redactor.NONE)),
            true,
            StandardCharsets.UTF_8);

    try (TestHost host = host("  policy: redact\n", Map.of(), deployKey)) {
      err.print(line);
    }
    String whileRunning = log.toString(StandardCharsets.UTF_8);
    err.print(line);

    assertThat(whileRunning).isEqualTo("deploy failed with [REDACTED:acme-deploy-key]\n");
    assertThat(log.toString(StandardCharsets.UTF_8)).endsWith(line);
  }

  @Test
  void blockForProfileMainAnswersAnError() throws Exception {
    String deployKey = "acmedk_" + random(4, LOWER_ALNUM, 24);

    try (TestHost host = host("  profiles: {main: block}\n", Map.of(), deployKey)) {
      ToolResult main = host.call("deploy_status", "{}");
      ToolResult helper = host.call("helper", "deploy_status", "{}");

      assertThat(main).isInstanceOf(ToolResult.Failure.class);
      assertThat(((ToolResult.Failure) main).error().code()).isEqualTo(ErrorCode.EXECUTION_FAILED);
      assertThat(main.text())
          .contains("deploy_status", "acme-deploy-key")
          .doesNotContain(deployKey.substring("acmedk_".length()));
      // Another profile, though it sees what main sees, is not main's policy.
      assertThat(helper.isError()).isFalse();
      assertThat(helper.text()).startsWith("Deployed with [REDACTED:acme-deploy-key].\n");
    }
  }
}
