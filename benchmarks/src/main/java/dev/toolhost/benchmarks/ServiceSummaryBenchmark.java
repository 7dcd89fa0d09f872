package dev.toolhost.benchmarks;

import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSpec;
import dev.toolhost.search.KnownService;
import dev.toolhost.search.RegistryFeed;
import dev.toolhost.search.ServiceIndex;
import dev.toolhost.search.ServiceKind;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import tools.jackson.databind.node.JsonNodeFactory;

/**
 * What derived summaries cost the registry feed: an MCP server of {@code tools} tools registering
 * one by one into a fresh registry whose feed derives the server's summary again at each tool
 * ({@code feedWithDerivedSummaries}), beside the same tools put into a fresh index by hand as
 * capabilities under a fixed label, with no registry and no summary work ({@code rawIndexUpdates}).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class ServiceSummaryBenchmark {

  @Param({"20", "500"})
  public int tools;

  private List<ToolSpec> specs;

  @Setup
  public void setUp() {
    specs = new ArrayList<>();
    for (int i = 0; i < tools; i++) {
      specs.add(
          new ToolSpec(
              "tool_" + i,
              "Does thing number " + i + " for the caller. Takes an id and returns a report.",
              JsonNodeFactory.instance.objectNode().put("type", "object"),
              "mcp:bench"));
    }
  }

  /** Registering the server's tools with the feed deriving its summary at each one. */
  @Benchmark
  public Optional<KnownService> feedWithDerivedSummaries() {
    ToolRegistry registry = new ToolRegistry();
    ServiceIndex index = new ServiceIndex();
    try (RegistryFeed feed = RegistryFeed.attach(registry, index)) {
      for (ToolSpec spec : specs) {
        registry.register(spec, (call, arguments) -> ToolResult.success("ok"));
      }
    }
    return index.find(ServiceKind.MCP_SERVER, "bench");
  }

  /** The baseline: the same capabilities put in an index by hand, under a fixed label. */
  @Benchmark
  public Optional<KnownService> rawIndexUpdates() {
    ToolRegistry registry = new ToolRegistry();
    ServiceIndex index = new ServiceIndex();
    for (ToolSpec spec : specs) {
      registry.register(spec, (call, arguments) -> ToolResult.success("ok"));
      index.update(
          ServiceKind.MCP_SERVER,
          "bench",
          current ->
              Optional.of(
                  current
                      .orElseGet(
                          () ->
                              new KnownService(
                                  "bench", ServiceKind.MCP_SERVER, "MCP server bench", List.of()))
                      .withCapability(
                          new KnownService.Capability(spec.name(), spec.description()))));
    }
    return index.find(ServiceKind.MCP_SERVER, "bench");
  }
}
