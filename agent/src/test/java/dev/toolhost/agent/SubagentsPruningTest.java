package dev.toolhost.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.agent.Subagents.Finished;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Which finished subagent runs are forgotten, by session and in all. */
class SubagentsPruningTest {

  @Test
  void eachSessionKeepsTheRunsThatFinishedLast() {
    List<Finished> finished =
        List.of(
            new Finished("sub-1", "a", 1),
            new Finished("sub-2", "a", 4),
            new Finished("sub-3", "b", 2),
            new Finished("sub-4", "a", 3));

    assertThat(Subagents.forgotten(finished, 2, 100)).containsExactly("sub-1");
  }

  @Test
  void pastTheOverallLimitTheRunsThatFinishedLongestAgoGoWhateverTheirSession() {
    List<Finished> finished =
        List.of(
            new Finished("sub-1", "a", 1),
            new Finished("sub-2", "b", 2),
            new Finished("sub-3", "c", 3),
            new Finished("sub-4", "d", 4),
            new Finished("sub-5", "a", 5));

    assertThat(Subagents.forgotten(finished, 16, 3)).containsExactlyInAnyOrder("sub-1", "sub-2");
  }

  @Test
  void runsForgottenForTheirSessionDoNotCountAgainstTheOverallLimit() {
    List<Finished> finished =
        List.of(
            new Finished("sub-1", "a", 1),
            new Finished("sub-2", "a", 2),
            new Finished("sub-3", "a", 3),
            new Finished("sub-4", "b", 4));

    assertThat(Subagents.forgotten(finished, 1, 2)).containsExactlyInAnyOrder("sub-1", "sub-2");
  }

  @Test
  void withinBothLimitsNothingIsForgotten() {
    assertThat(
            Subagents.forgotten(
                List.of(new Finished("sub-1", "a", 1), new Finished("sub-2", "b", 2)), 16, 1024))
        .isEmpty();
  }
}
