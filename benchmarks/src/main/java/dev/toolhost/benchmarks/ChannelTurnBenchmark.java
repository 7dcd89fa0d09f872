package dev.toolhost.benchmarks;

import dev.toolhost.agent.ChannelTurn;
import dev.toolhost.agent.Conversation;
import dev.toolhost.agent.RunListener;
import dev.toolhost.agent.RunResult;
import dev.toolhost.core.Redactor;
import dev.toolhost.testing.ScriptedReply;
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
 * What the channel tools cost a turn: one turn of two model steps (the model calls {@code react},
 * then answers) with the five channel tools bound for it and removed after ({@code channelTurn}),
 * beside the same two-step turn without them, the model calling {@code list_tool_guides} instead
 * ({@code plainTurn}), against the scripted model server answering at once. The difference is
 * opening the turn, adding and removing five tools, and offering their schemas in each request.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class ChannelTurnBenchmark {

  private BenchAgent bench;

  @Setup(Level.Trial)
  public void setUp() {
    bench =
        BenchAgent.start(
            request -> {
              if (request.lastRole().equals("tool")) {
                return ScriptedReply.answer("Done.");
              }
              boolean channel = request.json().get("tools").toString().contains("\"react\"");
              return ScriptedReply.toolCalls(
                  channel
                      ? ScriptedReply.call("call_1", "react", "{\"emoji\":\"👍\"}")
                      : ScriptedReply.call("call_1", "list_tool_guides", "{}"));
            });
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    bench.close();
  }

  /** A turn with the channel tools bound to it. */
  @Benchmark
  public RunResult channelTurn() {
    Conversation conversation = bench.conversation();
    try (ChannelTurn turn =
        ChannelTurn.open(conversation, Redactor.NONE, ChannelTurn.Listener.NONE)) {
      return bench.agent().run(conversation, "Thanks!", RunListener.NONE, turn);
    }
  }

  /** The baseline: the same two-step turn without channel tools. */
  @Benchmark
  public RunResult plainTurn() {
    Conversation conversation = bench.conversation();
    return bench.agent().run(conversation, "Thanks!", RunListener.NONE);
  }
}
