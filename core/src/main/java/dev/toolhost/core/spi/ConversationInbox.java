package dev.toolhost.core.spi;

import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * A conversation inbox is where work done for a conversation outside its turns reports back: a
 * scheduled task's fire, whose result belongs in the conversation that scheduled it. The agents
 * extension provides it over the conversations of its conversation API; a capability that reports
 * {@linkplain HostExtension#uses uses} it.
 *
 * <p>A delivery is a tool's output, never the user's words: the conversation shows it to its model
 * marked as such, at its next turn, and pushes it to the clients following the conversation live.
 * Thread-safe; never waits on a client.
 */
public interface ConversationInbox {

  /**
   * Delivers a task's result to the conversation of that session, when the host keeps one and it is
   * the user's.
   *
   * @return whether a conversation took it; false when none of that user has that session (it was
   *     forgotten, or never was)
   */
  boolean deliver(Delivery delivery);

  /**
   * A delivery is one result of work a conversation asked for.
   *
   * @param user the user the conversation must be made as; empty for the host's default user
   * @param session the session id the conversation's tool calls carry
   * @param task the name of the scheduled task that ran
   * @param ran when it ran (the fire's due instant)
   * @param succeeded whether it succeeded
   * @param result its final text, or its error
   */
  record Delivery(
      Optional<String> user,
      String session,
      String task,
      Instant ran,
      boolean succeeded,
      String result) {
    public Delivery {
      Objects.requireNonNull(user, "user");
      Objects.requireNonNull(session, "session");
      Objects.requireNonNull(task, "task");
      Objects.requireNonNull(ran, "ran");
      Objects.requireNonNull(result, "result");
    }
  }
}
