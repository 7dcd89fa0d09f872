package dev.toolhost.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class ToolSetTest {

  private final ToolRegistry registry = new ToolRegistry();
  private final ToolDispatcher dispatcher = ToolDispatcher.create();

  private static ExecutableTool replyTool(List<String> channel) {
    return ExecutableTool.of(
        new ToolSpec(
            "reply",
            "Sends a message to the user.",
            Schemas.parse(
                "{\"type\": \"object\", \"properties\": {\"text\": {\"type\": \"string\"}},"
                    + " \"required\": [\"text\"]}"),
            "channel"),
        (call, arguments) -> {
          channel.add(arguments.get("text").asString());
          return ToolResult.success("sent");
        });
  }

  @Test
  void setShowsTheProfilesRegistryToolsThenItsBoundToolsInTheOrderAdded() {
    registry.register(Schemas.spec("web_search", "builtin:web"), (c, a) -> null);
    registry.register(Schemas.spec("spawn_subagent", "subagent"), (c, a) -> null);
    // Granted both by name; its source still denies spawn_subagent.
    ToolSet set =
        ToolSet.of(registry, ToolProfiles.SUBAGENT.withNames("web_search", "spawn_subagent"));

    set.add(ExecutableTool.of(Schemas.spec("zz_status", "worker"), (c, a) -> null));
    set.add(replyTool(new ArrayList<>()));

    assertThat(set.names()).containsExactly("web_search", "zz_status", "reply");
  }

  @Test
  void boundToolIsSeenOnlyByItsOwnSet() {
    List<String> channel = new ArrayList<>();
    ToolSet turn = ToolSet.of(registry, ToolProfiles.MAIN);
    ToolSet other = ToolSet.of(registry, ToolProfiles.MAIN);
    turn.add(replyTool(channel));

    assertThat(dispatcher.dispatch(turn, ToolCall.of("reply", "{\"text\": \"hi\"}")).text())
        .isEqualTo("sent");
    assertThat(dispatcher.dispatch(other, ToolCall.of("reply", "{\"text\": \"hi\"}")).isError())
        .isTrue();
    assertThat(registry.find("reply")).isEmpty();
    assertThat(channel).containsExactly("hi");
  }

  @Test
  void boundToolCannotShadowAToolTheSetShows() {
    registry.register(Schemas.spec("reply", "builtin:test"), (c, a) -> null);
    ToolSet set = ToolSet.of(registry, ToolProfiles.MAIN);

    assertThatThrownBy(() -> set.add(replyTool(new ArrayList<>())))
        .hasMessage("Tool 'reply' is already in this tool set.");
  }

  @Test
  void boundToolShadowsARegistryToolRegisteredLaterUnderItsName() {
    List<String> channel = new ArrayList<>();
    ToolSet set = ToolSet.of(registry, ToolProfiles.MAIN);
    set.add(replyTool(channel));
    registry.register(Schemas.spec("reply", "builtin:test"), (c, a) -> ToolResult.success("x"));

    assertThat(set.names()).containsExactly("reply");
    assertThat(dispatcher.dispatch(set, ToolCall.of("reply", "{\"text\": \"hi\"}")).text())
        .isEqualTo("sent");
  }

  @Test
  void removedToolCannotBeInvokedAgain() {
    List<String> channel = new ArrayList<>();
    ToolSet set = ToolSet.of(registry, ToolProfiles.MAIN);
    set.add(replyTool(channel));

    assertThat(set.remove("reply")).isTrue();
    assertThat(set.remove("reply")).isFalse();
    ToolResult result = dispatcher.dispatch(set, ToolCall.of("reply", "{\"text\": \"late\"}"));

    assertThat(((ToolResult.Failure) result).error().code()).isEqualTo(ErrorCode.TOOL_NOT_FOUND);
    assertThat(channel).isEmpty();
    assertThat(set.names()).doesNotContain("reply");
  }

  @Test
  void callAlreadyQueuedWhenTheToolIsRemovedNeverInvokesIt() throws Exception {
    List<String> channel = new ArrayList<>();
    CountDownLatch queued = new CountDownLatch(1);
    CountDownLatch removed = new CountDownLatch(1);
    // The call has found its tool and waits in the chain, just before the executor.
    ToolDispatcher slow =
        ToolDispatcher.builder()
            .interceptor(
                DispatchStage.OUTPUT_SCAN,
                chain -> {
                  queued.countDown();
                  try {
                    removed.await();
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                  }
                  return chain.proceed(chain.call());
                })
            .build();
    ToolSet set = ToolSet.of(registry, ToolProfiles.MAIN);
    set.add(replyTool(channel));

    Future<ToolResult> call;
    try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
      call = pool.submit(() -> slow.dispatch(set, ToolCall.of("reply", "{\"text\": \"stale\"}")));
      assertThat(queued.await(5, TimeUnit.SECONDS)).isTrue();
      set.remove("reply");
      removed.countDown();
    }

    ToolResult result = call.get();
    assertThat(((ToolResult.Failure) result).error().code()).isEqualTo(ErrorCode.TOOL_NOT_FOUND);
    assertThat(result.text()).isEqualTo("Tool 'reply' was removed and can no longer be called.");
    assertThat(channel).isEmpty();
  }

  @Test
  void longCallBlocksNeitherListingNorRegistrationNorRemoval() throws Exception {
    CountDownLatch running = new CountDownLatch(1);
    CountDownLatch finish = new CountDownLatch(1);
    registry.register(
        Schemas.spec("long_job", "builtin:test"),
        (call, arguments) -> {
          running.countDown();
          finish.await();
          return ToolResult.success("finished");
        });
    ToolSet set = ToolSet.of(registry, ToolProfiles.MAIN);
    set.add(ExecutableTool.of(Schemas.spec("status", "worker"), (c, a) -> ToolResult.success("")));

    try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
      Future<ToolResult> call =
          pool.submit(
              () ->
                  dispatcher.dispatch(
                      set, ToolCall.of("long_job", "{}").withTimeout(Duration.ofSeconds(20))));
      assertThat(running.await(5, TimeUnit.SECONDS)).isTrue();

      // All of these finish while the call is still running.
      Future<?> changes =
          pool.submit(
              () -> {
                registry.register(Schemas.spec("newcomer", "builtin:test"), (c, a) -> null);
                assertThat(set.names()).contains("long_job", "newcomer", "status");
                assertThat(set.remove("status")).isTrue();
                assertThat(registry.unregister("newcomer")).isTrue();
                return null;
              });
      changes.get(5, TimeUnit.SECONDS);
      assertThat(call.isDone()).isFalse();

      finish.countDown();
      assertThat(call.get(5, TimeUnit.SECONDS).text()).isEqualTo("finished");
    }
  }

  @Test
  void unregisteringWhileCallsRunLetsFoundCallsFinishAndRefusesNewOnes() throws Exception {
    AtomicInteger runs = new AtomicInteger();
    ToolSet set = ToolSet.of(registry, ToolProfiles.MAIN);
    int rounds = 200;
    try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
      List<Future<ToolResult>> calls = new ArrayList<>();
      for (int round = 0; round < rounds; round++) {
        String name = "flaky_" + round;
        registry.register(
            Schemas.spec(name, "builtin:test"),
            (call, arguments) -> {
              runs.incrementAndGet();
              return ToolResult.success("ran");
            });
        calls.add(pool.submit(() -> dispatcher.dispatch(set, ToolCall.of(name, "{}"))));
        pool.submit(() -> registry.unregister(name));
      }
      int ran = 0;
      for (Future<ToolResult> call : calls) {
        ToolResult result = call.get(10, TimeUnit.SECONDS);
        if (result.isError()) {
          assertThat(((ToolResult.Failure) result).error().code())
              .isEqualTo(ErrorCode.TOOL_NOT_FOUND);
        } else {
          assertThat(result.text()).isEqualTo("ran");
          ran++;
        }
      }
      assertThat(runs).hasValue(ran);
    }
    assertThat(registry.specs()).isEmpty();
  }

  @Test
  void aCallWithoutADeadlineGetsTheTimeoutOfTheToolTheSetShows() {
    registry.register(replyTool(new ArrayList<>()).withTimeout(Duration.ofMinutes(5)));
    ToolSet main = ToolSet.of(registry, ToolProfiles.MAIN);
    ToolSet denying = ToolSet.of(registry, ToolProfiles.MAIN.withoutSources("channel"));

    assertThat(main.defaultTimeout("reply")).isEqualTo(Duration.ofMinutes(5));
    assertThat(denying.defaultTimeout("reply")).isEqualTo(ToolCall.DEFAULT_TIMEOUT);
    assertThat(main.defaultTimeout("no_such_tool")).isEqualTo(ToolCall.DEFAULT_TIMEOUT);
  }
}
