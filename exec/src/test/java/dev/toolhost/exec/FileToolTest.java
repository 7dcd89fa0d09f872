package dev.toolhost.exec;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ToolResult;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import tools.jackson.databind.JsonNode;

/** The file tool: its checks in Java, on the real file system, never following a link out. */
@Timeout(60)
class FileToolTest {

  @RegisterExtension static final ExecFixture fixture = ExecFixture.create();

  private static ToolResult file(Map<String, ?> arguments) {
    return fixture.call("file", arguments);
  }

  private static void assertRefused(ToolResult result, String message) {
    assertThat(result).isInstanceOf(ToolResult.Failure.class);
    assertThat(((ToolResult.Failure) result).error().code()).isEqualTo(ErrorCode.INVALID_ARGUMENTS);
    assertThat(result.text()).isEqualTo(message);
  }

  @Test
  void aWriteCreatesParentsAndTheSandboxCanChangeWhatItWrote() {
    ToolResult written =
        file(Map.of("operation", "write", "path", "a/b/c.txt", "content", "one\n"));

    assertThat(written.text()).isEqualTo("Wrote 4 bytes to a/b/c.txt (now 4 bytes).");
    assertThat(fixture.workspace().resolve("a/b/c.txt")).hasContent("one");
    // The sandbox user owns what the file tool made, so commands can change it.
    assertThat(fixture.shell("echo two >> a/b/c.txt && cat a/b/c.txt").get("stdout").asString())
        .isEqualTo("one\ntwo\n");
    ToolResult appended =
        file(Map.of("operation", "append", "path", "a/b/c.txt", "content", "three\n"));
    assertThat(appended.text()).isEqualTo("Appended 6 bytes to a/b/c.txt (now 14 bytes).");
  }

  @Test
  void aReadTakesLinesFromAnOffsetUpToALimitAndSaysWhereToGoOn() {
    StringBuilder lines = new StringBuilder();
    for (int i = 1; i <= 10; i++) {
      lines.append("line ").append(i).append('\n');
    }
    file(Map.of("operation", "write", "path", "ten.txt", "content", lines.toString()));

    ToolResult read = file(Map.of("operation", "read", "path", "ten.txt", "offset", 3, "limit", 2));

    assertThat(read.text())
        .isEqualTo("line 3\nline 4\n[more lines follow: lines 3-4 shown; continue with offset 5]");
    JsonNode json = ExecFixture.structured(read);
    assertThat(json.get("next_offset").asInt()).isEqualTo(5);
    assertThat(file(Map.of("operation", "read", "path", "ten.txt", "offset", 9)).text())
        .isEqualTo("line 9\nline 10");
    assertRefused(
        file(Map.of("operation", "read", "path", "ten.txt", "offset", 20)),
        "The file 'ten.txt' has 10 lines; offset 20 is past its end.");
  }

  @Test
  void aLineLongerThanAWholeReadComesBackCut() throws IOException {
    Files.writeString(fixture.workspace().resolve("long.txt"), "z".repeat(400_000) + "\nnext\n");

    ToolResult read = file(Map.of("operation", "read", "path", "long.txt"));

    assertThat(read.text())
        .isEqualTo(
            "z".repeat(256 * 1024)
                + " [line cut at 256 KiB]\n[more lines follow: lines 1-1 shown; continue with"
                + " offset 2]");
    assertThat(file(Map.of("operation", "read", "path", "long.txt", "offset", 2)).text())
        .isEqualTo("next");
  }

  @Test
  void aListingIsCappedAndSaysHowManyWereLeftOut() throws IOException {
    Path many = Files.createDirectories(fixture.workspace().resolve("many"));
    for (int i = 0; i < 600; i++) {
      Files.writeString(many.resolve(String.format("f%04d", i)), "");
    }

    ToolResult listed = file(Map.of("operation", "list", "path", "many"));

    assertThat(listed.text()).endsWith("[100 more entries left out; at most 500 are listed]");
    JsonNode json = ExecFixture.structured(listed);
    assertThat(json.get("entries")).hasSize(500);
    assertThat(json.get("left_out").asInt()).isEqualTo(100);
  }

  @Test
  void pathsOutsideTheWorkspaceAreRefused() {
    String outsideMessage =
        "The path '%s' is outside the workspace; paths are relative to the workspace ("
            + fixture.workspace()
            + ").";
    for (String path :
        new String[] {"../other/x", "/etc/passwd", "/proc/self/environ", "a/../../x"}) {
      assertRefused(
          file(Map.of("operation", "read", "path", path)), outsideMessage.formatted(path));
    }
    assertRefused(
        file(Map.of("operation", "read", "path", "a\0b")), "A path may not hold a NUL byte.");
  }

  @Test
  void aSymlinkIsNeverFollowedOut() throws IOException {
    Files.createSymbolicLink(fixture.workspace().resolve("passwd"), Path.of("/etc/passwd"));
    Files.createSymbolicLink(fixture.workspace().resolve("etc"), Path.of("/etc"));

    assertRefused(
        file(Map.of("operation", "read", "path", "passwd")),
        "The path 'passwd' leads out of the workspace through a symbolic link; refused.");
    assertRefused(
        file(Map.of("operation", "write", "path", "etc/new", "content", "x")),
        "The path 'etc/new' leads out of the workspace through a symbolic link; refused.");
    assertThat(Path.of("/etc/new")).doesNotExist();
  }

  @Test
  void aSymlinkInsideTheWorkspaceIsNotFollowedEither() throws IOException {
    Files.writeString(fixture.workspace().resolve("target.txt"), "t");
    Files.createSymbolicLink(fixture.workspace().resolve("alias"), Path.of("target.txt"));

    assertRefused(
        file(Map.of("operation", "write", "path", "alias", "content", "x")),
        "The path 'alias' is a symbolic link; the file tool does not follow links.");
    assertThat(fixture.workspace().resolve("target.txt")).hasContent("t");
    assertThat(file(Map.of("operation", "list", "path", ".")).text())
        .contains("alias  (symbolic link, not followed)");
  }

  @Test
  void gitHooksAndConfigAreProtected() throws IOException {
    Files.createDirectories(fixture.workspace().resolve("repo/.git/hooks"));

    assertRefused(
        file(Map.of("operation", "write", "path", "repo/.git/hooks/pre-commit", "content", "evil")),
        "The path 'repo/.git/hooks/pre-commit' is protected: a repository's .git/hooks and"
            + " .git/config run code on the next git command; refused.");
    assertRefused(
        file(Map.of("operation", "append", "path", "repo/.git/config", "content", "evil")),
        "The path 'repo/.git/config' is protected: a repository's .git/hooks and .git/config run"
            + " code on the next git command; refused.");
  }

  @Test
  void theSandboxCannotWriteTheWorkspacesGitHooks() throws IOException {
    // Made in the sandbox, so that its user owns them: only the read-only binds stop the writes.
    fixture.shell("mkdir -p .git/hooks && echo '[core]' > .git/config");

    JsonNode json =
        fixture.shell("echo evil > .git/hooks/pre-commit; echo evil >> .git/config; echo done");

    assertThat(json.get("stderr").asString())
        .isEqualTo(
            "/bin/sh: 1: cannot create .git/hooks/pre-commit: Read-only file system\n"
                + "/bin/sh: 1: cannot create .git/config: Read-only file system\n");
    assertThat(fixture.workspace().resolve(".git/config")).hasContent("[core]");
  }

  @Test
  void aFifoAndADirectoryAreNotRead() throws Exception {
    fixture.shell("mkfifo pipe");
    assertThat(fixture.workspace().resolve("pipe")).exists();

    assertRefused(
        file(Map.of("operation", "read", "path", "pipe")),
        "'pipe' is not a regular file; only regular files are read.");
    Files.createDirectories(fixture.workspace().resolve("dir"));
    assertRefused(
        file(Map.of("operation", "read", "path", "dir")),
        "'dir' is a directory (use operation list); only regular files are read.");
  }

  @Test
  void aWorkingDirectoryOutsideTheWorkspaceIsRefused() throws IOException {
    Files.createSymbolicLink(fixture.workspace().resolve("up"), fixture.outside);

    ToolResult viaDots = fixture.call("shell", Map.of("command", "pwd", "working_dir", "../.."));
    ToolResult viaLink = fixture.call("shell", Map.of("command", "pwd", "working_dir", "up"));

    assertThat(viaDots.isError()).isTrue();
    assertThat(viaDots.text()).startsWith("The path '../..' is outside the workspace");
    assertRefused(
        viaLink, "The path 'up' leads out of the workspace through a symbolic link; refused.");
    assertThat(
            Files.isSymbolicLink(fixture.workspace().resolve("up"))
                && Files.exists(fixture.workspace().resolve("up"), LinkOption.NOFOLLOW_LINKS))
        .isTrue();
  }
}
