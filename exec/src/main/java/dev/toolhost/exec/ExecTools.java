package dev.toolhost.exec;

import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.MethodTools;
import dev.toolhost.core.Param;
import dev.toolhost.core.Tool;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolException;
import dev.toolhost.core.ToolResult;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Exec tools are the four tools of the exec extension, source {@code builtin:exec}: {@code shell},
 * {@code exec}, {@code file} and {@code execute_python_script}. Their names and arguments are fixed
 * so that clients can rely on them. Every command runs in the {@link Sandbox}, in the calling
 * session's workspace (its user's, {@link Workspaces}); the file tool works in Java beneath a
 * descriptor of the workspace ({@link WorkspaceFiles}).
 *
 * <p>A command that ran is a success whatever its exit code: the text opens with a summary (exit
 * code, time, whether it ran sandboxed) and the structured content holds the fields of an {@link
 * Execution}. A command that could not run (the sandbox unavailable, a refused argument) is a
 * failure the model can act on.
 */
public final class ExecTools {

  /** The source of the exec tools. */
  public static final String SOURCE = "builtin:exec";

  /** The tools' names. */
  public static final String SHELL = "shell";

  public static final String EXEC = "exec";
  public static final String FILE = "file";
  public static final String PYTHON = "execute_python_script";

  /** Every tool name, for profile rules. */
  public static final List<String> NAMES = List.of(SHELL, EXEC, FILE, PYTHON);

  static final Duration SHELL_TIMEOUT = Duration.ofSeconds(60);
  static final Duration PYTHON_TIMEOUT = Duration.ofSeconds(30);

  // The parameters shell and exec share, described once.
  private static final String TIMEOUT_SECONDS =
      "How long it may run, in seconds (default 60, at most the host's max).";
  private static final String WORKING_DIR =
      "Where it runs, relative to the workspace (default: the workspace).";

  /** What a file operation does. */
  public enum FileOperation {
    read,
    write,
    append,
    list
  }

  private final Sandbox sandbox;
  private final Workspaces workspaces;
  private final WorkspaceFiles files;
  private final PythonScripts python;

  /**
   * The four tools on the sandbox, each with a timeout longer than any a call may ask for (the tool
   * ends its process itself, in time), their workspace root made if missing.
   *
   * @throws IOException when the workspace root cannot be made or the sandbox user cannot reach it
   */
  public static List<ExecutableTool> create(Sandbox sandbox) throws IOException {
    Workspaces workspaces = new Workspaces(sandbox.config(), sandbox.childUid());
    workspaces.prepare();
    sandbox.closing(workspaces);
    Duration timeout = sandbox.config().maxTimeout().plusSeconds(15);
    return MethodTools.of(new ExecTools(sandbox, workspaces), SOURCE).stream()
        .map(tool -> tool.withTimeout(timeout))
        .toList();
  }

  ExecTools(Sandbox sandbox, Workspaces workspaces) {
    this.sandbox = sandbox;
    this.workspaces = workspaces;
    this.files = new WorkspaceFiles(workspaces, sandbox, sandbox.config().limits().fileSizeBytes());
    this.python = new PythonScripts(sandbox);
  }

  @Tool(
      name = SHELL,
      description =
          "Runs a shell command (sh -c) in your workspace, inside a sandbox: the system is"
              + " read-only, the workspace is writable, /tmp is private, stdin is empty and there"
              + " is no network unless the host allows it. Returns the exit code, stdout and"
              + " stderr (long output keeps its head and tail). Default timeout 60 s. A command"
              + " that waits for input is ended: pass flags such as -y instead.")
  public ToolResult shell(
      ToolCall call,
      @Param(description = "The command line, run by sh -c.") String command,
      @Param(name = "timeout_seconds", description = TIMEOUT_SECONDS)
          Optional<Integer> timeoutSeconds,
      @Param(name = "working_dir", description = WORKING_DIR) Optional<String> workingDir)
      throws InterruptedException {
    if (command.indexOf('\0') >= 0) {
      throw ToolException.invalidArguments("The command may not hold a NUL byte.");
    }
    return run(call, List.of("/bin/sh", "-c", command), workingDir, Map.of(), timeoutSeconds, true);
  }

  @Tool(
      name = EXEC,
      description =
          "Runs one program with explicit arguments and no shell, in your workspace inside the"
              + " same sandbox as shell. Use it for compilers, test runners and anything whose"
              + " arguments must not be re-parsed. Variables that change how programs load or run"
              + " (LD_*, PYTHONPATH, NODE_OPTIONS, ...) are refused in any letter case.")
  public ToolResult exec(
      ToolCall call,
      @Param(description = "The program: a name looked up on PATH, or a path.") String program,
      @Param(description = "Its arguments, each passed as is.") Optional<List<String>> args,
      @Param(description = "Environment variables to add.") Optional<Map<String, String>> env,
      @Param(name = "timeout_seconds", description = TIMEOUT_SECONDS)
          Optional<Integer> timeoutSeconds,
      @Param(name = "working_dir", description = WORKING_DIR) Optional<String> workingDir)
      throws InterruptedException {
    List<String> command = new ArrayList<>();
    command.add(program);
    command.addAll(args.orElse(List.of()));
    if (program.isBlank()) {
      throw ToolException.invalidArguments("The program is empty.");
    }
    for (String each : command) {
      if (each == null || each.indexOf('\0') >= 0) {
        throw ToolException.invalidArguments("A program or argument may not hold a NUL byte.");
      }
    }
    return run(call, command, workingDir, env.orElse(Map.of()), timeoutSeconds, false);
  }

  /**
   * Runs the command in the sandbox, in the caller's workspace or the directory in it that the call
   * names; a shell's run watches for a prompt.
   */
  private ToolResult run(
      ToolCall call,
      List<String> command,
      Optional<String> workingDir,
      Map<String, String> env,
      Optional<Integer> timeoutSeconds,
      boolean watchPrompt)
      throws InterruptedException {
    Path workspace = workspaces.session(call.user(), call.sessionId());
    Execution execution =
        sandbox.run(
            new Sandbox.Request(
                command,
                workspace,
                workingDir.map(dir -> workspaces.directory(workspace, dir)).orElse(workspace),
                env,
                timeout(call, timeoutSeconds, SHELL_TIMEOUT),
                Map.of(),
                watchPrompt));
    return ToolResult.success(execution.text(), execution.toJson());
  }

  @Tool(
      name = FILE,
      description =
          "Reads, writes, appends to or lists files in your workspace. Paths are relative to the"
              + " workspace; links that lead out, files with other hard links and protected paths"
              + " (.git/hooks, .git/config, the host's own files) are refused. read returns lines"
              + " from offset (1-based, default 1), at most limit (default 2000) and 256 KiB;"
              + " write and append create parent directories; list shows at most 500 entries.")
  public ToolResult file(
      ToolCall call,
      @Param(description = "read, write, append or list.") FileOperation operation,
      @Param(description = "The file or directory, relative to the workspace ('.' for it).")
          String path,
      @Param(description = "What to write or append (write and append only).")
          Optional<String> content,
      @Param(description = "The first line to read, 1-based (read only; default 1).")
          Optional<Integer> offset,
      @Param(description = "How many lines to read (read only; default 2000).")
          Optional<Integer> limit) {
    Path workspace = workspaces.session(call.user(), call.sessionId());
    try {
      return switch (operation) {
        case read -> {
          int first = offset.orElse(1);
          int lines = limit.orElse(WorkspaceFiles.DEFAULT_LINES);
          if (first < 1 || lines < 1) {
            throw ToolException.invalidArguments("offset and limit must be 1 or more.");
          }
          yield files.read(workspace, path, first, lines);
        }
        case write, append -> {
          if (content.isEmpty()) {
            throw ToolException.invalidArguments(
                "Operation " + operation + " needs content: the text to " + operation + ".");
          }
          yield files.write(workspace, path, content.get(), operation == FileOperation.append);
        }
        case list -> files.list(workspace, path);
      };
    } catch (IOException e) {
      return ToolResult.failure(
          ErrorCode.EXECUTION_FAILED,
          "The file operation failed: " + e.getClass().getSimpleName() + ": " + e.getMessage());
    }
  }

  @Tool(
      name = PYTHON,
      description =
          "Runs a Python 3 script (python3 -I) in a sandbox with no network, in your workspace."
              + " Print the result to stdout (JSON recommended) and exit 0; stdout is the result,"
              + " and on failure stderr and the exit code come with it. input_data arrives in the"
              + " ROCKBOT_INPUT environment variable (and always in the file ROCKBOT_INPUT_FILE"
              + " names; only there when larger than 64 KiB). Files written to out/ come back."
              + " pip_packages install only from the host's wheel directory. Default timeout 30 s.")
  public ToolResult executePythonScript(
      ToolCall call,
      @Param(description = "The Python source code.") String script,
      @Param(name = "input_data", description = "Text passed to the script.")
          Optional<String> inputData,
      @Param(
              name = "timeout_seconds",
              description = "How long it may run, in seconds (default 30, at most the host's max).")
          Optional<Integer> timeoutSeconds,
      @Param(
              name = "pip_packages",
              description =
                  "Plain package names (optionally name==version) to install first, from the"
                      + " host's wheel directory only.")
          Optional<List<String>> pipPackages)
      throws InterruptedException {
    Path workspace = workspaces.session(call.user(), call.sessionId());
    try {
      return python.run(
          workspace,
          script,
          inputData,
          pipPackages.orElse(List.of()),
          timeout(call, timeoutSeconds, PYTHON_TIMEOUT));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * The timeout of a call: what it asks for (1 to the configured maximum) or the tool's default,
   * and never past the call's deadline (less a moment to answer in).
   */
  private Duration timeout(ToolCall call, Optional<Integer> asked, Duration fallback) {
    Duration max = sandbox.config().maxTimeout();
    Duration wanted = asked.map(Duration::ofSeconds).orElse(fallback);
    if (asked.isPresent() && (asked.get() < 1 || wanted.compareTo(max) > 0)) {
      throw ToolException.invalidArguments(
          "timeout_seconds is " + asked.get() + "; it must be 1 to " + max.toSeconds() + ".");
    }
    if (wanted.compareTo(max) > 0) {
      wanted = max;
    }
    Duration left = Duration.between(Instant.now(), call.deadline()).minusMillis(250);
    if (left.compareTo(wanted) < 0) {
      wanted = left.isNegative() ? Duration.ofMillis(1) : left;
    }
    return wanted;
  }
}
