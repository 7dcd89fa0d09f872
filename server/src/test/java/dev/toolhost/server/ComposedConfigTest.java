package dev.toolhost.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.toolhost.core.spi.ConfigException;
import dev.toolhost.host.HostConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The config file of a host composed of every extension on the class path, as the {@code toolhost}
 * command reads it: the top level knows each extension's section, and names them all, every
 * section's problems are reported together in file order, and an extension's profile rule reaches
 * the user profiles that extend a built-in one. (The host's own sections: the host module's {@code
 * HostConfigTest}.)
 */
class ComposedConfigTest {

  @TempDir Path dir;

  @Test
  void anExtensionsProfileRuleReachesTheProfilesThatExtendTheBuiltInOne() {
    HostConfig config =
        HostConfig.parse(
            """
            profiles:
              reviewer:
                extends: subagent
              strict_reviewer:
                extends: reviewer
            """,
            "config.yaml");

    // What the subagent profile denies by the MCP extension's rule, the profiles extending it deny.
    try (Host host = new Host(config)) {
      assertThat(host.profiles().get("reviewer").allows("mcp_register_server", "mcp:management"))
          .isFalse();
      assertThat(
              host.profiles()
                  .get("strict_reviewer")
                  .allows("mcp_unregister_server", "mcp:management"))
          .isFalse();
    }
  }

  @Test
  void aListAtTheTopIsRefused() {
    assertThatThrownBy(() -> HostConfig.parse("- http\n", "config.yaml"))
        .hasMessage(
            "config.yaml line 1, column 1: expected a mapping of keys at the top level (one of:"
                + " a2a, agents, audit, auth, browser, builtins, conversations, exec, http, long_term_memory, mcp, memory, openrouter, profiles, scheduling, secrets, telemetry, tool_services, web), got a list");
  }

  @Test
  void unknownTopLevelKeyIsRefusedWithItsLine() {
    assertThatThrownBy(() -> HostConfig.parse("htp:\n  port: 1\n", "config.yaml"))
        .hasMessage(
            "config.yaml line 1, column 1: unknown key 'htp' at the top level (did you mean 'http'? expected one of:"
                + " a2a, agents, audit, auth, browser, builtins, conversations, exec, http, long_term_memory, mcp, memory, openrouter, profiles, scheduling, secrets, telemetry, tool_services, web)");
  }

  @Test
  void toolServiceProblemsAreReportedWithTheProblemsOfEveryOtherSection() throws Exception {
    // The host's own section, two extensions' sections and a descriptor file, in file order.
    Files.writeString(
        dir.resolve("bad.json"),
        "{\n  \"tool\": [\n    {\"type\": \"tool-service\", \"service\": \"x\"}\n  ]\n}\n");
    Path config = dir.resolve("toolhost.yaml");
    Files.writeString(
        config,
        """
        http:
          port: -1
        memory:
          store: postgres
        tool_services:
          tool: {}
          services:
            custom-rag: {topic: custom-rag-request}
          tools:
            query-customers:
              type: tool-service
              description: Query the customer knowledge base
              service: custom-rug
          files: [bad.json, gone.json, 7]
        agents:
          helper:
            model: small
            profile: writers
        """);
    String gone = dir.resolve("gone.json").toString();
    String expected =
        """
        %1$s line 2, column 9: 'http.port' is -1, out of range (expected 0 to 65535; 0 picks a free port)
        %1$s line 4, column 10: 'memory.store' is 'postgres' (expected one of: memory, redis)
        %1$s line 6, column 3: unknown key 'tool' under 'tool_services' (did you mean 'tools'? expected one of: files, services, tools)
        %2$s line 3, column 5: a tool descriptor has no 'name'
        %1$s line 14, column 21: 'tool_services.files[1]' is 'gone.json' (expected a JSON file or a directory of them; there is none at %3$s)
        %1$s line 14, column 32: wrong type for 'tool_services.files[2]': expected a path to a JSON file or a directory, got the number 7
        %1$s line 10, column 5: tool 'query-customers' references unknown service 'custom-rug' (known: custom-rag)
        %1$s line 18, column 14: agent 'helper' names an unknown profile 'writers' (known profiles: main, subagent, scheduled, a2a_synthesis)\
        """
            .formatted(config, dir.resolve("bad.json"), gone);

    assertThatThrownBy(() -> HostConfig.load(config))
        .isInstanceOf(ConfigException.class)
        .hasMessage(expected);
    assertThatThrownBy(() -> Sections.toolServices(config))
        .isInstanceOf(ConfigException.class)
        .hasMessage(expected);
  }
}
