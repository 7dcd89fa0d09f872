package dev.toolhost.benchmarks;

import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolResult;
import dev.toolhost.exec.Execution;
import dev.toolhost.exec.Sandbox;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * {@code shell("true")} through the whole dispatch path (lookup, validation, the deadline, the
 * tool, the session's workspace, the sandbox: setpriv, prlimit, bwrap and its namespaces, output
 * capture), beside its raw baseline, a bare {@code new ProcessBuilder("true").start().waitFor()};
 * and the sandbox's own start cost, {@code true} run by {@link Sandbox#run} with no dispatch path.
 *
 * <p>Needs bubblewrap on the machine. Average time per call, in milliseconds.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class ShellBenchmark {

  private ExecBench bench;
  private Path workspace;
  private final ToolDispatcher dispatcher = ToolDispatcher.create();

  @Setup(Level.Trial)
  public void setUp() throws IOException {
    bench = ExecBench.start("shell-benchmark");
    if (bench.sandbox().unavailable().isPresent()) {
      throw new IllegalStateException(bench.sandbox().unavailable().get());
    }
    ToolResult first = shellTrue();
    if (first.isError() || !first.text().startsWith("[exit code 0 ")) {
      throw new IllegalStateException("shell(\"true\") failed: " + first.text());
    }
    workspace = bench.workspace();
  }

  @TearDown(Level.Trial)
  public void tearDown() throws IOException, InterruptedException {
    bench.close();
  }

  /** The whole path: a model's call of shell("true"). */
  @Benchmark
  public ToolResult shellTrue() {
    return dispatcher.dispatch(
        bench.tools(),
        ToolCall.of("shell", "{\"command\":\"true\"}")
            .withSessionId("bench")
            .withTimeout(Duration.ofSeconds(30)));
  }

  /** The sandbox alone: setpriv, prlimit, bwrap, the namespaces, the capture. */
  @Benchmark
  public Execution sandboxTrue() throws InterruptedException {
    return bench
        .sandbox()
        .run(Sandbox.Request.of(List.of("true"), workspace, Duration.ofSeconds(30)));
  }

  /** The raw baseline: the JDK starting the program and waiting for it. */
  @Benchmark
  public int rawProcessBuilderTrue() throws IOException, InterruptedException {
    return new ProcessBuilder("true").start().waitFor();
  }
}
