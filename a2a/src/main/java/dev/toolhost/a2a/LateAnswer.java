package dev.toolhost.a2a;

import dev.toolhost.memory.WorkingMemory;
import java.util.Objects;

/**
 * A late answer is the result of an {@code invoke_agent} call that outlasted its wait: it is stored
 * in working memory under the calling session and announced to that session's agent loop.
 *
 * @param sessionId the session that called
 * @param agentName the remote agent
 * @param taskId the remote task
 * @param key the working-memory key that holds the result
 * @param state how the task ended (or that it waits for input)
 * @param text the result's text
 */
public record LateAnswer(
    String sessionId, String agentName, String taskId, String key, TaskState state, String text) {

  public LateAnswer {
    Objects.requireNonNull(sessionId, "sessionId");
    Objects.requireNonNull(agentName, "agentName");
    Objects.requireNonNull(taskId, "taskId");
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(state, "state");
    Objects.requireNonNull(text, "text");
  }

  /** The working-memory key of a late answer: {@code session/{sid}/a2a/{agent}/{task}/result}. */
  public static String key(String sessionId, String agentName, String taskId) {
    return WorkingMemory.sessionNamespace(sessionId)
        + "/a2a/"
        + agentName
        + "/"
        + taskId
        + "/result";
  }

  /** The notice the calling agent loop reads on its next turn. */
  public String notice() {
    return "[a2a] Agent '"
        + agentName
        + "' answered task "
        + taskId
        + " ("
        + state.shown()
        + "); the result is in working memory at '"
        + key
        + "':\n"
        + text;
  }
}
