package dev.toolhost.benchmarks;

import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import dev.toolhost.exec.ExecConfig;
import dev.toolhost.exec.ExecTools;
import dev.toolhost.exec.Sandbox;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import tools.jackson.databind.json.JsonMapper;

/**
 * The file tool's read and write of one file through the whole dispatch path (lookup, argument
 * validation, the deadline, the session's workspace, the descriptor walk beneath it, and for a
 * write the quota check, a staged file renamed over the old one and its owner set), beside the raw
 * baseline, a bare {@code Files.readString} / {@code Files.writeString} of the same path.
 *
 * <p>A read through the tool returns at most 256 KiB (the tool's cap), so a 1 MiB read is cut
 * there; the file is one line per 64 bytes. Needs bubblewrap (the workspace is the sandbox's).
 * Average time per call, in microseconds.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class FileBenchmark {

  @Param({"4096", "1048576"})
  public int size;

  private Path base;
  private Sandbox sandbox;
  private ToolSet tools;
  private Path file;
  private String content;
  private String readArguments;
  private String writeArguments;
  private final ToolDispatcher dispatcher = ToolDispatcher.create();

  @Setup(Level.Trial)
  public void setUp() throws IOException {
    base = Files.createTempDirectory(Path.of("/tmp"), "file-benchmark");
    Files.setPosixFilePermissions(base, PosixFilePermissions.fromString("rwxr-xr-x"));
    sandbox =
        new Sandbox(ExecConfig.builder(base.resolve("workspaces")).build(), Map.of(), List.of());
    ToolRegistry registry = new ToolRegistry();
    registry.registerAll(ExecTools.create(sandbox));
    tools = ToolSet.of(registry, ToolProfiles.MAIN);
    content = ("x".repeat(63) + "\n").repeat(size / 64);
    writeArguments =
        JsonMapper.shared()
            .writeValueAsString(
                Map.of("operation", "write", "path", "dir/file.txt", "content", content));
    readArguments =
        JsonMapper.shared()
            .writeValueAsString(
                Map.of("operation", "read", "path", "dir/file.txt", "limit", 100_000));
    ToolResult first = fileWrite();
    if (first.isError()) {
      throw new IllegalStateException("file write failed: " + first.text());
    }
    file = base.resolve("workspaces/bench/dir/file.txt").toRealPath();
    if (fileRead().isError()) {
      throw new IllegalStateException("file read failed");
    }
  }

  @TearDown(Level.Trial)
  public void tearDown() throws IOException, InterruptedException {
    sandbox.close();
    new ProcessBuilder("rm", "-rf", base.toString()).start().waitFor();
  }

  private ToolResult call(String arguments) {
    return dispatcher.dispatch(
        tools,
        ToolCall.of("file", arguments).withSessionId("bench").withTimeout(Duration.ofSeconds(30)));
  }

  /** A model's read of the file. */
  @Benchmark
  public ToolResult fileRead() {
    return call(readArguments);
  }

  /** A model's write of the whole file. */
  @Benchmark
  public ToolResult fileWrite() {
    return call(writeArguments);
  }

  /** The raw baseline of a read. */
  @Benchmark
  public String rawReadString() throws IOException {
    return Files.readString(file);
  }

  /** The raw baseline of a write. */
  @Benchmark
  public Path rawWriteString() throws IOException {
    return Files.writeString(file, content);
  }
}
