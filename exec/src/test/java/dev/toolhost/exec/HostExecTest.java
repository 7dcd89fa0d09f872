package dev.toolhost.exec;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolResult;
import dev.toolhost.secrets.SecretsExtension;
import dev.toolhost.testing.TestHost;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The exec extension in a host: scoped by profile, and keeping the host's secrets from sandboxed
 * processes, those the secrets section names among them. (Without its section it registers no tool,
 * and subagents and scheduled tasks are denied its tools: {@link ExecExtensionContractTest}.)
 */
@Timeout(120)
class HostExecTest {

  private static final String TOKEN = "th-Exec9vQ2mL7xR4tN8wK1pB5cY3dF6gH0j";

  private Path base;
  private TestHost host;

  @BeforeEach
  void makeRoot() throws IOException {
    base = ExecFixture.reachableDirectory("host-exec");
  }

  @AfterEach
  void closeAll() throws IOException {
    if (host != null) {
      host.close();
    }
    ExecFixture.delete(base);
  }

  private String execSection() {
    return """
        exec:
          workspace_root: %s/workspaces
          pass_env: [TOOLHOST_TOKEN, TZ]
        """
        .formatted(base);
  }

  /** A host of the exec and secrets extensions, with that config and environment. */
  private TestHost start(String yaml, Map<String, String> environment) {
    host =
        TestHost.builder()
            .config(yaml)
            .environment(environment)
            .extensions(List.of(new ExecExtension(), new SecretsExtension()))
            .start();
    return host;
  }

  private ToolResult call(String profile, String command, String session) {
    return host.runtime()
        .dispatcher()
        .dispatch(
            host.runtime().toolSet(profile),
            ToolCall.of("shell", "{\"command\": \"" + command + "\"}").withSessionId(session));
  }

  @Test
  void aVariableTheSecretsSectionCallsSecretIsNotPassedThroughThoughTheExecSectionNamesIt() {
    String url = "postgres://app:pw-" + UUID.randomUUID() + "@db.internal/app";
    start(
        "secrets:\n  secret_env: [DB_URL]\n"
            + execSection().replace("pass_env: [", "pass_env: [DB_URL, "),
        Map.of("TOOLHOST_TOKEN", TOKEN, "TZ", "UTC", "DB_URL", url));

    ToolResult result = call("main", "env", "db-1");

    assertThat(result.isError()).as(result.text()).isFalse();
    assertThat(result.text()).contains("TZ=UTC").doesNotContain("DB_URL").doesNotContain("pw-");
  }

  @Test
  void theToolsServeTheMainProfileNeitherSubagentsNorScheduledTasksAndNoHostSecretReachesThem()
      throws Exception {
    start(execSection(), Map.of("TOOLHOST_TOKEN", TOKEN, "TZ", "UTC"));

    assertThat(host.runtime().toolSet("main").specs())
        .extracting(spec -> spec.name() + " " + spec.source())
        .contains(
            "shell builtin:exec",
            "exec builtin:exec",
            "file builtin:exec",
            "execute_python_script builtin:exec");
    for (String profile : List.of("subagent", "scheduled")) {
      assertThat(host.runtime().toolSet(profile).specs())
          .extracting(spec -> spec.name())
          .as(profile)
          .doesNotContainAnyElementsOf(ExecTools.NAMES);
    }
    ToolResult result = call("main", "env | sort", "web-1");
    assertThat(result.isError()).as(result.text()).isFalse();
    // The config passes TOOLHOST_TOKEN through by name, but a secret never passes.
    assertThat(result.text())
        .contains("TZ=UTC\n", "HOME=" + base.toRealPath() + "/workspaces/web-1\n")
        .doesNotContain(TOKEN)
        .doesNotContain("TOOLHOST_TOKEN");
    ToolResult asSubagent = call("subagent", "id", "web-1");
    assertThat(asSubagent).isInstanceOf(ToolResult.Failure.class);
    assertThat(((ToolResult.Failure) asSubagent).error().code())
        .as(asSubagent.text())
        .isEqualTo(ErrorCode.TOOL_NOT_FOUND);
  }
}
