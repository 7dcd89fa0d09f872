package dev.toolhost.exec;

import dev.toolhost.core.MethodTools;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * An exec fixture is the exec tools on the real sandbox, called through the whole dispatch path
 * (lookup, argument validation, the deadline, the tool's own timeout), in a directory of its own
 * under /tmp that the sandbox user can reach: the workspace root, and an "outside" directory shown
 * read-only to the sandbox that holds a file only root may read and a file anyone may read.
 *
 * <p>A test class shares one as {@code @RegisterExtension static final ExecFixture fixture =
 * ExecFixture.create()}: made when the class is first used, closed after its last test.
 */
final class ExecFixture implements AutoCloseable, AfterAllCallback {

  /** What every test's host knows as a secret, and holds in its environment. */
  static final String HOST_SECRET = "hs-7f3a9c2e-host-secret-value";

  final Path base;
  final Path root;
  final Path outside;
  final Sandbox sandbox;
  final Workspaces workspaces;
  private final ToolSet tools;
  private final ToolDispatcher dispatcher = ToolDispatcher.create();

  ExecFixture() throws IOException {
    this(builder -> builder);
  }

  ExecFixture(UnaryOperator<ExecConfig.Builder> configure) throws IOException {
    base = reachableDirectory("exec-test");
    root = base.resolve("workspaces");
    outside = Files.createDirectory(base.resolve("outside"));
    Files.setPosixFilePermissions(outside, PosixFilePermissions.fromString("rwxr-xr-x"));
    Path secret = Files.writeString(outside.resolve("root-only.txt"), "root eyes only\n");
    Files.setPosixFilePermissions(secret, PosixFilePermissions.fromString("rw-------"));
    Path open = Files.writeString(outside.resolve("public.txt"), "anyone may read\n");
    Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rw-r--r--"));
    ExecConfig config =
        configure
            .apply(
                ExecConfig.builder(root)
                    .readablePaths(List.of(outside))
                    .passEnv(List.of("TZ", "API_TOKEN"))
                    .promptSilence(Duration.ofSeconds(1)))
            .build();
    sandbox =
        new Sandbox(
            config, Map.of("TZ", "Europe/Paris", "API_TOKEN", HOST_SECRET), List.of(HOST_SECRET));
    workspaces = new Workspaces(config, sandbox.childUid());
    workspaces.prepare();
    sandbox.closing(workspaces);
    ToolRegistry registry = new ToolRegistry();
    registry.registerAll(
        MethodTools.of(new ExecTools(sandbox, workspaces), ExecTools.SOURCE).stream()
            .map(tool -> tool.withTimeout(Duration.ofSeconds(120)))
            .toList());
    tools = ToolSet.of(registry, ToolProfiles.MAIN);
  }

  /** A fixture of the default config, for a class's tests to share. */
  static ExecFixture create() {
    return create(builder -> builder);
  }

  /** A fixture of the default config changed by {@code configure}, for a class's tests to share. */
  static ExecFixture create(UnaryOperator<ExecConfig.Builder> configure) {
    try {
      return new ExecFixture(configure);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public void afterAll(ExtensionContext context) throws IOException {
    close();
  }

  /** The workspace of the session every call of the fixture runs in. */
  Path workspace() {
    return workspaces.session(java.util.Optional.of("s1"));
  }

  /** Calls a tool with the given arguments in session s1, as a model would. */
  ToolResult call(String tool, Map<String, ?> arguments) {
    return call(tool, arguments, Duration.ofSeconds(90));
  }

  /** Calls a tool in session s1 with the given deadline from now. */
  ToolResult call(String tool, Map<String, ?> arguments, Duration deadline) {
    return dispatcher.dispatch(
        tools,
        ToolCall.of(tool, JsonMapper.shared().writeValueAsString(arguments))
            .withSessionId("s1")
            .withTimeout(deadline));
  }

  /** Runs a shell command and returns the structured result. */
  JsonNode shell(String command) {
    return structured(call("shell", Map.of("command", command)));
  }

  /** Runs a shell command with a timeout and returns the structured result. */
  JsonNode shell(String command, int timeoutSeconds) {
    return structured(call("shell", Map.of("command", command, "timeout_seconds", timeoutSeconds)));
  }

  static JsonNode structured(ToolResult result) {
    if (!(result instanceof ToolResult.Success success)) {
      throw new AssertionError("expected a success, got: " + result);
    }
    return success.structured().orElseThrow();
  }

  @Override
  public void close() throws IOException {
    sandbox.close();
    delete(base);
  }

  /** A new directory under /tmp that the sandbox user can reach, its name starting so. */
  static Path reachableDirectory(String prefix) throws IOException {
    Path directory = Files.createTempDirectory(Path.of("/tmp"), prefix);
    Files.setPosixFilePermissions(directory, PosixFilePermissions.fromString("rwxr-xr-x"));
    return directory;
  }

  /** Deletes the directory and all it holds, as far as it can. */
  static void delete(Path directory) throws IOException {
    try (Stream<Path> walk = Files.walk(directory)) {
      walk.sorted(Comparator.reverseOrder())
          .forEach(
              path -> {
                try {
                  Files.deleteIfExists(path);
                } catch (IOException e) {
                  // Left for the system's /tmp cleaning.
                }
              });
    }
  }
}
