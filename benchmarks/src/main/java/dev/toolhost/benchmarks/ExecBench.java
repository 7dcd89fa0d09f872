package dev.toolhost.benchmarks;

import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolSet;
import dev.toolhost.exec.ExecConfig;
import dev.toolhost.exec.ExecTools;
import dev.toolhost.exec.Sandbox;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;

/**
 * An exec bench is the sandbox the exec benchmarks call through: its workspaces under a fresh
 * directory in {@code /tmp}, and the exec tools over it in the main profile. Closing it closes the
 * sandbox and deletes the directory.
 *
 * @param base the directory that holds the workspaces
 * @param sandbox the sandbox
 * @param tools the exec tools
 */
record ExecBench(Path base, Sandbox sandbox, ToolSet tools) {

  /** A sandbox in a new directory whose name starts with the prefix, and its tools. */
  static ExecBench start(String prefix) throws IOException {
    Path base = Files.createTempDirectory(Path.of("/tmp"), prefix);
    Files.setPosixFilePermissions(base, PosixFilePermissions.fromString("rwxr-xr-x"));
    Sandbox sandbox =
        new Sandbox(ExecConfig.builder(base.resolve("workspaces")).build(), Map.of(), List.of());
    ToolRegistry registry = new ToolRegistry();
    registry.registerAll(ExecTools.create(sandbox));
    return new ExecBench(base, sandbox, ToolSet.of(registry, ToolProfiles.MAIN));
  }

  /** The workspace of the session {@code bench}, once a call has made it. */
  Path workspace() throws IOException {
    return base.resolve("workspaces/bench").toRealPath();
  }

  /** Closes the sandbox and deletes the directory. */
  void close() throws IOException, InterruptedException {
    sandbox.close();
    new ProcessBuilder("rm", "-rf", base.toString()).start().waitFor();
  }
}
