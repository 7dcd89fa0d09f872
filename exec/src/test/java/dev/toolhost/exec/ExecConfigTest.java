package dev.toolhost.exec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.toolhost.core.spi.ConfigException;
import dev.toolhost.host.HostConfig;
import dev.toolhost.testing.TestHost;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.assertj.core.api.AbstractThrowableAssert;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code exec:} section, read as {@code toolhost config check} reads it: every problem refused
 * at once, with its place.
 */
class ExecConfigTest {

  private static HostConfig parse(String yaml) {
    return parse(yaml, Path.of(""));
  }

  /** Asserts that the config text is refused, and gives the refusal to check its message. */
  private static AbstractThrowableAssert<?, ? extends Throwable> refused(String yaml) {
    return refused(yaml, Path.of(""));
  }

  private static AbstractThrowableAssert<?, ? extends Throwable> refused(
      String yaml, Path directory) {
    return assertThatThrownBy(() -> parse(yaml, directory)).isInstanceOf(ConfigException.class);
  }

  private static HostConfig parse(String yaml, Path directory) {
    return TestHost.config(yaml, List.of(new ExecExtension()), directory);
  }

  @Test
  void aSectionWithoutAWorkspaceRootIsRefusedSayingWhatToAdd() {
    refused("exec:\n  network: false\n")
        .hasMessageContaining(
            "'exec.workspace_root' is missing (expected the directory that holds one workspace per"
                + " session, such as /var/lib/toolhost/workspaces)");
  }

  @Test
  void everyProblemOfTheSectionIsReportedAtOnceWithItsPlace() {
    String problems =
        """
        exec:
          workspace_root: /
          max_timeout: soon
          limits:
            memory_mb: 0
          pass_env: [LD_PRELOAD, ok_name, "A=B"]
          sandbox_uid: 0
        """;

    // With an unknown key as well, the key it was meant to be is named.
    refused(problems + "  unsandboxd: true\n")
        .hasMessageContaining(
            "toolhost.yaml line 8, column 3: unknown key 'unsandboxd' under 'exec' (did you mean"
                + " 'unsandboxed'?");
    refused(problems)
        .hasMessageContaining(
            "line 2, column 19: 'exec.workspace_root' is '/' (expected a directory of its own, at"
                + " least two levels below /)")
        .hasMessageContaining(
            "line 3, column 16: 'exec.max_timeout' is 'soon' (expected a positive duration, such"
                + " as 30s, 5m or 1h)")
        .hasMessageContaining(
            "line 5, column 16: 'exec.limits.memory_mb' is 0 (expected a positive number)")
        .hasMessageContaining(
            "line 6, column 14: 'exec.pass_env[0]': the environment variable 'LD_PRELOAD' is blocked")
        .hasMessageContaining("'exec.pass_env[2]': the environment variable name 'A=B' holds '='")
        .hasMessageContaining(
            "line 7, column 16: 'exec.sandbox_uid' is 0 (expected the uid of an unprivileged"
                + " user, such as 65534)");
  }

  @Test
  void aValidSectionParses() {
    HostConfig config =
        parse(
            """
            exec:
              workspace_root: /tmp/toolhost-config-test
              network: false
              max_timeout: 2m
              limits: {memory_mb: 512, processes: 64}
              pass_env: [TZ]
              prompt_silence: 3s
            """);

    assertThat(config).isNotNull();
  }

  @Test
  void aWorkspaceRootInTheConfigFilesDirectoryIsAConfigErrorAtItsLine(@TempDir Path dir) {
    refused("exec:\n  workspace_root: workspaces\n", dir)
        .hasMessageContaining(
            "toolhost.yaml line 2, column 19: 'exec.workspace_root' is '"
                + dir.resolve("workspaces")
                + "', inside the protected path '"
                + dir
                + "' (the config file's directory): sessions would write where the file tool must"
                + " not");
  }

  @Test
  void aWorkspaceRootInAProtectedPathOrLinkedIntoOneIsRefused(@TempDir Path dir) throws Exception {
    Path etc = Files.createDirectories(dir.resolve("etc"));
    Path secret = Files.createDirectories(dir.resolve("secret"));
    Path link = Files.createSymbolicLink(dir.resolve("innocent"), secret);

    refused(
            "exec:\n  protected_paths: ['"
                + secret
                + "']\n  workspace_root: '"
                + link.resolve("workspaces")
                + "'\n",
            etc)
        .hasMessageContaining(
            "line 3, column 19: 'exec.workspace_root' is '"
                + link.resolve("workspaces")
                + "', inside the protected path '"
                + secret
                + "': sessions");
    assertThat(parse("exec:\n  workspace_root: '" + dir.resolve("workspaces") + "'\n", etc))
        .isNotNull();
  }
}
