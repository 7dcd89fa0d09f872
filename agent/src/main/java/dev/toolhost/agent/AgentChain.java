package dev.toolhost.agent;

import io.opentelemetry.context.Context;
import io.opentelemetry.context.ContextKey;
import java.util.ArrayList;
import java.util.List;

/**
 * The agent chain is the agents a run was reached through, outermost first: a conversation with
 * {@code assistant} that calls the agent {@code research} as a tool runs {@code research} under the
 * chain {@code [assistant, research]}. An agent called as a tool refuses a chain that already holds
 * it (agents calling each other in a cycle) or that would grow past the host's depth.
 *
 * <p>It rides on the OpenTelemetry {@link Context}, which the agent loop and the dispatch path
 * already carry to every thread a run and its tool calls use.
 */
final class AgentChain {

  private static final ContextKey<List<String>> KEY = ContextKey.named("toolhost.agent.chain");

  private AgentChain() {}

  /** The chain of the run this thread works for; empty outside any agent run. */
  static List<String> current() {
    List<String> chain = Context.current().get(KEY);
    return chain == null ? List.of() : chain;
  }

  /** The context with the named agent at the end of its chain. */
  static Context with(Context context, String agent) {
    List<String> chain = context.get(KEY);
    List<String> longer = new ArrayList<>(chain == null ? List.of() : chain);
    longer.add(agent);
    return context.with(KEY, List.copyOf(longer));
  }
}
