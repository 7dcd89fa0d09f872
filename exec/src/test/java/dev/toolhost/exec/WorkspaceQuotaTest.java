package dev.toolhost.exec;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.core.ToolResult;
import java.nio.file.Files;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import tools.jackson.databind.JsonNode;

/**
 * A workspace's disk quota ({@code exec.limits.workspace_mb}), kept by the kernel on this machine
 * (a root host with loop devices): a write past it fails with a clear error, and nothing else is
 * lost, for the file tool and for sandboxed processes.
 */
@Timeout(120)
class WorkspaceQuotaTest {

  private static final long MIB = 1L << 20;

  /** The defaults, but a quota of 16 MiB a workspace and 64 MiB a file. */
  private static final ExecConfig.Limits LIMITS =
      new ExecConfig.Limits(1024 * MIB, 300, 64 * MIB, 256, 64 * 1024, 16 * MIB, 2048 * MIB, 50);

  @RegisterExtension
  static final ExecFixture fixture = ExecFixture.create(builder -> builder.limits(LIMITS));

  @BeforeAll
  static void start() throws Exception {
    assertThat(fixture.workspaces.kernelQuota()).as("the kernel keeps quotas here").isTrue();
  }

  @Test
  void processesThatWriteFilesUnderThePerFileLimitStillStopAtTheWorkspacesQuota() {
    // Five files of 6 MiB each, every one under the 64 MiB a file may have: 30 MiB in all.
    JsonNode json =
        fixture.shell(
            "mkdir -p flood && for i in 1 2 3 4 5; do head -c 6M /dev/zero > flood/f$i; done; du -sm flood");

    assertThat(json.get("stderr").asString()).contains("No space left on device");
    String used = json.get("stdout").asString().split("\\s+")[0];
    assertThat(Integer.parseInt(used)).isLessThanOrEqualTo(16);
    fixture.shell("rm -rf flood");
  }

  @Test
  void aFileToolWritePastTheQuotaIsRefusedAndTheOldContentStays() throws Exception {
    String nine = "a".repeat(9 * (int) MIB);
    assertThat(
            fixture
                .call("file", Map.of("operation", "write", "path", "big", "content", nine))
                .isError())
        .isFalse();

    ToolResult second =
        fixture.call("file", Map.of("operation", "write", "path", "big2", "content", nine));
    ToolResult replace =
        fixture.call("file", Map.of("operation", "write", "path", "big", "content", "b" + nine));
    ToolResult append =
        fixture.call("file", Map.of("operation", "append", "path", "big", "content", nine));

    for (ToolResult refused : new ToolResult[] {second, replace, append}) {
      assertThat(refused.isError()).isTrue();
      assertThat(refused.text()).contains("quota (16 MiB)").contains("nothing was changed");
    }
    assertThat(Files.size(fixture.workspace().resolve("big"))).isEqualTo(9 * MIB);
    assertThat(Files.readString(fixture.workspace().resolve("big")))
        .startsWith("aaaa")
        .doesNotContain("b");
    assertThat(fixture.workspace().resolve("big2")).doesNotExist();
    fixture.call("file", Map.of("operation", "write", "path", "big", "content", "small"));
  }

  @Test
  void aHostTakesOverTheWorkspacesADeadHostLeftMountedAndUnmountsThemWhenItCloses()
      throws Exception {
    ExecConfig config = ExecConfig.builder(fixture.root).limits(LIMITS).build();
    // The first host mounts a workspace and dies without unmounting it.
    Workspaces dead = new Workspaces(config, fixture.sandbox.childUid());
    dead.prepare();
    java.nio.file.Path left = dead.session(java.util.Optional.of("left-behind"));
    assertThat(mounted(left)).isTrue();

    Workspaces next = new Workspaces(config, fixture.sandbox.childUid());
    next.prepare();
    next.close();

    assertThat(mounted(left)).isFalse();
  }

  private static boolean mounted(java.nio.file.Path path) throws Exception {
    return Files.readAllLines(java.nio.file.Path.of("/proc/self/mountinfo")).stream()
        .anyMatch(line -> line.split(" ")[4].equals(path.toString()));
  }

  @Test
  void aStartingHostRemovesTheWorkspacesNoCallUsedForLongerThanTheirTime() throws Exception {
    ExecConfig config =
        ExecConfig.builder(fixture.root)
            .limits(LIMITS)
            .workspaceTtl(java.time.Duration.ofDays(1))
            .build();
    Workspaces first = new Workspaces(config, fixture.sandbox.childUid());
    first.prepare();
    java.nio.file.Path stale = first.session(java.util.Optional.of("stale"));
    java.nio.file.Path fresh = first.session(java.util.Optional.of("fresh"));
    Files.writeString(stale.resolve("notes"), "old");
    first.close();
    java.nio.file.Path staleImage = fixture.root.resolve(".images/stale.img");
    Files.setLastModifiedTime(
        staleImage,
        java.nio.file.attribute.FileTime.from(
            java.time.Instant.now().minus(java.time.Duration.ofDays(2))));

    Workspaces next = new Workspaces(config, fixture.sandbox.childUid());
    next.prepare();
    next.close();

    assertThat(stale).doesNotExist();
    assertThat(staleImage).doesNotExist();
    assertThat(fresh).isDirectory();
    assertThat(fixture.root.resolve(".images/fresh.img")).exists();
  }
}
