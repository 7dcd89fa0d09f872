package dev.toolhost.exec;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.core.ToolResult;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import tools.jackson.databind.JsonNode;

@Timeout(60)
class ShellToolTest {

  @RegisterExtension static final ExecFixture fixture = ExecFixture.create();

  @Test
  void aCommandRunsInTheWorkspaceAndSaysItRanSandboxed() {
    ToolResult result =
        fixture.call("shell", Map.of("command", "echo hello; pwd; echo oops >&2; exit 3"));

    JsonNode json = ExecFixture.structured(result);
    assertThat(json.get("exit_code").asInt()).isEqualTo(3);
    assertThat(json.get("stdout").asString()).isEqualTo("hello\n" + fixture.workspace() + "\n");
    assertThat(json.get("stderr").asString()).isEqualTo("oops\n");
    assertThat(json.get("sandboxed").asBoolean()).isTrue();
    assertThat(json.get("timed_out").asBoolean()).isFalse();
    assertThat(json.get("truncated").asBoolean()).isFalse();
    assertThat(result.text())
        .startsWith("[exit code 3 in ")
        .contains("; sandboxed]\nstdout:\nhello\n")
        .endsWith("stderr:\noops\n");
  }
}
