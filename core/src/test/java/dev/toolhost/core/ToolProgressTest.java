package dev.toolhost.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.opentelemetry.context.Scope;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

class ToolProgressTest {

  /** A tool that reports three steps; isolated, so it runs on a thread of its own. */
  public static final class Steps {
    final List<String> threads = new CopyOnWriteArrayList<>();

    @Tool(description = "Works in three steps.")
    public String work() {
      threads.add(Thread.currentThread().getName());
      for (int step = 1; step <= 3; step++) {
        ToolProgress.report(step, Optional.of(3.0), Optional.of("step " + step));
      }
      return "done";
    }
  }

  private final Steps steps = new Steps();
  private final ToolDispatcher dispatcher = ToolDispatcher.create();
  private final ToolSet tools;

  ToolProgressTest() {
    ToolRegistry registry = new ToolRegistry();
    registry.registerAll(MethodTools.of(steps, "builtin:test"));
    tools = ToolSet.of(registry, ToolProfiles.MAIN);
  }

  @Test
  void aToolsReportsReachTheCallersListenerAcrossTheThreadHop() {
    List<String> heard = new CopyOnWriteArrayList<>();
    String caller = Thread.currentThread().getName();

    ToolResult result;
    try (Scope ignored =
        ToolProgress.listen(
            (progress, total, message) ->
                heard.add(progress + "/" + total.orElseThrow() + " " + message.orElseThrow()))) {
      result = dispatcher.dispatch(tools, ToolCall.of("work", "{}"));
    }

    assertThat(result.text()).isEqualTo("done");
    assertThat(steps.threads).singleElement().isNotEqualTo(caller);
    assertThat(heard).containsExactly("1.0/3.0 step 1", "2.0/3.0 step 2", "3.0/3.0 step 3");
  }

  @Test
  void withoutAListenerReportsGoNowhereAndTheListenerEndsWithItsScope() {
    List<String> heard = new CopyOnWriteArrayList<>();
    try (Scope ignored = ToolProgress.listen((progress, total, message) -> heard.add("heard"))) {
      assertThat(ToolProgress.current()).isPresent();
    }

    ToolResult result = dispatcher.dispatch(tools, ToolCall.of("work", "{}"));

    assertThat(result.text()).isEqualTo("done");
    assertThat(ToolProgress.current()).isEmpty();
    assertThat(heard).isEmpty();
  }
}
