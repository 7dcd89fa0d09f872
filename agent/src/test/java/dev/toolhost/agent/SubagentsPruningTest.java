package dev.toolhost.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Named.named;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import dev.toolhost.agent.Subagents.Finished;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Which finished subagent runs are forgotten, by session and in all. */
class SubagentsPruningTest {

  /** A run of the session that finished at that moment. */
  private static Finished run(int id, String session, long finished) {
    return new Finished("sub-" + id, session, finished);
  }

  /** Each case: the finished runs, how many a session keeps and all keep, and those forgotten. */
  static Stream<Arguments> cases() {
    return Stream.of(
        arguments(
            named(
                "each session keeps the runs that finished last",
                List.of(run(1, "a", 1), run(2, "a", 4), run(3, "b", 2), run(4, "a", 3))),
            2,
            100,
            List.of("sub-1")),
        arguments(
            named(
                "past the overall limit the runs that finished longest ago go, whatever their"
                    + " session",
                List.of(
                    run(1, "a", 1),
                    run(2, "b", 2),
                    run(3, "c", 3),
                    run(4, "d", 4),
                    run(5, "a", 5))),
            16,
            3,
            List.of("sub-1", "sub-2")),
        arguments(
            named(
                "runs forgotten for their session do not count against the overall limit",
                List.of(run(1, "a", 1), run(2, "a", 2), run(3, "a", 3), run(4, "b", 4))),
            1,
            2,
            List.of("sub-1", "sub-2")),
        arguments(
            named(
                "within both limits nothing is forgotten", List.of(run(1, "a", 1), run(2, "b", 2))),
            16,
            1024,
            List.of()));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void theRunsForgottenAreThoseBeyondTheLimits(
      List<Finished> finished, int perSession, int overall, List<String> forgotten) {
    assertThat(Subagents.forgotten(finished, perSession, overall))
        .containsExactlyInAnyOrderElementsOf(forgotten);
  }
}
