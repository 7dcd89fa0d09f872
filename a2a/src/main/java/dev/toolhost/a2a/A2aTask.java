package dev.toolhost.a2a;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * An A2A task is the state of one piece of work an agent does: its id and context, its state with
 * the agent's status message, and the artifacts it produced, reduced to text.
 *
 * @param id the task's id
 * @param contextId the context it belongs to
 * @param state where it stands
 * @param status the agent's message with the state (a question when input is required), if any
 * @param artifacts what it produced
 */
public record A2aTask(
    String id,
    String contextId,
    TaskState state,
    Optional<A2aMessage> status,
    List<Artifact> artifacts) {

  public A2aTask {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(contextId, "contextId");
    Objects.requireNonNull(state, "state");
    Objects.requireNonNull(status, "status");
    artifacts = List.copyOf(artifacts);
  }

  /**
   * One artifact of a task, its parts joined as text.
   *
   * @param artifactId its id
   * @param name its name, empty when it has none
   * @param text its parts as text
   */
  public record Artifact(String artifactId, String name, String text) {
    public Artifact {
      Objects.requireNonNull(artifactId, "artifactId");
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(text, "text");
    }
  }

  /** This task in another state, with the given status message. */
  public A2aTask with(TaskState newState, Optional<A2aMessage> message) {
    return new A2aTask(id, contextId, newState, message, artifacts);
  }

  /** This task with an artifact added. */
  public A2aTask withArtifact(Artifact artifact) {
    List<Artifact> all = new java.util.ArrayList<>(artifacts);
    all.add(artifact);
    return new A2aTask(id, contextId, state, status, all);
  }

  /** The text the task answered: its artifacts' text, else its status message's. */
  public String text() {
    if (!artifacts.isEmpty()) {
      StringBuilder text = new StringBuilder();
      for (Artifact artifact : artifacts) {
        if (!text.isEmpty()) {
          text.append("\n\n");
        }
        text.append(artifact.text());
      }
      return text.toString();
    }
    return status.map(A2aMessage::text).orElse("");
  }
}
