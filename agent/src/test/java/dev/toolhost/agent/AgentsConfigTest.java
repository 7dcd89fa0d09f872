package dev.toolhost.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.toolhost.core.spi.ConfigException;
import dev.toolhost.core.spi.ConfigProblems;
import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.core.spi.SectionReading;
import dev.toolhost.host.HostConfig;
import dev.toolhost.mcp.McpExtension;
import dev.toolhost.memory.WorkingMemoryExtension;
import dev.toolhost.testing.ScriptedModelServer;
import dev.toolhost.testing.TestHost;
import java.net.URI;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The {@code agents:} section, read in the host's one reading of the file (here with the working
 * memory and MCP sections beside it): its problems are reported with those of every other section,
 * each at its line.
 */
class AgentsConfigTest {

  private static final String KEYS =
      "api_key_env, base_url, compact_at, context_window, description, enabled, instructions,"
          + " max_steps, max_tool_calls, model, parameters, profile, text_tool_calls, timeout,"
          + " tool_result_turns, tool_search, writes_summaries";

  private static final List<HostExtension<?>> EXTENSIONS =
      List.of(new WorkingMemoryExtension(), new McpExtension(), new AgentsExtension());

  private static HostConfig parse(String yaml) {
    return TestHost.config(yaml, EXTENSIONS, Path.of(""));
  }

  /**
   * The agents of config text, checked with the whole text and read as the extension reads them.
   */
  private static List<AgentDefinition> agents(String yaml) {
    HostConfig config = parse(yaml);
    SectionReading reading =
        new SectionReading(
            ConfigProblems.unplaced(), config.directory(), config.toolProfiles().names());
    AgentsConfig agents =
        new AgentsExtension().read(config.sections().get(AgentsExtension.NAME), reading);
    reading.problems().throwIfAny();
    return agents.agents();
  }

  @Test
  void everyProblemOfTheSectionIsReportedWithItsLineInFileOrder() {
    assertThatThrownBy(
            () ->
                parse(
                    """
                    agents:
                      writer:
                        model: ""
                        base_url: ftp://models.example
                        colour: blue
                      reader:
                        model: small
                        enabled: sometimes
                        max_steps: 0
                        timeout: soon
                        parameters: [query]
                        profile: writers
                      idle:
                    """))
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            """
            toolhost.yaml line 3, column 12: 'agents.writer.model' is empty (expected a model name, such as gpt-4o-mini)
            toolhost.yaml line 4, column 15: 'agents.writer.base_url' is 'ftp://models.example' (expected an http or https URL, such as https://api.openai.com/v1)
            toolhost.yaml line 5, column 5: unknown key 'colour' under 'agents.writer' (expected one of: %s)
            toolhost.yaml line 8, column 14: wrong type for 'agents.reader.enabled': expected true or false, got 'sometimes'
            toolhost.yaml line 9, column 16: wrong value for 'agents.reader.max_steps': expected an integer of 1 or more, got the number 0
            toolhost.yaml line 10, column 14: 'agents.reader.timeout' is 'soon' (expected a positive duration, such as 500ms, 30s, 2m, 1h or PT1M)
            toolhost.yaml line 11, column 17: wrong type for 'agents.reader.parameters': expected a JSON Schema mapping, got a list
            toolhost.yaml line 12, column 14: agent 'reader' names an unknown profile 'writers' (known profiles: main, subagent, scheduled, a2a_synthesis)
            toolhost.yaml line 13, column 3: 'agents.idle' is empty (expected a mapping with keys: %s)\
            """
                .formatted(KEYS, KEYS));
  }

  @Test
  void oneAgentAtMostWritesTheServiceSummaries() {
    assertThatThrownBy(
            () ->
                parse(
                    """
                    agents:
                      first:
                        model: small
                        writes_summaries: true
                      second:
                        model: small
                        writes_summaries: true
                      third:
                        model: small
                        writes_summaries: yes please
                    """))
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            "toolhost.yaml line 10, column 23: wrong type for 'agents.third.writes_summaries':"
                + " expected true or false, got 'yes please'\n"
                + "toolhost.yaml line 7, column 5: only one agent writes the service summaries, but"
                + " first and second both set 'writes_summaries: true'");
  }

  @Test
  void toolSearchIsHowManyToolsOneSearchAdds() {
    List<AgentDefinition> agents =
        agents(
            """
            agents:
              finder:
                model: small
                tool_search: 3
              plain:
                model: small
            """);

    assertThat(agents)
        .extracting(agent -> agent.name() + " " + agent.toolSearch())
        .containsExactly("finder Optional[3]", "plain Optional.empty");
    assertThatThrownBy(
            () ->
                parse(
                    """
                    agents:
                      greedy:
                        model: small
                        tool_search: 50
                      shy:
                        model: small
                        tool_search: 0
                    """))
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            "toolhost.yaml line 4, column 18: 'agents.greedy.tool_search' is 50 (expected how many"
                + " tools one search adds, 1 to 20)\n"
                + "toolhost.yaml line 7, column 18: wrong value for 'agents.shy.tool_search': expected"
                + " an integer of 1 or more, got the number 0");
  }

  @Test
  void agentProblemsAreReportedWithTheProblemsOfEveryOtherSection() {
    assertThatThrownBy(
            () ->
                parse(
                    """
                    http:
                      port: 70000
                    profiles:
                      readers:
                        extends: nobody
                    mcp:
                      connect_timeout: never
                    memory:
                      store: postgres
                    agents:
                      helper:
                        model: small
                        max_tool_calls: many
                        profile: writers
                      scribe:
                        max_steps: 3
                    """))
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            """
            toolhost.yaml line 2, column 9: 'http.port' is 70000, out of range (expected 0 to 65535; 0 picks a free port)
            toolhost.yaml line 5, column 14: profile 'readers' extends 'nobody', which is not a profile (expected one of: main, subagent, scheduled, a2a_synthesis, readers)
            toolhost.yaml line 7, column 20: 'mcp.connect_timeout' is 'never' (expected a positive duration, such as 30s, 2m or 500ms)
            toolhost.yaml line 9, column 10: 'memory.store' is 'postgres' (expected one of: memory, redis)
            toolhost.yaml line 13, column 21: wrong type for 'agents.helper.max_tool_calls': expected an integer, got 'many'
            toolhost.yaml line 14, column 14: agent 'helper' names an unknown profile 'writers' (known profiles: main, subagent, scheduled, a2a_synthesis, readers)
            toolhost.yaml line 15, column 3: agent 'scribe' needs a 'model' (such as gpt-4o-mini)\
            """);
  }

  @Test
  void anAgentNamingAProfileWithAProblemOfItsOwnIsNotRefusedToo() {
    assertThatThrownBy(
            () ->
                parse(
                    """
                    profiles:
                      readers:
                        allow_tools: ['']
                    agents:
                      helper:
                        model: small
                        profile: readers
                    """))
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            "toolhost.yaml line 3, column 19: 'profiles.readers.allow_tools[0]' is empty (expected a"
                + " tool name)");
  }

  @Test
  void aMisspeltModelKeyIsReportedOnce() {
    assertThatThrownBy(() -> parse("agents:\n  helper:\n    modle: small\n"))
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            "toolhost.yaml line 3, column 5: unknown key 'modle' under 'agents.helper' (did you mean 'model'? expected one"
                + " of: "
                + KEYS
                + ")");
  }

  @Test
  void theSectionIsAMappingOfAgentsOrNothing() {
    assertThatThrownBy(() -> parse("agents: [helper]\n"))
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            "toolhost.yaml line 1, column 9: wrong type for 'agents': expected a mapping of agent"
                + " names to agents, got a list");
    assertThat(agents("agents:\n")).isEmpty();
  }

  @Test
  void agentsConfigErrorsNameTheFileLineAndWhatWasExpected() {
    assertThatThrownBy(
            () ->
                agents(
                    """
                    agents:
                      helper:
                        model: m
                        max_steps: zero
                        colour: blue
                    """))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining(
            "toolhost.yaml line 5, column 5: unknown key 'colour' under 'agents.helper'")
        .hasMessageContaining(
            "toolhost.yaml line 4, column 16: wrong type for 'agents.helper.max_steps': expected an"
                + " integer, got 'zero'");
    assertThatThrownBy(() -> agents("agents:\n  helper:\n    profile: main\n"))
        .hasMessageContaining("toolhost.yaml line 2, column 3: agent 'helper' needs a 'model'");
  }

  @Test
  void agentsConfigReadsEveryKey() {
    List<AgentDefinition> agents =
        agents(
            """
            agents:
              research:
                base_url: http://127.0.0.1:1/v1
                api_key_env: MY_KEY
                model: small
                description: Researches.
                instructions: Research well.
                profile: subagent
                enabled: false
                max_steps: 3
                max_tool_calls: 4
                timeout: 30s
                parameters:
                  type: object
                  properties:
                    query: {type: string}
            """);

    var research = agents.getFirst();
    assertThat(research.endpoint().apiKeyEnv()).isEqualTo("MY_KEY");
    assertThat(research.enabled()).isFalse();
    assertThat(research.limits().maxSteps()).isEqualTo(3);
    assertThat(research.limits().timeout()).hasSeconds(30);
    assertThat(research.parameters().orElseThrow().get("properties").has("query")).isTrue();
  }

  @Test
  void anAgentsContextBudgetAndTextToolCallsAreRead() {
    AgentDefinition local =
        agents(
                """
                agents:
                  local:
                    model: qwen2.5:7b
                    context_window: 16384
                    compact_at: 0.6
                    tool_result_turns: 1
                    text_tool_calls: true
                  plain:
                    model: gpt-4o-mini
                """)
            .getFirst();

    assertThat(local.context().window()).hasValue(16_384);
    assertThat(local.context().compactAt()).isEqualTo(0.6);
    assertThat(local.context().toolResultTurns()).isEqualTo(1);
    assertThat(local.textToolCalls()).isTrue();
  }

  @Test
  void aContextBudgetOutOfBoundsIsAConfigErrorAtItsLine() {
    assertThatThrownBy(
            () ->
                parse(
                    """
                    agents:
                      local:
                        model: qwen2.5:7b
                        context_window: 500
                        compact_at: 2
                    """))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining(
            "line 4, column 21: wrong value for 'agents.local.context_window': expected an integer"
                + " of 1024 or more, got the number 500")
        .hasMessageContaining(
            "line 5, column 17: wrong value for 'agents.local.compact_at': expected the share of"
                + " the context window past which the history is compacted, 0.1 to 0.95, got the"
                + " number 2.0");
  }

  @Test
  void anAgentNamingAnUnknownProfileIsAConfigErrorWithFileAndLine() {
    assertThatThrownBy(() -> parse(helper("http://127.0.0.1:9/v1", "writers")))
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            "toolhost.yaml line 10, column 14: agent 'helper' names an unknown profile 'writers'"
                + " (known profiles: main, subagent, scheduled, a2a_synthesis, readers)");
  }

  @Test
  void anAgentMayNameAUserProfileOfTheSameFile() {
    assertThat(agents(helper("http://127.0.0.1:9/v1", "readers")))
        .singleElement()
        .satisfies(a -> assertThat(a.profile()).isEqualTo("readers"));
  }

  /**
   * A file with a user profile, readers, and an agent, helper, at that model server under that
   * profile (line 10).
   */
  static String helper(String baseUrl, String profile) {
    return """
        profiles:
          readers:
            allow_sources: [builtin:guides]
        """
        + ScriptedModelServer.agentSection(
            URI.create(baseUrl),
            "helper",
            "helper-model",
            "description: Answers briefly.",
            "profile: " + profile);
  }
}
