package dev.toolhost.exec;

import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ToolException;
import dev.toolhost.core.ToolResult;
import java.io.IOException;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Python scripts are {@code execute_python_script}'s runner: the script, and its input when given,
 * in a directory of their own shown read-only at {@code /run/toolhost} inside the sandbox; {@code
 * python3 -I} (isolated: no {@code PYTHON*} variables, no user site, no script directory on the
 * path) in the session's workspace; packages first, when asked, from the configured wheel directory
 * only ({@code pip install --no-index --find-links}, into the sandbox's private {@code /tmp}); then
 * the files the script wrote to {@code out/} during the run.
 */
final class PythonScripts {

  /** Input larger than this reaches the script only as a file. */
  static final int INPUT_IN_VARIABLE = 64 * 1024;

  /** The files of {@code out/} a result names at most. */
  static final int MAX_OUT_FILES = 50;

  /** A file of {@code out/} comes back inline when it is text of at most this many bytes. */
  static final int INLINE_FILE_BYTES = 16 * 1024;

  /** Bytes of {@code out/} files that come back inline, all together. */
  static final int INLINE_TOTAL_BYTES = 64 * 1024;

  /** A plain requirement: a PEP 508 name, optionally pinned to one version. */
  static final Pattern REQUIREMENT =
      Pattern.compile(
          "[A-Za-z0-9](?:[A-Za-z0-9._-]{0,98}[A-Za-z0-9])?(?:==[A-Za-z0-9.+!_-]{1,40})?");

  /** The first line of stderr when pip failed: the launcher writes it, the runner reads it. */
  private static final String PIP_FAILED = "toolhost: pip install failed";

  // Installs from the wheel directory into the sandbox's /tmp, then runs the script as __main__.
  private static final String LAUNCHER =
      """
      import runpy, subprocess, sys
      script, wheels, target, packages = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
      done = subprocess.run([sys.executable, "-I", "-m", "pip", "install", "--no-index",
          "--find-links", wheels, "--target", target, "--no-cache-dir",
          "--disable-pip-version-check", "--no-input", "--quiet", "--", *packages],
          stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
      if done.returncode != 0:
          sys.stderr.write("%s\\n" + done.stdout.decode("utf-8", "replace"))
          sys.exit(1)
      sys.path.insert(0, target)
      sys.argv = [script]
      runpy.run_path(script, run_name="__main__")
      """
          .formatted(PIP_FAILED);

  private final Sandbox sandbox;

  PythonScripts(Sandbox sandbox) {
    this.sandbox = sandbox;
  }

  ToolResult run(
      Path workspace,
      String script,
      Optional<String> input,
      List<String> packages,
      Duration timeout)
      throws IOException, InterruptedException {
    for (String name : packages) {
      if (!REQUIREMENT.matcher(name).matches()) {
        throw ToolException.invalidArguments(
            "Refused pip package '"
                + name
                + "': only plain requirement names are accepted (such as numpy or numpy==2.1.0),"
                + " no options, URLs, paths, markers or shell syntax.");
      }
    }
    if (packages.size() > 20) {
      throw ToolException.invalidArguments("At most 20 pip packages may be named.");
    }
    Optional<Path> wheels = sandbox.config().wheelDirectory();
    if (!packages.isEmpty() && wheels.isEmpty()) {
      throw new ToolException(
          ErrorCode.INVALID_ARGUMENTS,
          "pip_packages cannot be installed: this host installs packages only from a local wheel"
              + " directory (exec.wheel_dir), and none is configured. Use the standard library.");
    }
    Path scratch = Files.createTempDirectory("toolhost-python");
    try {
      Files.setPosixFilePermissions(scratch, PosixFilePermissions.fromString("rwxr-xr-x"));
      // Inside the sandbox the directory is shown at /run/toolhost; uncontained it is itself.
      boolean contained = sandbox.contained();
      String inside = contained ? "/run/toolhost" : scratch.toString();
      Path scriptFile = scratch.resolve("script.py");
      Files.writeString(scriptFile, script, StandardCharsets.UTF_8);
      Map<String, String> environment = new LinkedHashMap<>();
      if (input.isPresent()) {
        Files.writeString(scratch.resolve("input"), input.get(), StandardCharsets.UTF_8);
        environment.put("ROCKBOT_INPUT_FILE", inside + "/input");
        byte[] bytes = input.get().getBytes(StandardCharsets.UTF_8);
        if (bytes.length <= INPUT_IN_VARIABLE && input.get().indexOf('\0') < 0) {
          environment.put("ROCKBOT_INPUT", input.get());
        }
      }
      for (String name : List.of("script.py", "input")) {
        Path file = scratch.resolve(name);
        if (Files.exists(file)) {
          Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--"));
        }
      }
      Map<Path, String> binds = new LinkedHashMap<>();
      binds.put(scratch, inside);
      List<String> command = new ArrayList<>(List.of("python3", "-I"));
      if (packages.isEmpty()) {
        command.add(inside + "/script.py");
      } else {
        String wheelsInside = contained ? "/run/toolhost-wheels" : wheels.get().toString();
        binds.put(wheels.get(), wheelsInside);
        String target = contained ? "/tmp/python-packages" : scratch + "/packages";
        command.addAll(List.of("-c", LAUNCHER, inside + "/script.py", wheelsInside, target));
        command.addAll(packages);
      }
      Map<Path, List<Object>> before = outState(workspace);
      Execution execution =
          sandbox.run(
              new Sandbox.Request(
                  command, workspace, workspace, environment, timeout, binds, false));
      if (!packages.isEmpty() && execution.stderr().startsWith(PIP_FAILED)) {
        return pipFailure(execution, packages);
      }
      return result(execution, outFiles(workspace, before), timeout);
    } finally {
      try (Stream<Path> walk = Files.walk(scratch)) {
        walk.sorted(Comparator.reverseOrder()).forEach(PythonScripts::deleteQuietly);
      }
    }
  }

  private static ToolResult pipFailure(Execution execution, List<String> packages) {
    String output = execution.stderr().substring(PIP_FAILED.length()).strip();
    List<String> missing = new ArrayList<>();
    var matcher = Pattern.compile("No matching distribution found for (\\S+)").matcher(output);
    while (matcher.find()) {
      missing.add(matcher.group(1));
    }
    String message =
        missing.isEmpty()
            ? "pip could not install " + String.join(", ", packages) + ":\n" + output
            : "Not available in this host's wheel directory: "
                + String.join(", ", missing)
                + ". Only packages whose wheels the operator put there can be installed (there is"
                + " no network); use the standard library or another package.";
    return ToolResult.failure(ErrorCode.EXECUTION_FAILED, message);
  }

  private static ToolResult result(Execution execution, ArrayNode files, Duration timeout) {
    ObjectNode structured = execution.toJson();
    structured.set("files", files);
    StringBuilder text = new StringBuilder();
    if (execution.timedOut()) {
      text.append("Script timed out after ")
          .append(timeout.toSeconds() > 0 ? timeout.toSeconds() + " s" : timeout.toMillis() + " ms")
          .append("; the process tree was killed.")
          .append(execution.sandboxed() ? "" : " (NOT sandboxed)");
      appendStream(text, "stdout", execution.stdout());
      appendStream(text, "stderr", execution.stderr());
    } else if (execution.exitCode() != 0) {
      String error = lastLine(execution.stderr());
      if (!error.isEmpty()) {
        structured.put("error", error);
      }
      text.append("The script failed with exit code ")
          .append(execution.exitCode())
          .append(execution.sandboxed() ? "." : ". (NOT sandboxed)");
      appendStream(text, "stderr", execution.stderr());
      appendStream(text, "stdout", execution.stdout());
    } else {
      text.append(execution.stdout());
      if (!execution.sandboxed()) {
        text.append(execution.stdout().endsWith("\n") || execution.stdout().isEmpty() ? "" : "\n");
        text.append("[ran NOT sandboxed]");
      }
    }
    if (!files.isEmpty()) {
      text.append(text.isEmpty() || text.charAt(text.length() - 1) == '\n' ? "" : "\n");
      text.append("out/ files:");
      for (var file : files) {
        text.append("\n- ")
            .append(file.get("path").asString())
            .append(" (")
            .append(file.get("size").asLong())
            .append(" bytes)");
        if (file.has("content")) {
          text.append(":\n").append(file.get("content").asString());
        }
      }
    }
    return ToolResult.success(text.toString(), structured);
  }

  private static void appendStream(StringBuilder text, String name, String stream) {
    if (!stream.isEmpty()) {
      if (!text.isEmpty() && text.charAt(text.length() - 1) != '\n') {
        text.append('\n');
      }
      text.append(name).append(":\n").append(stream);
    }
  }

  private static String lastLine(String stderr) {
    List<String> lines = stderr.strip().lines().toList();
    return lines.isEmpty() ? "" : lines.getLast().strip();
  }

  /**
   * The regular files of the workspace's out/ (at most eight levels deep, at most 10,000), each
   * with what says it changed: its file key, size and modification time. Walked beneath a
   * descriptor of the workspace ({@link Beneath}), so a process of the session that swaps a
   * directory for a link meanwhile cannot show the host's files here.
   */
  private static Map<Path, List<Object>> outState(Path workspace) throws IOException {
    Map<Path, List<Object>> state = new LinkedHashMap<>();
    try (Beneath out = Beneath.open(workspace, List.of("out"), "out")) {
      collect(out, Path.of("out"), 1, state);
    } catch (java.nio.file.NoSuchFileException | ToolException e) {
      // No out/, or not a directory: nothing came back.
    }
    return state;
  }

  private static void collect(
      Beneath directory, Path relative, int depth, Map<Path, List<Object>> state)
      throws IOException {
    for (String name : directory.names(MAX_WALKED).names()) {
      if (state.size() >= MAX_WALKED) {
        return;
      }
      BasicFileAttributes attributes;
      try {
        attributes = directory.attributes(name);
      } catch (java.nio.file.NoSuchFileException e) {
        continue;
      }
      if (attributes.isRegularFile()) {
        state.put(
            relative.resolve(name),
            java.util.Arrays.asList(
                attributes.fileKey(), attributes.size(), attributes.lastModifiedTime()));
      } else if (attributes.isDirectory() && depth < 8) {
        try (Beneath child = directory.descend(name, name)) {
          collect(child, relative.resolve(name), depth + 1, state);
        } catch (java.nio.file.NoSuchFileException | ToolException e) {
          // Gone, or swapped for a link since it was listed: left out.
        }
      }
    }
  }

  /** The most files of out/ looked at. */
  private static final int MAX_WALKED = 10_000;

  /** The start of a file of out/, read beneath the workspace's descriptor, never through a link. */
  private static byte[] head(Path workspace, Path relative, int max) throws IOException {
    List<String> names = new ArrayList<>();
    relative.forEach(name -> names.add(name.toString()));
    String last = names.removeLast();
    try (Beneath parent = Beneath.open(workspace, names, relative.toString());
        var channel =
            parent.channel(
                last,
                java.util.Set.of(java.nio.file.StandardOpenOption.READ),
                relative.toString());
        var in = java.nio.channels.Channels.newInputStream(channel)) {
      return in.readNBytes(max);
    }
  }

  /** The regular files of the workspace's out/ that the run made or changed, within the caps. */
  private static ArrayNode outFiles(Path workspace, Map<Path, List<Object>> before)
      throws IOException {
    ArrayNode files = tools.jackson.databind.json.JsonMapper.shared().createArrayNode();
    List<Path> changed = new ArrayList<>();
    Map<Path, List<Object>> after = outState(workspace);
    after.forEach(
        (file, state) -> {
          if (!state.equals(before.get(file))) {
            changed.add(file);
          }
        });
    changed.sort(null);
    int inline = 0;
    for (Path file : changed.subList(0, Math.min(MAX_OUT_FILES, changed.size()))) {
      ObjectNode item = files.addObject();
      // The size the walk saw, without following a link the script may have put there since.
      long size = (Long) after.get(file).get(1);
      item.put("path", file.toString());
      item.put("size", size);
      if (size <= INLINE_FILE_BYTES && inline + size <= INLINE_TOTAL_BYTES) {
        try {
          Workspaces.requireSingleLink(workspace.resolve(file), file.toString());
          byte[] bytes = head(workspace, file, INLINE_FILE_BYTES + 1);
          String text =
              StandardCharsets.UTF_8
                  .newDecoder()
                  .onMalformedInput(CodingErrorAction.REPORT)
                  .decode(java.nio.ByteBuffer.wrap(bytes))
                  .toString();
          if (text.indexOf('\0') < 0) {
            item.put("content", text);
            inline += bytes.length;
          }
        } catch (CharacterCodingException | java.nio.file.NoSuchFileException | ToolException e) {
          // Binary, gone, or linked from elsewhere: named and sized, not shown.
        }
      }
    }
    if (changed.size() > MAX_OUT_FILES) {
      files
          .addObject()
          .put("path", "(" + (changed.size() - MAX_OUT_FILES) + " more files left out)")
          .put("size", 0);
    }
    return files;
  }

  private static void deleteQuietly(Path path) {
    try {
      Files.deleteIfExists(path);
    } catch (IOException e) {
      // A temporary file left behind is the least of it.
    }
  }
}
