package dev.toolhost.benchmarks;

import dev.toolhost.core.DispatchStage;
import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import dev.toolhost.core.ToolSpec;
import dev.toolhost.memory.ContentChunker;
import dev.toolhost.memory.InProcessWorkingMemory;
import dev.toolhost.memory.ResultChunker;
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
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * Chunking a 1 MB tool result (1,000,000 characters of markdown): the content chunker alone, and
 * the whole result chunker step through a real dispatcher into in-process working memory (chunk,
 * store every chunk and the outline, render the index table).
 *
 * <p>Throughput in operations per second; one operation is one megabyte (10^6 characters, one byte
 * each in UTF-8), so the score is the rate in MB/s.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(
    value = 1,
    // The result chunker logs each chunked result at INFO; one line per operation is noise here.
    jvmArgsAppend = {"-Xms1g", "-Xmx1g", "-Dorg.slf4j.simpleLogger.log.dev.toolhost.memory=warn"})
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class ChunkingBenchmark {

  static final int LENGTH = 1_000_000;

  private String document;
  private ContentChunker chunker;
  private InProcessWorkingMemory memory;
  private ToolDispatcher dispatcher;
  private ToolSet tools;

  @Setup(Level.Trial)
  public void setUp() {
    document = markdown(LENGTH);
    chunker = new ContentChunker(64_000);
    memory = new InProcessWorkingMemory();
    dispatcher =
        ToolDispatcher.builder()
            .interceptor(DispatchStage.RESULT_SHAPING, new ResultChunker(memory))
            .build();
    ToolRegistry registry = new ToolRegistry();
    registry.register(
        ExecutableTool.of(
            new ToolSpec(
                "list_models",
                "Lists models.",
                (ObjectNode) JsonMapper.shared().readTree("{\"type\": \"object\"}"),
                "mcp:catalogue"),
            (call, arguments) -> ToolResult.success(document)));
    tools = ToolSet.of(registry, ToolProfiles.MAIN);
  }

  /** Drops what the last operation stored, so that memory does not grow across operations. */
  @TearDown(Level.Invocation)
  public void forget() {
    memory.removeAll("");
  }

  /** Splits 1 MB into chunks of at most 64,000 characters. */
  @Benchmark
  public List<ContentChunker.Chunk> contentChunker() {
    return chunker.chunk(document);
  }

  /** A tool returning 1 MB, through the dispatcher with the result chunker. */
  @Benchmark
  public ToolResult resultChunker() {
    return dispatcher.dispatch(tools, ToolCall.of("list_models", "{}").withSessionId("bench"));
  }

  /** Markdown of exactly {@code length} characters: sections, paragraphs, code and tables. */
  static String markdown(int length) {
    StringBuilder doc = new StringBuilder(length + 1000);
    int section = 0;
    while (doc.length() < length) {
      doc.append("# Model family ").append(section).append("\n\n");
      for (int sub = 0; sub < 4; sub++) {
        doc.append("## Variant ").append(sub).append("\n\n");
        for (int p = 0; p < 12; p++) {
          doc.append("Paragraph ")
              .append(p)
              .append(": input tokens cost 0.5 per million, output tokens 1.5 per million;")
              .append(" the context window is 128,000 tokens and rate limits apply per key.\n")
              .append("A second line of the same paragraph keeps it realistic in length.\n\n");
        }
        doc.append(
            "### Limits\n\n```json\n{\"rpm\": 500, \"tpm\": 200000}\n# not a heading\n```\n\n");
        doc.append("| tier | price |\n|---|---|\n| base | 1 |\n| pro | 2 |\n\n");
      }
      section++;
    }
    doc.setLength(length);
    return doc.toString();
  }
}
