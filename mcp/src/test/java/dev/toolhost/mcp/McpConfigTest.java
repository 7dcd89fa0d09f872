package dev.toolhost.mcp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.toolhost.core.spi.ConfigException;
import dev.toolhost.host.HostConfig;
import dev.toolhost.testing.TestHost;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.assertj.core.api.AbstractThrowableAssert;
import org.junit.jupiter.api.Test;

/**
 * The {@code mcp:} section of the config file, read and refused with the MCP extension alone, as
 * {@code toolhost config check} reads it.
 */
class McpConfigTest {

  private static HostConfig parse(String yaml) {
    return TestHost.config(yaml, List.of(new McpExtension()), Path.of(""));
  }

  /** Asserts that the config text is refused, and gives the refusal to check its message. */
  private static AbstractThrowableAssert<?, ? extends Throwable> refused(String yaml) {
    return assertThatThrownBy(() -> parse(yaml)).isInstanceOf(ConfigException.class);
  }

  /** The section as the extension reads it when it starts; none without one. */
  private static McpConfig mcp(HostConfig config) {
    return config.sections().containsKey(McpExtension.NAME)
        ? McpConfig.read(config.section(McpExtension.NAME))
        : McpConfig.none();
  }

  @Test
  void withoutTheSectionThereIsNoBridge() {
    assertThat(mcp(HostConfig.defaults()).enabled()).isFalse();
    assertThat(mcp(parse("http:\n  port: 0\n"))).isEqualTo(McpConfig.none());
  }

  @Test
  void everyKeyIsRead() {
    McpConfig mcp =
        mcp(
            parse(
                """
                mcp:
                  state_dir: state/mcp
                  approved: [everything/echo]
                  connect_timeout: 10s
                  start_timeout: 5s
                  servers:
                    everything:
                      command: npx
                      args: [-y, "@modelcontextprotocol/server-everything", stdio]
                      env: {LOG_LEVEL: debug}
                      prefix: ev_
                      timeout: 2m
                    remote:
                      url: http://127.0.0.1:3001/mcp
                      headers: {Authorization: Bearer abc}
                    legacy:
                      transport: sse
                      url: http://127.0.0.1:3002/sse
                      timeout: 90
                """));

    assertThat(mcp.enabled()).isTrue();
    assertThat(mcp.stateDirectory()).contains(Path.of("state/mcp"));
    assertThat(mcp.approved()).containsExactly("everything/echo");
    assertThat(mcp.connectTimeout()).isEqualTo(Duration.ofSeconds(10));
    assertThat(mcp.startTimeout()).isEqualTo(Duration.ofSeconds(5));
    assertThat(mcp.servers())
        .containsExactly(
            new McpServerConfig(
                "everything",
                new McpServerConfig.Stdio(
                    "npx",
                    List.of("-y", "@modelcontextprotocol/server-everything", "stdio"),
                    Map.of("LOG_LEVEL", "debug")),
                Optional.of("ev_"),
                Duration.ofMinutes(2)),
            new McpServerConfig(
                "remote",
                new McpServerConfig.StreamableHttp(
                    URI.create("http://127.0.0.1:3001/mcp"), Map.of("Authorization", "Bearer abc")),
                Optional.empty(),
                McpServerConfig.DEFAULT_TIMEOUT),
            new McpServerConfig(
                "legacy",
                new McpServerConfig.Sse(URI.create("http://127.0.0.1:3002/sse"), Map.of()),
                Optional.empty(),
                Duration.ofSeconds(90)));
  }

  @Test
  void anEmptySectionStillMeansABridgeWithNoServers() {
    McpConfig mcp = mcp(parse("mcp: {}\n"));

    assertThat(mcp.enabled()).isTrue();
    assertThat(mcp.servers()).isEmpty();
  }

  @Test
  void aCallTimeoutAboveFifteenMinutesIsRefusedWithFileAndLine() {
    refused(
            """
                    mcp:
                      servers:
                        slow:
                          command: slow-server
                          timeout: 20m
                    """)
        .hasMessage(
            "toolhost.yaml line 5, column 16: 'mcp.servers.slow.timeout' is 20m, above the maximum of"
                + " 15 minutes (expected a duration such as 60s, at most 15m)");
  }

  @Test
  void everyProblemOfTheSectionIsReportedWithItsLine() {
    refused(
            """
                    mcp:
                      approved: [echo]
                      connect_timeout: soon
                      servers:
                        both:
                          command: x
                          url: http://localhost/mcp
                        neither:
                          prefix: n_
                        badurl:
                          url: ftp://example.com/mcp
                        wrong:
                          transport: websocket
                          url: http://localhost/mcp
                        Both:
                          command: y
                    """)
        .hasMessageContaining(
            "toolhost.yaml line 2, column 14: 'mcp.approved[0]' is 'echo' (expected SERVER/TOOL")
        .hasMessageContaining(
            "toolhost.yaml line 3, column 20: 'mcp.connect_timeout' is 'soon' (expected a positive"
                + " duration")
        .hasMessageContaining(
            "toolhost.yaml line 7, column 7: set either 'command' (a stdio server) or 'url' (an HTTP"
                + " server) under mcp.servers.both', not both")
        .hasMessageContaining(
            "toolhost.yaml line 8, column 5: 'mcp.servers.neither' has no 'url' (expected the server's"
                + " endpoint")
        .hasMessageContaining(
            "toolhost.yaml line 11, column 12: 'mcp.servers.badurl.url' is 'ftp://example.com/mcp'"
                + " (expected an http or https URL")
        .hasMessageContaining(
            "toolhost.yaml line 13, column 18: 'mcp.servers.wrong.transport' is 'websocket' (expected"
                + " one of: stdio, http, sse)")
        .hasMessageContaining(
            "toolhost.yaml line 15, column 5: MCP server 'Both' is defined twice (server names are"
                + " compared ignoring case)");
  }

  @Test
  void unknownKeysAndWrongTypesNameTheLineAndWhatWasExpected() {
    refused(
            """
                    mcp:
                      servers:
                        everything:
                          comand: npx
                    """)
        .hasMessageStartingWith(
            "toolhost.yaml line 4, column 7: unknown key 'comand' under 'mcp.servers.everything'"
                + " (did you mean 'command'? expected one of: args, command, env, headers, pass_env,"
                + " prefix, timeout,"
                + " transport, url)");
    refused(
            """
                    mcp:
                      servers:
                        everything:
                          command: npx
                          args: [-y, [nested]]
                    """)
        .hasMessage(
            "toolhost.yaml line 5, column 18: wrong type for 'mcp.servers.everything.args[1]':"
                + " expected a string, got a list");
    refused("mcp:\n  servers: [everything]\n")
        .hasMessage(
            "toolhost.yaml line 2, column 12: wrong type for 'mcp.servers': expected a mapping of"
                + " server names to servers, got a list");
  }

  @Test
  void anInvalidServerNameOrPrefixIsRefused() {
    refused(
            """
                    mcp:
                      servers:
                        "no spaces":
                          command: x
                        ok:
                          command: x
                          prefix: "bad prefix"
                    """)
        .hasMessageContaining(
            "toolhost.yaml line 3, column 5: MCP server name 'no spaces' is invalid")
        .hasMessageContaining("toolhost.yaml line 7, column 15: The tool prefix 'bad prefix'");
  }

  @Test
  void aModelMayRegisterServersOnlyWhenTheConfigOptsIn() {
    assertThat(mcp(parse("mcp: {}\n")).registration()).isEqualTo(RegistrationPolicy.none());
    assertThat(McpConfig.none().registration()).isEqualTo(RegistrationPolicy.none());
    assertThat(mcp(parse("mcp:\n  allow_register: stdio\n")).registration())
        .isEqualTo(new RegistrationPolicy(RegistrationPolicy.Allowed.STDIO, false));
    assertThat(
            mcp(parse("mcp:\n  allow_register: http\n  allow_register_private: true\n"))
                .registration())
        .isEqualTo(new RegistrationPolicy(RegistrationPolicy.Allowed.HTTP, true));
    refused("mcp:\n  allow_register: yes please\n")
        .hasMessage(
            "toolhost.yaml line 2, column 19: 'mcp.allow_register' is 'yes please' (expected one of:"
                + " none, http, stdio; stdio lets a model run programs on this host)");
  }

  @Test
  void aStdioServerGetsTheHostVariablesItsConfigPasses() {
    McpConfig mcp =
        mcp(
            parse(
                """
                mcp:
                  servers:
                    github:
                      command: github-mcp-server
                      pass_env: [GITHUB_TOKEN]
                """));

    assertThat(mcp.servers().getFirst().transport())
        .isEqualTo(
            new McpServerConfig.Stdio(
                "github-mcp-server", List.of(), Map.of(), List.of("GITHUB_TOKEN")));
    refused(
            """
                    mcp:
                      servers:
                        github:
                          command: github-mcp-server
                          pass_env: [GITHUB_TOKEN, "not a name"]
                        remote:
                          url: http://127.0.0.1:3001/mcp
                          pass_env: [X]
                    """)
        .hasMessageContaining(
            "toolhost.yaml line 5, column 32: 'mcp.servers.github.pass_env[1]' is 'not a name'"
                + " (expected the name of an environment variable of the host")
        .hasMessageContaining(
            "toolhost.yaml line 8, column 7: 'mcp.servers.remote.pass_env' applies only to a stdio"
                + " server");
  }
}
