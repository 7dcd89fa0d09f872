package dev.toolhost.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.core.ToolResult;
import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.memory.WorkingMemoryExtension;
import dev.toolhost.testing.ScriptedModelServer;
import dev.toolhost.testing.ScriptedReply;
import dev.toolhost.testing.TestHost;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.JsonNode;

/**
 * Configured agents on a started host: each is a tool of its own source that runs against its model
 * and is measured as a GenAI client, and the host ships the agents guide only when it has agents.
 */
@Timeout(60)
class AgentsHostTest {

  private static final List<HostExtension<?>> EXTENSIONS =
      List.of(new WorkingMemoryExtension(), new AgentsExtension());

  private final ScriptedModelServer server = ScriptedModelServer.start();

  @AfterEach
  void close() {
    server.close();
  }

  private TestHost host() {
    return TestHost.start(
        AgentsConfigTest.helper(server.baseUrl().toString(), "readers"), EXTENSIONS);
  }

  @Test
  void aConfiguredAgentIsAToolThatRunsAndIsMeasured() {
    server.enqueue(ScriptedReply.answer("Hello from helper."));
    try (TestHost host = host()) {
      ToolResult invoked = host.call("helper", "{\"message\": \"Hi\"}");

      assertThat(host.toolNames("main")).contains("helper", "spawn_subagent");
      assertThat(host.runtime().registry().specs())
          .filteredOn(spec -> spec.name().equals("helper"))
          .extracting(spec -> spec.source())
          .containsExactly(Agents.SOURCE_PREFIX + "helper");
      assertThat(invoked.isError()).as(invoked.text()).isFalse();
      assertThat(invoked.text()).contains("Hello from helper.");
      JsonNode request = server.takeRequest().json();
      assertThat(request.get("model").asString()).isEqualTo("helper-model");
      assertThat(request.at("/messages/0/content").asString()).isEqualTo("Hi");
      // The scripted answer reports 12 prompt tokens; the host measures them as the GenAI metric.
      String metrics = host.runtime().metricsText();
      assertThat(metrics.lines())
          .anyMatch(
              line ->
                  line.startsWith("gen_ai_client_token_usage_sum{")
                      && line.contains("gen_ai_request_model=\"helper-model\"")
                      && line.contains("gen_ai_token_type=\"input\"")
                      && line.endsWith(" 12.0"));
      assertThat(metrics.lines())
          .anyMatch(
              line ->
                  line.startsWith("gen_ai_client_operation_duration_seconds_count{")
                      && line.contains("gen_ai_request_model=\"helper-model\"")
                      && line.endsWith(" 1"));
    }
  }

  @Test
  void aHostWithAgentsShipsTheAgentsGuideAndOneWithoutDoesNot() {
    try (TestHost host = host();
        TestHost without = TestHost.start("", EXTENSIONS)) {
      ToolResult listed = host.call("list_tool_guides", "{}");
      ToolResult guide = host.call("get_tool_guide", "{\"name\": \"agents\"}");
      ToolResult withoutListed = without.call("list_tool_guides", "{}");

      assertThat(listed.isError()).as(listed.text()).isFalse();
      assertThat(listed.text())
          .contains("- agents: How to hand work to other agents and to subagents");
      assertThat(guide.text())
          .contains("# Agents and subagents")
          .contains("spawn_subagent(task)")
          .contains("search_tools(query)");
      assertThat(withoutListed.isError()).as(withoutListed.text()).isFalse();
      assertThat(withoutListed.text()).contains("- tool-calls:").doesNotContain("- agents:");
    }
  }
}
