package dev.toolhost.agent;

import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.memory.WorkingMemoryExtension;
import dev.toolhost.testing.HostExtensionContract;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The agents extension keeps the host extension contract with two agents (whose models are never
 * called here) beside the working memory their whiteboard needs: off until configured, then the
 * agents' tools, the whiteboard and wisps, the turns route, and its rules (a subagent spawns no
 * wisps; synthesising an outside agent's answer writes nothing and spawns nothing).
 */
class AgentsExtensionContractTest extends HostExtensionContract<AgentsConfig> {

  @Override
  protected HostExtension<AgentsConfig> extension() {
    return new AgentsExtension();
  }

  @Override
  protected List<HostExtension<?>> companions() {
    return List.of(new WorkingMemoryExtension());
  }

  @Override
  protected Map<String, String> environment() {
    return Map.of("CONTRACT_MODEL_KEY", "sk-contract");
  }

  @Override
  protected Optional<String> validSection() {
    return Optional.of(
        """
        assistant:
          base_url: http://127.0.0.1:9/v1
          api_key_env: CONTRACT_MODEL_KEY
          model: scripted
          instructions: You are a helpful assistant.
        research:
          base_url: http://127.0.0.1:9/v1
          api_key_env: CONTRACT_MODEL_KEY
          model: scripted
          description: Researches a question.
          profile: subagent
        """);
  }

  @Override
  protected Optional<Misspelling> misspelling() {
    return Optional.of(
        new Misspelling(
            """
            assistant:
              model: scripted
              max_step: 10
            """,
            3,
            3,
            "max_step"));
  }

  @Override
  protected Set<String> configuredTools() {
    return Set.of(
        "assistant",
        "research",
        "spawn_subagent",
        "list_subagents",
        "cancel_subagent",
        "spawn_wisps",
        "whiteboard_read",
        "whiteboard_write",
        "whiteboard_clear");
  }

  @Override
  protected List<String> routes() {
    return List.of(
        "POST " + TurnsRoute.PATH,
        "GET " + TurnsRoute.SESSION_PATH,
        "GET " + TurnsRoute.EVENTS_PATH);
  }

  /**
   * Helpers and tasks ask the agents and share the board, tasks run batches; synthesis reads the
   * board only; no restricted profile spawns subagents.
   */
  @Override
  protected Map<String, Set<String>> grantedTools() {
    Set<String> board = Set.of("whiteboard_read", "whiteboard_write", "whiteboard_clear");
    Set<String> helper = new java.util.HashSet<>(board);
    helper.addAll(Set.of("assistant", "research"));
    Set<String> task = new java.util.HashSet<>(helper);
    task.add("spawn_wisps");
    return Map.of(
        "subagent", helper, "scheduled", task, "a2a_synthesis", Set.of("whiteboard_read"));
  }
}
