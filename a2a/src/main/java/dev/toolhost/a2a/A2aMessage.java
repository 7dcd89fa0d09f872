package dev.toolhost.a2a;

import java.util.Objects;
import java.util.Optional;
import java.util.UUID;

/**
 * An A2A message is one turn of an exchange between a client and an agent, reduced to what Toolhost
 * reads and writes: its text (text parts joined; data and file parts written as text), its role and
 * the task and context it belongs to.
 *
 * @param messageId the message's id
 * @param fromAgent whether the agent sent it (role {@code agent}) rather than the user
 * @param text its text
 * @param taskId the task it continues, if any
 * @param contextId the context it belongs to, if any
 */
public record A2aMessage(
    String messageId,
    boolean fromAgent,
    String text,
    Optional<String> taskId,
    Optional<String> contextId) {

  public A2aMessage {
    Objects.requireNonNull(messageId, "messageId");
    Objects.requireNonNull(text, "text");
    Objects.requireNonNull(taskId, "taskId");
    Objects.requireNonNull(contextId, "contextId");
  }

  /** A user's message with a fresh id, in no task or context yet. */
  public static A2aMessage user(String text) {
    return new A2aMessage(
        UUID.randomUUID().toString(), false, text, Optional.empty(), Optional.empty());
  }

  /** An agent's message with a fresh id in the given task and context. */
  public static A2aMessage agent(String text, String taskId, String contextId) {
    return new A2aMessage(
        UUID.randomUUID().toString(), true, text, Optional.of(taskId), Optional.of(contextId));
  }

  /** This message in the given task and context. */
  public A2aMessage in(Optional<String> task, Optional<String> context) {
    return new A2aMessage(messageId, fromAgent, text, task, context);
  }
}
