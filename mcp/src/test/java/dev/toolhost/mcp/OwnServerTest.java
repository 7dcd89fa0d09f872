package dev.toolhost.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.RegistryChanges;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The bridge against our own test MCP server, run as a child process. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class OwnServerTest {

  private static final String MARKER = TestMcpServer.class.getName();

  @TempDir Path state;
  private final ToolRegistry registry = new ToolRegistry();
  private final ToolDispatcher dispatcher = ToolDispatcher.create();
  private McpBridge bridge;

  @AfterEach
  void stop() throws InterruptedException {
    if (bridge != null) {
      bridge.close();
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (TestProcesses.aliveDescendants(MARKER) > 0 && System.nanoTime() < deadline) {
      Thread.sleep(100);
    }
    assertThat(TestProcesses.aliveDescendants(MARKER)).isZero();
  }

  private McpBridge start(McpServerConfig config) {
    bridge = McpBridge.builder(registry).stateDirectory(state).build();
    bridge.start(List.of(config));
    return bridge;
  }

  private static McpServerConfig server() {
    List<String> command = TestProcesses.javaMain(TestMcpServer.class);
    return new McpServerConfig(
        "test",
        new McpServerConfig.Stdio(
            command.getFirst(), command.subList(1, command.size()), java.util.Map.of()),
        Optional.of("t."),
        Duration.ofSeconds(2));
  }

  private ToolResult call(String tool, String arguments) {
    return dispatcher.dispatch(
        ToolSet.of(registry, ToolProfiles.MAIN), ToolCall.of(tool, arguments));
  }

  private static void await(BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime()).as("waited 20 s").isLessThan(deadline);
      Thread.sleep(50);
    }
  }

  @Test
  void aChangedToolListUpdatesTheRegistry() throws Exception {
    start(server());
    assertThat(registry.find("t.extra")).isEmpty();

    assertThat(call("t.add_tool", "{}").text()).isEqualTo("adding");

    await(() -> registry.find("t.extra").isPresent());
    assertThat(call("t.extra", "{}").text()).isEqualTo("extra");
  }

  @Test
  void aChangedDefinitionIsQuarantinedFlaggedAndCallableOnceApproved() throws Exception {
    start(server());
    assertThat(call("t.add", "{\"a\": 1, \"b\": 2}").text()).isEqualTo("3.0");

    call("t.redefine", "{}");

    await(() -> registry.find("t.add").isEmpty());
    McpBridge.ServerTool held =
        bridge.server("test").orElseThrow().tools().stream()
            .filter(tool -> tool.name().equals("add"))
            .findFirst()
            .orElseThrow();
    assertThat(held.status()).isEqualTo(McpBridge.ToolStatus.QUARANTINED);
    assertThat(held.flags())
        .anyMatch(flag -> flag.startsWith("hidden instruction tag"))
        .anyMatch(flag -> flag.startsWith("reference to a secret file"));
    assertThat(Files.readString(state.resolve("mcp-pins.json"))).contains("\"test/add\"");
    assertThat(DefinitionPins.inDirectory(state, Set.of()).pending()).containsExactly("test/add");

    assertThat(bridge.approve("TEST", "add")).isTrue();

    assertThat(registry.find("t.add")).isPresent();
    assertThat(call("t.add", "{\"a\": 2, \"b\": 2}").text()).isEqualTo("4.0");
  }

  @Test
  void aChangedDefinitionApprovedInTheConfigReplacesTheToolInOneStep() throws Exception {
    bridge = McpBridge.builder(registry).stateDirectory(state).approved(Set.of("test/add")).build();
    bridge.start(List.of(server()));
    ExecutableTool before = registry.find("t.add").orElseThrow();
    List<String> heard = RegistryChanges.of(registry);

    call("t.redefine", "{\"description\": \"Adds two numbers, exactly.\"}");

    // Never missing while it changes: orElseThrow fails the test if it is.
    await(() -> registry.find("t.add").orElseThrow() != before);
    assertThat(registry.find("t.add").orElseThrow().spec().description())
        .isEqualTo("Adds two numbers, exactly.");
    assertThat(heard).containsExactly("~t.add");
    assertThat(call("t.add", "{\"a\": 2, \"b\": 3}").text()).isEqualTo("5.0");
  }

  @Test
  void aHangingToolAnswersARetryableTimeoutThatSaysWhatToDo() {
    start(server());

    long started = System.nanoTime();
    // A caller that names no deadline gets the tool's own timeout, the server's call timeout.
    ToolSet tools = ToolSet.of(registry, ToolProfiles.MAIN);
    ToolResult result =
        dispatcher.dispatch(
            tools, ToolCall.of("t.hang", "{}").withTimeout(tools.defaultTimeout("t.hang")));

    assertThat(result).isInstanceOf(ToolResult.Failure.class);
    ToolResult.Failure failure = (ToolResult.Failure) result;
    assertThat(failure.error().code()).isEqualTo(ErrorCode.TIMEOUT);
    assertThat(failure.error().retryable()).isTrue();
    assertThat(failure.text()).contains("within 2 s").contains("You may retry");
    assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(10));
    // The connection survives a timeout.
    assertThat(call("t.add", "{\"a\": 1, \"b\": 1}").text()).isEqualTo("2.0");
  }

  @Test
  void aBridgedToolTakesItsServersCallTimeoutAsItsOwn() {
    start(server());

    assertThat(registry.find("t.add").orElseThrow().timeout()).hasValue(Duration.ofSeconds(2));
    assertThat(registry.find("t.add").orElseThrow().inline()).isTrue();
  }

  @Test
  void pinsSurviveARestartOfTheHost() throws Exception {
    start(server());
    bridge.close();
    String pins = Files.readString(state.resolve("mcp-pins.json"));

    start(server());

    assertThat(registry.find("t.add")).isPresent();
    assertThat(Files.readString(state.resolve("mcp-pins.json"))).isEqualTo(pins);
  }

  @Test
  void aCallersLongerDeadlineWinsOverTheServersCallTimeout() {
    start(server());

    ToolResult result =
        dispatcher.dispatch(
            ToolSet.of(registry, ToolProfiles.MAIN),
            ToolCall.of("t.slow_echo", "{\"text\": \"late\", \"millis\": 3500}")
                .withTimeout(Duration.ofSeconds(20)));

    // The server's call timeout is 2 s: it is the default, not a cap on the caller.
    assertThat(result.isError()).as(result.text()).isFalse();
    assertThat(result.text()).isEqualTo("late");
  }

  private ToolResult callThenKillTheServer(String tool, Path trace) throws Exception {
    ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
    try {
      Future<ToolResult> running =
          threads.submit(
              () ->
                  dispatcher.dispatch(
                      ToolSet.of(registry, ToolProfiles.MAIN),
                      ToolCall.of(
                              tool,
                              "{\"path\": \""
                                  + trace.toString().replace("\\", "\\\\")
                                  + "\", \"millis\": 5000}")
                          .withTimeout(Duration.ofSeconds(40))));
      // The tool has run once on the server (its line is there) and is still answering.
      await(() -> runs(trace) == 1);
      assertThat(TestProcesses.killDescendants(MARKER)).isPositive();
      return running.get(60, TimeUnit.SECONDS);
    } finally {
      threads.shutdownNow();
    }
  }

  private static long runs(Path trace) {
    try {
      return Files.exists(trace) ? Files.readAllLines(trace).size() : 0;
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  @Test
  void aToolNotMarkedIdempotentIsNotCalledAgainWhenItsServerDiesMidCall() throws Exception {
    start(server().withTimeout(Duration.ofSeconds(30)));
    Path trace = state.resolve("append.trace");

    ToolResult result = callThenKillTheServer("t.append", trace);

    assertThat(result).isInstanceOf(ToolResult.Failure.class);
    assertThat(((ToolResult.Failure) result).error().code()).isEqualTo(ErrorCode.UNAVAILABLE);
    assertThat(result.text()).contains("may have run").contains("did not call it again");
    // Back and serving, and the lost call never ran a second time.
    await(() -> bridge.server("test").orElseThrow().state().equals("connected"));
    assertThat(call("t.add", "{\"a\": 1, \"b\": 1}").text()).isEqualTo("2.0");
    assertThat(runs(trace)).isEqualTo(1);
  }

  @Test
  void anIdempotentToolIsCalledAgainOnceItsServerIsBack() throws Exception {
    start(server().withTimeout(Duration.ofSeconds(30)));
    Path trace = state.resolve("append-idempotent.trace");

    ToolResult result = callThenKillTheServer("t.append_idempotent", trace);

    assertThat(result.isError()).as(result.text()).isFalse();
    assertThat(result.text()).isEqualTo("appended");
    assertThat(runs(trace)).isEqualTo(2);
  }

  @Test
  void anOversizedAnswerFailsThatCallAloneWhileTenOtherCallsInFlightAnswerTheirOwn()
      throws Exception {
    start(server().withTimeout(Duration.ofSeconds(60)));
    ToolSet tools = ToolSet.of(registry, ToolProfiles.MAIN);
    List<java.util.concurrent.CompletableFuture<ToolResult>> others = new java.util.ArrayList<>();
    for (int i = 0; i < 10; i++) {
      String arguments = "{\"text\": \"call " + i + "\", \"millis\": 1500}";
      others.add(
          java.util.concurrent.CompletableFuture.supplyAsync(
              () ->
                  dispatcher.dispatch(
                      tools,
                      ToolCall.of("t.slow_echo", arguments).withTimeout(Duration.ofSeconds(60))),
              java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor()));
    }

    // 20 million characters: above the 16 Mi characters the bridge reads in one message.
    ToolResult big =
        dispatcher.dispatch(
            tools,
            ToolCall.of("t.big", "{\"chars\": 20000000}").withTimeout(Duration.ofSeconds(60)));

    assertThat(big).isInstanceOf(ToolResult.Failure.class);
    assertThat(((ToolResult.Failure) big).error().code()).isEqualTo(ErrorCode.EXECUTION_FAILED);
    assertThat(big.text()).contains("larger than the host accepts").contains("Ask for less");
    for (int i = 0; i < 10; i++) {
      ToolResult own = others.get(i).get(60, TimeUnit.SECONDS);
      assertThat(own.isError()).as(own.text()).isFalse();
      assertThat(own.text()).isEqualTo("call " + i);
    }
    // The connection never went away.
    assertThat(bridge.server("test").orElseThrow().state()).isEqualTo("connected");
    assertThat(call("t.add", "{\"a\": 2, \"b\": 2}").text()).isEqualTo("4.0");
    assertThat(call("t.big", "{\"chars\": 10}").text()).isEqualTo("x".repeat(10));
  }

  @Test
  void theIdOfAnOversizeAnswerIsFoundAtItsStartOrItsEndAndNeverInsideIt() {
    assertThat(StdioTransport.idOf("{\"jsonrpc\":\"2.0\",\"id\":\"a1b-7\",\"result\":{", "x\"}]}}"))
        .contains("\"a1b-7\"");
    assertThat(
            StdioTransport.idOf(
                "{\"result\":{\"content\":[{\"id\":9,", "\"}]},\"jsonrpc\":\"2.0\",\"id\":42}"))
        .contains("42");
    assertThat(StdioTransport.idOf("{\"id\": 3, \"result\": {", "}}")).contains("3");
    // An id in the result's content is not the message's.
    assertThat(StdioTransport.idOf("{\"result\":{\"id\":9,\"text\":\"xx", "xxx\",\"id\":5}}"))
        .isEmpty();
  }
}
