package dev.toolhost.exec;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ToolResult;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.JsonNode;

/** execute_python_script on the real sandbox and Debian's python3, each case's exact result. */
@Timeout(60)
class PythonScriptTest {

  private static ExecFixture fixture;
  private static Path wheels;

  @BeforeAll
  static void start() throws Exception {
    wheels = Files.createTempDirectory(Path.of("/tmp"), "exec-wheels");
    Files.setPosixFilePermissions(wheels, PosixFilePermissions.fromString("rwxr-xr-x"));
    writeWheel(wheels, "tinypkg", "1.0", "VALUE = 42\n");
    fixture = new ExecFixture(builder -> builder.wheelDirectory(wheels));
  }

  @AfterAll
  static void stop() throws Exception {
    fixture.close();
    try (var files = Files.list(wheels)) {
      for (Path file : files.toList()) {
        Files.delete(file);
      }
    }
    Files.delete(wheels);
  }

  private static ToolResult run(Map<String, ?> arguments) {
    return fixture.call("execute_python_script", arguments);
  }

  @Test
  void jsonOnStdoutIsTheResult() {
    ToolResult result =
        run(Map.of("script", "import json\nprint(json.dumps({'answer': 42, 'ok': True}))"));

    assertThat(result.isError()).isFalse();
    assertThat(result.text()).isEqualTo("{\"answer\": 42, \"ok\": true}\n");
    JsonNode json = ExecFixture.structured(result);
    assertThat(json.get("exit_code").asInt()).isZero();
    assertThat(json.get("sandboxed").asBoolean()).isTrue();
  }

  @Test
  void anUncaughtExceptionGivesItsExitCodeAndTraceback() {
    ToolResult result = run(Map.of("script", "print('before')\n1 / 0\n"));

    JsonNode json = ExecFixture.structured(result);
    assertThat(json.get("exit_code").asInt()).isEqualTo(1);
    assertThat(json.get("error").asString()).isEqualTo("ZeroDivisionError: division by zero");
    assertThat(result.text())
        .startsWith(
            "The script failed with exit code 1.\nstderr:\nTraceback (most recent call last):\n")
        .contains("  File \"/run/toolhost/script.py\", line 2, in <module>\n")
        .endsWith("ZeroDivisionError: division by zero\nstdout:\nbefore\n");
  }

  @Test
  void sysExitThreeIsExitCodeThree() {
    ToolResult result = run(Map.of("script", "import sys\nprint('partial')\nsys.exit(3)"));

    JsonNode json = ExecFixture.structured(result);
    assertThat(json.get("exit_code").asInt()).isEqualTo(3);
    assertThat(json.has("error")).isFalse();
    assertThat(result.text()).isEqualTo("The script failed with exit code 3.\nstdout:\npartial\n");
  }

  @Test
  void aBusyLoopPastItsTimeoutIsKilled() {
    ToolResult result =
        run(
            Map.of(
                "script",
                "import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nwhile True: pass",
                "timeout_seconds",
                2));

    JsonNode json = ExecFixture.structured(result);
    assertThat(json.get("timed_out").asBoolean()).isTrue();
    assertThat(json.get("elapsed_ms").asLong()).isBetween(2000L, 6000L);
    assertThat(result.text()).isEqualTo("Script timed out after 2 s; the process tree was killed.");
  }

  @Test
  void aTenMegabytePrintIsCutWithTheCutSaid() {
    ToolResult result = run(Map.of("script", "print('x' * 10_000_000)"));

    JsonNode json = ExecFixture.structured(result);
    assertThat(json.get("exit_code").asInt()).isZero();
    assertThat(json.get("truncated").asBoolean()).isTrue();
    assertThat(json.get("stdout_bytes").asLong()).isEqualTo(10_000_001L);
    String expected =
        "x".repeat(32 * 1024)
            + "\n[output truncated: "
            + (10_000_001 - 64 * 1024)
            + " of 10000001 bytes]\n"
            + "x".repeat(32 * 1024 - 1)
            + "\n";
    assertThat(result.text()).isEqualTo(expected);
  }

  @Test
  void invalidUtf8IsReplaced() {
    ToolResult result =
        run(
            Map.of(
                "script",
                "import sys\nsys.stdout.buffer.write(b'ok \\xff\\xfe caf\\xc3\\xa9\\n')"));

    assertThat(result.text()).isEqualTo("ok \uFFFD\uFFFD café\n");
  }

  @Test
  void inputDataArrivesInTheVariableAndItsFile() {
    ToolResult result =
        run(
            Map.of(
                "script",
                "import os\nprint(os.environ['ROCKBOT_INPUT'])\nprint(open(os.environ['ROCKBOT_INPUT_FILE']).read())",
                "input_data",
                "{\"n\": 7}"));

    assertThat(result.text()).isEqualTo("{\"n\": 7}\n{\"n\": 7}\n");
  }

  @Test
  void largeInputDataArrivesOnlyInItsFile() {
    String big = "y".repeat(200_000);
    ToolResult result =
        run(
            Map.of(
                "script",
                "import os\nprint('ROCKBOT_INPUT' in os.environ, len(open(os.environ['ROCKBOT_INPUT_FILE']).read()))",
                "input_data",
                big));

    assertThat(result.text()).isEqualTo("False 200000\n");
  }

  @Test
  void inputGetsEndOfFile() {
    ToolResult result =
        run(Map.of("script", "try:\n    input()\nexcept EOFError:\n    print('eof')"));

    assertThat(result.text()).isEqualTo("eof\n");
  }

  @Test
  void theEnvironmentIsCleanAndIsolated() {
    ToolResult result =
        run(
            Map.of(
                "script", "import os, sys\nprint(sorted(os.environ))\nprint(sys.flags.isolated)"));

    assertThat(result.text())
        .isEqualTo("['HOME', 'LANG', 'LC_ALL', 'PATH', 'PWD', 'TMPDIR', 'TZ']\n1\n");
  }

  @Test
  void filesWrittenToOutComeBack() {
    ToolResult result =
        run(
            Map.of(
                "script",
                "import os\nos.makedirs('out', exist_ok=True)\n"
                    + "open('out/report.txt', 'w').write('total: 3\\n')\n"
                    + "open('out/blob.bin', 'wb').write(bytes([0xff, 0, 1]))\nprint('done')"));

    assertThat(result.text())
        .isEqualTo(
            "done\nout/ files:\n- out/blob.bin (3 bytes)\n- out/report.txt (9 bytes):\ntotal: 3\n");
    JsonNode files = ExecFixture.structured(result).get("files");
    assertThat(files).hasSize(2);
    assertThat(files.get(1).get("content").asString()).isEqualTo("total: 3\n");
  }

  @Test
  void unsafePipPackagesAreRefused() {
    for (String name :
        List.of(
            "x; rm -rf /",
            "--index-url=http://evil.example/simple",
            "../x",
            "git+https://x/y",
            "a b")) {
      ToolResult result =
          run(Map.of("script", "print(1)", "pip_packages", List.of("tinypkg", name)));

      assertThat(result).as(name).isInstanceOf(ToolResult.Failure.class);
      assertThat(((ToolResult.Failure) result).error().code())
          .isEqualTo(ErrorCode.INVALID_ARGUMENTS);
      assertThat(result.text())
          .isEqualTo(
              "Refused pip package '"
                  + name
                  + "': only plain requirement names are accepted (such as numpy or"
                  + " numpy==2.1.0), no options, URLs, paths, markers or shell syntax.");
    }
  }

  @Test
  void aPackageFromTheWheelDirectoryIsInstalledFirst() {
    ToolResult result =
        run(
            Map.of(
                "script",
                "import tinypkg\nprint(tinypkg.VALUE)",
                "pip_packages",
                List.of("tinypkg")));

    assertThat(result.text()).isEqualTo("42\n");
  }

  @Test
  void aPackageNotInTheWheelDirectoryIsSaidToBeUnavailable() {
    ToolResult result =
        run(Map.of("script", "print(1)", "pip_packages", List.of("tinypkg", "numpy")));

    assertThat(((ToolResult.Failure) result).error().code()).isEqualTo(ErrorCode.EXECUTION_FAILED);
    assertThat(result.text())
        .isEqualTo(
            "Not available in this host's wheel directory: numpy. Only packages whose wheels the"
                + " operator put there can be installed (there is no network); use the standard"
                + " library or another package.");
  }

  /** A pure-Python wheel, made by hand: a zip of the package, its metadata and its record. */
  static void writeWheel(Path directory, String name, String version, String init)
      throws IOException {
    String info = name + "-" + version + ".dist-info/";
    Map<String, String> files = new LinkedHashMap<>();
    files.put(name + "/__init__.py", init);
    files.put(
        info + "METADATA", "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version + "\n");
    files.put(
        info + "WHEEL",
        "Wheel-Version: 1.0\nGenerator: toolhost-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n");
    StringBuilder record = new StringBuilder();
    for (var file : files.entrySet()) {
      byte[] bytes = file.getValue().getBytes(StandardCharsets.UTF_8);
      String hash;
      try {
        hash =
            Base64.getUrlEncoder()
                .withoutPadding()
                .encodeToString(MessageDigest.getInstance("SHA-256").digest(bytes));
      } catch (java.security.NoSuchAlgorithmException e) {
        throw new IllegalStateException(e);
      }
      record
          .append(file.getKey())
          .append(",sha256=")
          .append(hash)
          .append(',')
          .append(bytes.length)
          .append('\n');
    }
    record.append(info).append("RECORD,,\n");
    files.put(info + "RECORD", record.toString());
    Path wheel = directory.resolve(name + "-" + version + "-py3-none-any.whl");
    try (OutputStream out = Files.newOutputStream(wheel);
        ZipOutputStream zip = new ZipOutputStream(out)) {
      for (var file : files.entrySet()) {
        zip.putNextEntry(new ZipEntry(file.getKey()));
        zip.write(file.getValue().getBytes(StandardCharsets.UTF_8));
        zip.closeEntry();
      }
    }
    Files.setPosixFilePermissions(wheel, PosixFilePermissions.fromString("rw-r--r--"));
  }
}
