package dev.toolhost.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class ToolDispatcherTest {

  private final ToolRegistry registry = new ToolRegistry();
  private final ToolDispatcher dispatcher = ToolDispatcher.create();
  private final AtomicInteger runs = new AtomicInteger();

  private ToolSet main() {
    return ToolSet.of(registry, ToolProfiles.MAIN);
  }

  private void registerAdd() {
    registry.register(
        new ToolSpec("add", "Adds two integers.", Schemas.twoIntegers(), "builtin:math"),
        (call, arguments) -> {
          runs.incrementAndGet();
          return ToolResult.success(
              String.valueOf(arguments.get("a").asInt() + arguments.get("b").asInt()));
        });
  }

  private static ToolError error(ToolResult result) {
    assertThat(result).isInstanceOf(ToolResult.Failure.class);
    return ((ToolResult.Failure) result).error();
  }

  @Test
  void validCallRunsTheTool() {
    registerAdd();

    assertThat(dispatcher.dispatch(main(), ToolCall.of("add", "{\"a\": 2, \"b\": 3}")))
        .isEqualTo(ToolResult.success("5"));
  }

  @Test
  void unknownToolNamesTheThreeClosestVisibleTools() {
    for (String name : List.of("web_search", "web_browse", "websearch_pro", "shell", "exec")) {
      registry.register(Schemas.spec(name, "builtin:test"), (call, arguments) -> null);
    }

    ToolError error = error(dispatcher.dispatch(main(), ToolCall.of("web_serch", "{}")));

    assertThat(error.code()).isEqualTo(ErrorCode.TOOL_NOT_FOUND);
    assertThat(error.retryable()).isFalse();
    assertThat(error.message())
        .isEqualTo(
            "Tool 'web_serch' does not exist. The closest available tools are: web_search,"
                + " websearch_pro, web_browse.");
  }

  @Test
  void deniedToolLooksLikeUnknownTool() {
    registry.register(Schemas.spec("spawn_subagent", "subagent"), (call, arguments) -> null);
    registry.register(Schemas.spec("web_search", "builtin:web"), (call, arguments) -> null);
    ToolSet subagent =
        ToolSet.of(registry, ToolProfiles.SUBAGENT.withNames("spawn_subagent", "web_search"));

    ToolError denied = error(dispatcher.dispatch(subagent, ToolCall.of("spawn_subagent", "{}")));
    ToolError missing = error(dispatcher.dispatch(subagent, ToolCall.of("spawn_subagenz", "{}")));

    assertThat(denied.code()).isEqualTo(missing.code()).isEqualTo(ErrorCode.TOOL_NOT_FOUND);
    assertThat(denied.message())
        .isEqualTo(missing.message().replace("spawn_subagenz", "spawn_subagent"))
        .doesNotContain("denied", "profile", "subagent)")
        .endsWith("The closest available tools are: web_search.");
  }

  @Test
  void argumentsThatAreNotJsonAreInvalidArgumentsBeforeTheToolRuns() {
    registerAdd();

    ToolError error = error(dispatcher.dispatch(main(), ToolCall.of("add", "{\"a\": 2,")));

    assertThat(error.code()).isEqualTo(ErrorCode.INVALID_ARGUMENTS);
    assertThat(error.message()).startsWith("The arguments for tool 'add' are not valid JSON");
    assertThat(runs).hasValue(0);
  }

  @Test
  void argumentsThatAreNotJsonSayWhatAndWhereWithoutTheParsersInternals() {
    registerAdd();

    ToolError token =
        error(dispatcher.dispatch(main(), ToolCall.of("add", "{\"a\": two, \"b\": 3}")));
    ToolError character = error(dispatcher.dispatch(main(), ToolCall.of("add", "{\"a\": 2,\n }")));

    assertThat(token.message())
        .isEqualTo(
            "The arguments for tool 'add' are not valid JSON: Unrecognized token 'two' at line 1,"
                + " column 7. Send one JSON object that matches the tool's parameters schema.");
    assertThat(character.message())
        .isEqualTo(
            "The arguments for tool 'add' are not valid JSON: Unexpected character ('}') at line"
                + " 2, column 2. Send one JSON object that matches the tool's parameters schema.");
  }

  @Test
  void argumentsThatAreNotAnObjectAreInvalidArguments() {
    registerAdd();

    ToolError error = error(dispatcher.dispatch(main(), ToolCall.of("add", "[1, 2]")));

    assertThat(error.message())
        .isEqualTo("The arguments for tool 'add' must be a JSON object, not array.");
  }

  @Test
  void everySchemaViolationIsListedWithItsJsonPath() {
    registerAdd();

    ToolError error =
        error(dispatcher.dispatch(main(), ToolCall.of("add", "{\"a\": \"two\", \"c\": 1}")));

    assertThat(error.code()).isEqualTo(ErrorCode.INVALID_ARGUMENTS);
    assertThat(error.message())
        .startsWith("The arguments for tool 'add' do not match its parameters schema:")
        .contains("$.a: string found, integer expected")
        .contains("required property 'b' not found")
        .contains("property 'c' is not defined in the schema");
    assertThat(runs).hasValue(0);
  }

  @Test
  void blankArgumentsAreAnEmptyObject() {
    registry.register(
        Schemas.spec("now", "builtin:time"), (call, args) -> ToolResult.success(args.toString()));

    assertThat(dispatcher.dispatch(main(), ToolCall.of("now", "")).text()).isEqualTo("{}");
  }

  @Test
  void toolThatOverrunsItsDeadlineAnswersTimeoutAtTheDeadlineAndIsInterrupted() throws Exception {
    CountDownLatch interrupted = new CountDownLatch(1);
    registry.register(
        Schemas.spec("slow", "builtin:test"),
        (call, arguments) -> {
          try {
            Thread.sleep(Duration.ofMinutes(5));
          } catch (InterruptedException e) {
            interrupted.countDown();
            throw e;
          }
          return ToolResult.success("too late");
        });
    Instant deadline = Instant.now().plusMillis(200);

    ToolResult result =
        dispatcher.dispatch(main(), ToolCall.of("slow", "{}").withDeadline(deadline));

    Instant returned = Instant.now();
    ToolError error = error(result);
    assertThat(error.code()).isEqualTo(ErrorCode.TIMEOUT);
    assertThat(error.retryable()).isTrue();
    assertThat(error.message()).contains("'slow'").contains("deadline");
    assertThat(returned).isAfterOrEqualTo(deadline);
    assertThat(interrupted.await(5, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void toolThatIgnoresInterruptsStillCannotHoldTheCallerPastTheDeadline() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    AtomicBoolean returned = new AtomicBoolean();
    registry.register(
        Schemas.spec("stubborn", "builtin:test"),
        (call, arguments) -> {
          while (true) {
            try {
              if (release.await(10, TimeUnit.MILLISECONDS)) {
                return ToolResult.success("done");
              }
            } catch (InterruptedException ignored) {
              // A badly behaved tool: it swallows the interrupt and carries on.
            }
          }
        });

    Thread caller =
        Thread.ofVirtual()
            .start(
                () -> {
                  ToolResult result =
                      dispatcher.dispatch(
                          main(),
                          ToolCall.of("stubborn", "{}").withTimeout(Duration.ofMillis(200)));
                  assertThat(error(result).code()).isEqualTo(ErrorCode.TIMEOUT);
                  returned.set(true);
                });

    caller.join(Duration.ofSeconds(10));
    release.countDown();
    assertThat(returned).isTrue();
  }

  @Test
  void isolatedToolRunsOnAThreadOfItsOwnAndInlineToolOnTheCallersThread() {
    AtomicReference<Thread> isolatedThread = new AtomicReference<>();
    AtomicReference<Thread> inlineThread = new AtomicReference<>();
    registry.register(
        Schemas.spec("isolated", "builtin:test"),
        (call, arguments) -> {
          isolatedThread.set(Thread.currentThread());
          return ToolResult.success("");
        });
    registry.register(
        ExecutableTool.of(
                Schemas.spec("in_place", "builtin:test"),
                (call, arguments) -> {
                  inlineThread.set(Thread.currentThread());
                  return ToolResult.success("");
                })
            .runInline());

    dispatcher.dispatch(main(), ToolCall.of("isolated", "{}"));
    dispatcher.dispatch(main(), ToolCall.of("in_place", "{}"));

    assertThat(isolatedThread.get()).isNotSameAs(Thread.currentThread());
    assertThat(isolatedThread.get().isVirtual()).isTrue();
    assertThat(inlineThread.get()).isSameAs(Thread.currentThread());
  }

  @Test
  void inlineToolDoesNotRunPastItsDeadlineOrWhenTheCallerIsInterrupted() {
    registry.register(
        ExecutableTool.of(
                Schemas.spec("in_place", "builtin:test"),
                (call, arguments) -> {
                  runs.incrementAndGet();
                  return ToolResult.success("");
                })
            .runInline());

    ToolResult late =
        dispatcher.dispatch(
            main(), ToolCall.of("in_place", "{}").withDeadline(Instant.now().minusMillis(1)));
    Thread.currentThread().interrupt();
    ToolResult cancelled;
    try {
      cancelled = dispatcher.dispatch(main(), ToolCall.of("in_place", "{}"));
    } finally {
      Thread.interrupted();
    }

    assertThat(error(late).code()).isEqualTo(ErrorCode.TIMEOUT);
    assertThat(error(cancelled).code()).isEqualTo(ErrorCode.CANCELLED);
    assertThat(runs).hasValue(0);
  }

  @Test
  void callWhoseDeadlineHasPassedDoesNotRun() {
    registerAdd();

    ToolResult result =
        dispatcher.dispatch(
            main(),
            ToolCall.of("add", "{\"a\": 1, \"b\": 1}").withDeadline(Instant.now().minusSeconds(1)));

    assertThat(error(result).code()).isEqualTo(ErrorCode.TIMEOUT);
    assertThat(runs).hasValue(0);
  }

  /** The error a call answers of a tool of that name that throws that exception. */
  private ToolError errorWhenItThrows(String name, Exception thrown) {
    registry.register(
        Schemas.spec(name, "builtin:test"),
        (call, arguments) -> {
          throw thrown;
        });
    return error(dispatcher.dispatch(main(), ToolCall.of(name, "{}")));
  }

  @Test
  void timeoutExceptionIsARetryableTimeout() {
    ToolError error = errorWhenItThrows("upstream", new TimeoutException("upstream took 30s"));

    assertThat(error.code()).isEqualTo(ErrorCode.TIMEOUT);
    assertThat(error.retryable()).isTrue();
    assertThat(error.detail()).contains("java.util.concurrent.TimeoutException: upstream took 30s");
  }

  @Test
  void toolExceptionAnswersExactlyItsError() {
    ToolError error =
        errorWhenItThrows(
            "picky", ToolException.invalidArguments("the date must be in the future"));

    assertThat(error.code()).isEqualTo(ErrorCode.INVALID_ARGUMENTS);
    assertThat(error.retryable()).isFalse();
    assertThat(error.message()).isEqualTo("the date must be in the future");
  }

  @Test
  void libraryIllegalArgumentExceptionIsExecutionFailedThatSaysNothingInternal() {
    // As a library deep inside a tool throws it, with text meant for its own programmer.
    ToolError error =
        errorWhenItThrows(
            "parser",
            new IllegalArgumentException("Illegal base64 character 2d at index 7 of key=s3cr3t"));

    assertThat(error.code()).isEqualTo(ErrorCode.EXECUTION_FAILED);
    assertThat(error.message())
        .doesNotContain("base64")
        .doesNotContain("s3cr3t")
        .doesNotContain("rejected its arguments")
        .doesNotContain("Exception");
    assertThat(error.detail()).contains("Illegal base64 character");
  }

  @Test
  void aRunningToolSeesTheToolSetItsCallWasDispatchedThrough() {
    AtomicReference<Optional<ToolSet>> seen = new AtomicReference<>();
    registry.register(
        Schemas.spec("who_called", "builtin:test"),
        (call, arguments) -> {
          seen.set(ToolCaller.toolSet());
          return ToolResult.success("ok");
        });
    ToolSet main = main();

    dispatcher.dispatch(main, ToolCall.of("who_called", "{}"));

    assertThat(seen.get()).containsSame(main);
    assertThat(ToolCaller.toolSet()).isEmpty();
  }

  @Test
  void otherExceptionIsExecutionFailedWithNoClassNameOrStackTraceForTheModel() {
    ToolError error =
        errorWhenItThrows(
            "broken", new IllegalStateException("connection pool exhausted at db-7:5432"));

    assertThat(error.code()).isEqualTo(ErrorCode.EXECUTION_FAILED);
    assertThat(error.retryable()).isFalse();
    assertThat(error.message())
        .contains("'broken' failed")
        .doesNotContain("IllegalStateException", "Exception", "db-7", "\tat ");
    assertThat(error.detail())
        .isEqualTo("java.lang.IllegalStateException: connection pool exhausted at db-7:5432");
  }

  @Test
  void callsOfOneTurnRunConcurrentlyAndAnswerInCallOrder() {
    int calls = 4;
    CyclicBarrier allRunning = new CyclicBarrier(calls);
    registry.register(
        new ToolSpec(
            "echo",
            "Echoes after every call of the turn is running.",
            Schemas.parse(
                "{\"type\": \"object\", \"properties\": {\"text\": {\"type\": \"string\"}}}"),
            "builtin:test"),
        (call, arguments) -> {
          // Passes only if all four calls are running at once.
          allRunning.await(10, TimeUnit.SECONDS);
          return ToolResult.success(arguments.get("text").asString());
        });
    List<ToolCall> turn = new ArrayList<>();
    for (int i = 0; i < calls; i++) {
      turn.add(ToolCall.of("echo", "{\"text\": \"call " + i + "\"}"));
    }

    List<ToolResult> results = dispatcher.dispatchAll(main(), turn);

    assertThat(results)
        .extracting(ToolResult::text)
        .containsExactly("call 0", "call 1", "call 2", "call 3");
  }

  @Test
  void eachCallOfATurnHasItsOwnDeadline() {
    registerAdd();
    registry.register(
        Schemas.spec("slow", "builtin:test"),
        (call, arguments) -> {
          Thread.sleep(Duration.ofMinutes(5));
          return ToolResult.success("too late");
        });

    List<ToolResult> results =
        dispatcher.dispatchAll(
            main(),
            List.of(
                ToolCall.of("slow", "{}").withTimeout(Duration.ofMillis(100)),
                ToolCall.of("add", "{\"a\": 1, \"b\": 2}"),
                ToolCall.of("nope", "{}")));

    assertThat(error(results.get(0)).code()).isEqualTo(ErrorCode.TIMEOUT);
    assertThat(results.get(1)).isEqualTo(ToolResult.success("3"));
    assertThat(error(results.get(2)).code()).isEqualTo(ErrorCode.TOOL_NOT_FOUND);
  }

  @Test
  void interruptingTheCallerCancelsTheCallAndInterruptsTheTool() throws Exception {
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch toolInterrupted = new CountDownLatch(1);
    registry.register(
        Schemas.spec("long", "builtin:test"),
        (call, arguments) -> {
          started.countDown();
          try {
            Thread.sleep(Duration.ofMinutes(5));
          } catch (InterruptedException e) {
            toolInterrupted.countDown();
            throw e;
          }
          return ToolResult.success("");
        });
    AtomicReference<ToolResult> result = new AtomicReference<>();
    Thread caller =
        Thread.ofVirtual()
            .start(() -> result.set(dispatcher.dispatch(main(), ToolCall.of("long", "{}"))));

    assertThat(started.await(5, TimeUnit.SECONDS)).isTrue();
    caller.interrupt();
    caller.join(Duration.ofSeconds(5));

    assertThat(error(result.get()).code()).isEqualTo(ErrorCode.CANCELLED);
    assertThat(toolInterrupted.await(5, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void aCancelledCallAnswersInItsToolsOwnWordsWhenTheToolSaysWhatBecameOfTheWork()
      throws Exception {
    CountDownLatch started = new CountDownLatch(2);
    registry.register(
        Schemas.spec("remote_like", "builtin:test"),
        (call, arguments) -> {
          started.countDown();
          try {
            Thread.sleep(Duration.ofMinutes(5));
          } catch (InterruptedException e) {
            return ToolResult.failure(
                ErrorCode.CANCELLED, "The worker stopped it; some of it may have been done.");
          }
          return ToolResult.success("");
        });
    registry.register(
        Schemas.spec("silent", "builtin:test"),
        (call, arguments) -> {
          started.countDown();
          Thread.sleep(Duration.ofMinutes(5));
          return ToolResult.success("");
        });
    AtomicReference<ToolResult> own = new AtomicReference<>();
    AtomicReference<ToolResult> silent = new AtomicReference<>();
    Thread first =
        Thread.ofVirtual()
            .start(() -> own.set(dispatcher.dispatch(main(), ToolCall.of("remote_like", "{}"))));
    Thread second =
        Thread.ofVirtual()
            .start(() -> silent.set(dispatcher.dispatch(main(), ToolCall.of("silent", "{}"))));

    assertThat(started.await(5, TimeUnit.SECONDS)).isTrue();
    first.interrupt();
    second.interrupt();
    first.join(Duration.ofSeconds(5));
    second.join(Duration.ofSeconds(5));

    assertThat(own.get())
        .isEqualTo(
            ToolResult.failure(
                ErrorCode.CANCELLED, "The worker stopped it; some of it may have been done."));
    assertThat(error(silent.get()).code()).isEqualTo(ErrorCode.CANCELLED);
    assertThat(error(silent.get()).message())
        .isEqualTo(
            "The call to tool 'silent' was cancelled while it ran; some of its work may have been"
                + " done.");
  }

  @Test
  void interceptorsRunInTheirStagesAroundTheExecutor() {
    registerAdd();
    List<String> order = new ArrayList<>();
    ToolDispatcher withSlots =
        ToolDispatcher.builder()
            .interceptor(
                DispatchStage.RESULT_SHAPING,
                chain -> {
                  order.add("chunker saw " + chain.arguments());
                  ToolResult result = chain.proceed(chain.call());
                  order.add("chunker got " + result.text());
                  return ToolResult.success("[" + result.text() + "]");
                })
            .interceptor(
                DispatchStage.OUTPUT_SCAN,
                chain -> {
                  order.add("scanner in");
                  ToolResult result = chain.proceed(chain.call());
                  order.add("scanner got " + result.text());
                  return ToolResult.success(result.text().replace("5", "*"));
                })
            .build();

    ToolResult result = withSlots.dispatch(main(), ToolCall.of("add", "{\"a\": 2, \"b\": 3}"));

    assertThat(result.text()).isEqualTo("[*]");
    assertThat(order)
        .containsExactly(
            "chunker saw {\"a\":2,\"b\":3}", "scanner in", "scanner got 5", "chunker got *");
  }

  @Test
  void interceptorThatChangesTheArgumentsIsValidatedAgain() {
    registerAdd();
    ToolDispatcher rewriting =
        ToolDispatcher.builder()
            .interceptor(
                DispatchStage.OUTPUT_SCAN,
                chain -> chain.proceed(chain.call().withArguments("{\"a\": \"x\", \"b\": 1}")))
            .build();

    ToolError error = error(rewriting.dispatch(main(), ToolCall.of("add", "{\"a\": 2, \"b\": 3}")));

    assertThat(error.code()).isEqualTo(ErrorCode.INVALID_ARGUMENTS);
    assertThat(runs).hasValue(0);
  }

  @Test
  void interceptorThatProceedsTwiceIsNamedAsTheCulprit() {
    registerAdd();
    ToolInterceptor twice =
        new ToolInterceptor() {
          @Override
          public ToolResult intercept(Chain chain) {
            chain.proceed(chain.call());
            return chain.proceed(chain.call());
          }
        };
    ToolDispatcher broken =
        ToolDispatcher.builder().interceptor(DispatchStage.OUTPUT_SCAN, twice).build();

    ToolError error = error(broken.dispatch(main(), ToolCall.of("add", "{\"a\": 2, \"b\": 3}")));

    assertThat(error.code()).isEqualTo(ErrorCode.EXECUTION_FAILED);
    assertThat(error.detail())
        .contains(
            "interceptor " + twice.getClass().getName() + " must call proceed() at most once");
    assertThat(runs).hasValue(1);
  }

  @Test
  void stagesRunInTheirDeclaredOrderWhateverTheOrderTheyWereAddedIn() {
    registerAdd();
    List<String> order = new ArrayList<>();
    ToolDispatcher staged =
        ToolDispatcher.builder()
            .interceptor(DispatchStage.OUTPUT_SCAN, recording(order, "scan"))
            .interceptor(DispatchStage.RESULT_SHAPING, recording(order, "shape 1"))
            .interceptor(DispatchStage.POLICY, recording(order, "policy"))
            .interceptor(DispatchStage.RESULT_SHAPING, recording(order, "shape 2"))
            .interceptor(DispatchStage.TELEMETRY, recording(order, "telemetry"))
            .build();

    staged.dispatch(main(), ToolCall.of("add", "{\"a\": 2, \"b\": 3}"));

    assertThat(order).containsExactly("telemetry", "policy", "shape 1", "shape 2", "scan");
  }

  private static ToolInterceptor recording(List<String> order, String name) {
    return chain -> {
      synchronized (order) {
        order.add(name);
      }
      return chain.proceed(chain.call());
    };
  }

  @Test
  void interceptorThatReturnsNullIsNamedAsTheCulprit() {
    registerAdd();
    ToolInterceptor nothing =
        new ToolInterceptor() {
          @Override
          public ToolResult intercept(Chain chain) {
            chain.proceed(chain.call());
            return null;
          }
        };
    ToolDispatcher broken =
        ToolDispatcher.builder().interceptor(DispatchStage.POLICY, nothing).build();

    ToolError error = error(broken.dispatch(main(), ToolCall.of("add", "{\"a\": 2, \"b\": 3}")));

    assertThat(error.code()).isEqualTo(ErrorCode.EXECUTION_FAILED);
    assertThat(error.detail())
        .contains("interceptor " + nothing.getClass().getName() + " returned null");
  }

  @Test
  void closestNamesRankByBigramSimilarityThenName() {
    assertThat(ToolDispatcher.closestNames("fiel", List.of("shell", "fill", "exec", "file"), 2))
        .containsExactly("file", "fill");
    assertThat(ToolDispatcher.closestNames("search_web", List.of("exec", "web_search"), 1))
        .containsExactly("web_search");
  }
}
