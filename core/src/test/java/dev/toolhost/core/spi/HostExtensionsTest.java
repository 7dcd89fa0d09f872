package dev.toolhost.core.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class HostExtensionsTest {

  private final List<String> events = new ArrayList<>();

  /** An extension that records what happens to it, and fails to start when told to. */
  private HostExtension recording(String name, boolean failsToStart) {
    return new HostExtension() {
      @Override
      public String name() {
        return name;
      }

      @Override
      public void start(HostContext host) throws Exception {
        if (failsToStart) {
          events.add("failed " + name);
          throw new IllegalStateException("the disk is full");
        }
        events.add("started " + name);
      }

      @Override
      public void ready(ReadyHost host) {
        events.add("ready " + name);
      }

      @Override
      public void close() {
        events.add("closed " + name);
      }
    };
  }

  @Test
  void extensionsStartInOrderAndCloseInReverse() {
    HostExtensions extensions =
        HostExtensions.of(
            List.of(recording("a", false), recording("b", false), recording("c", false)));

    extensions.start(extension -> null);
    extensions.ready(null);
    extensions.close();
    extensions.close();

    assertThat(events)
        .containsExactly(
            "started a",
            "started b",
            "started c",
            "ready a",
            "ready b",
            "ready c",
            "closed c",
            "closed b",
            "closed a");
  }

  @Test
  void whenTheThirdFailsToStartTheFirstTwoAreClosedInReverseAndItsFailureIsNamed() {
    HostExtensions extensions =
        HostExtensions.of(
            List.of(
                recording("first", false),
                recording("second", false),
                recording("third", true),
                recording("fourth", false)));

    assertThatThrownBy(() -> extensions.start(extension -> null))
        .isInstanceOf(HostExtensionException.class)
        .hasMessage("Host extension 'third' failed to start: the disk is full")
        .hasCauseInstanceOf(IllegalStateException.class);
    extensions.close();

    assertThat(events)
        .containsExactly(
            "started first", "started second", "failed third", "closed second", "closed first");
  }

  @Test
  void twoExtensionsMayNotShareAName() {
    assertThatThrownBy(
            () -> HostExtensions.of(List.of(recording("web", false), recording("web", false))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'web'");
  }
}
