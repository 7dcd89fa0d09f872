package dev.toolhost.a2a;

import java.util.Objects;

/**
 * An A2A event is one item of a stream ({@code message/stream}, {@code SendStreamingMessage}): the
 * task as it stands, a change of its status, an artifact, or a message that ends the stream.
 */
public sealed interface A2aEvent {

  /** Whether the stream ends after this event. */
  boolean last();

  /** The task whole. */
  record TaskSnapshot(A2aTask task) implements A2aEvent {
    public TaskSnapshot {
      Objects.requireNonNull(task, "task");
    }

    @Override
    public boolean last() {
      return task.state().terminal() || task.state().interrupted();
    }
  }

  /** A change of the task's state, with the agent's message. */
  record StatusUpdate(A2aTask task, boolean isFinal) implements A2aEvent {
    public StatusUpdate {
      Objects.requireNonNull(task, "task");
    }

    @Override
    public boolean last() {
      return isFinal || task.state().terminal() || task.state().interrupted();
    }
  }

  /** An artifact the task produced; the task holds the artifacts so far, this one included. */
  record ArtifactUpdate(A2aTask task, A2aTask.Artifact artifact) implements A2aEvent {
    public ArtifactUpdate {
      Objects.requireNonNull(task, "task");
      Objects.requireNonNull(artifact, "artifact");
    }

    @Override
    public boolean last() {
      return false;
    }
  }

  /** A message that answers the request without a task. */
  record Reply(A2aMessage message) implements A2aEvent {
    public Reply {
      Objects.requireNonNull(message, "message");
    }

    @Override
    public boolean last() {
      return true;
    }
  }
}
