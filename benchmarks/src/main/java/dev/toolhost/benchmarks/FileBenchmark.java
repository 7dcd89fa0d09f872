package dev.toolhost.benchmarks;

import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolResult;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
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

  private ExecBench bench;
  private Path file;
  private String content;
  private String readArguments;
  private String writeArguments;
  private final ToolDispatcher dispatcher = ToolDispatcher.create();

  @Setup(Level.Trial)
  public void setUp() throws IOException {
    bench = ExecBench.start("file-benchmark");
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
    file = bench.workspace().resolve("dir/file.txt").toRealPath();
    if (fileRead().isError()) {
      throw new IllegalStateException("file read failed");
    }
  }

  @TearDown(Level.Trial)
  public void tearDown() throws IOException, InterruptedException {
    bench.close();
  }

  private ToolResult call(String arguments) {
    return dispatcher.dispatch(
        bench.tools(),
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
