package dev.toolhost.longterm;

import java.util.Objects;
import java.util.Optional;

/**
 * An owner is whose memories a call saves and sees: a user, and the configured agent whose run made
 * the call, when one did.
 *
 * <p>A memory saved with an agent is that agent's: other agents of the same user do not see it. A
 * memory saved with no agent (by the user's own client over MCP or HTTP, or by any agent when the
 * config shares memories across agents) is the user's, and every agent of the user sees it. No
 * owner ever sees another user's memories.
 *
 * @param user the user
 * @param agent the agent, when the memories are kept per agent and an agent's run made the call
 */
public record Owner(String user, Optional<String> agent) {

  public Owner {
    Objects.requireNonNull(user, "user");
    Objects.requireNonNull(agent, "agent");
  }

  /** The user's own memories, those no single agent keeps. */
  public static Owner of(String user) {
    return new Owner(user, Optional.empty());
  }

  /** The given agent's memories of the user, besides the user's own. */
  public static Owner of(String user, String agent) {
    return new Owner(user, Optional.of(agent));
  }

  /** Whether this owner sees the memory: the user's, kept by no agent or by this owner's agent. */
  public boolean sees(Memory memory) {
    return memory.user().equals(user) && (memory.agent().isEmpty() || memory.agent().equals(agent));
  }
}
