package dev.toolhost.benchmarks;

import dev.toolhost.agent.Agent;
import dev.toolhost.agent.AgentDefinition;
import dev.toolhost.agent.Conversation;
import dev.toolhost.agent.ModelClient;
import dev.toolhost.agent.ModelEndpoint;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolGuides;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolSet;
import dev.toolhost.testing.RecordedRequest;
import dev.toolhost.testing.ScriptedModelServer;
import dev.toolhost.testing.ScriptedReply;
import java.util.Map;
import java.util.function.Function;

/**
 * A bench agent is the agent the turn benchmarks run: named {@code bench}, told to be brief, with
 * the tool guides in its registry, talking to a scripted model server that answers at once.
 *
 * @param server the scripted model server
 * @param client the agent's model client
 * @param agent the agent
 * @param registry its tools
 */
record BenchAgent(
    ScriptedModelServer server, ModelClient client, Agent agent, ToolRegistry registry)
    implements AutoCloseable {

  /** Starts the server, answering with the script, and the agent that talks to it. */
  static BenchAgent start(Function<RecordedRequest, ScriptedReply> script) {
    ScriptedModelServer server = ScriptedModelServer.start();
    server.respondWith(script);
    ToolRegistry registry = new ToolRegistry();
    registry.registerAll(new ToolGuides().tools());
    ModelClient client =
        ModelClient.builder(new ModelEndpoint(server.baseUrl(), "bench", "NO_KEY"))
            .environment(Map.of())
            .build();
    Agent agent =
        new Agent(
            AgentDefinition.of("bench", client.endpoint()).withInstructions("Be brief."),
            client,
            ToolDispatcher.create());
    return new BenchAgent(server, client, agent, registry);
  }

  /** A fresh conversation that sees the registry's tools of the main profile. */
  Conversation conversation() {
    return Conversation.of("bench", ToolSet.of(registry, ToolProfiles.MAIN));
  }

  @Override
  public void close() {
    client.close();
    server.close();
  }
}
