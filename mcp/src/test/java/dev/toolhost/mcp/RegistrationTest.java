package dev.toolhost.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import java.net.InetAddress;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Which servers a model may register at run time, and where it may point the host. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RegistrationTest {

  private final ToolRegistry registry = new ToolRegistry();
  private final ToolDispatcher dispatcher = ToolDispatcher.create();
  private McpBridge bridge;

  @AfterEach
  void stop() {
    if (bridge != null) {
      bridge.close();
    }
  }

  private void start(RegistrationPolicy policy) {
    bridge = McpBridge.builder(registry).registration(policy).build();
    registry.registerAll(bridge.managementTools(dispatcher));
  }

  private ToolResult register(String command) {
    return dispatcher.dispatch(
        ToolSet.of(registry, ToolProfiles.MAIN),
        ToolCall.of(
            "mcp_register_server",
            "{\"server_name\": \"added\", \"command\": \"" + command + "\"}"));
  }

  private static void assertRefused(ToolResult result, String saying) {
    assertThat(result).isInstanceOf(ToolResult.Failure.class);
    assertThat(((ToolResult.Failure) result).error().code()).isEqualTo(ErrorCode.INVALID_ARGUMENTS);
    assertThat(result.text()).contains(saying);
  }

  @Test
  void withoutOptingInThereIsNoToolToRegisterOrUnregisterAServer() {
    start(RegistrationPolicy.none());

    assertThat(registry.tools().stream().map(ExecutableTool::name))
        .contains("mcp_list_services", "mcp_get_service_details", "mcp_invoke_tool")
        .doesNotContain("mcp_register_server", "mcp_unregister_server");
    assertThat(register("/bin/sh").text()).contains("does not exist");
    assertThat(McpBridge.builder(registry).build().registration())
        .isEqualTo(RegistrationPolicy.none());
  }

  @Test
  void anHttpOnlyPolicyRefusesToRunACommand() {
    start(new RegistrationPolicy(RegistrationPolicy.Allowed.HTTP, false));

    assertRefused(register("/bin/sh"), "does not let a model start programs");
    assertThat(bridge.servers()).isEmpty();
  }

  @Test
  void loopbackPrivateAndLinkLocalAddressesAreRefused() {
    start(new RegistrationPolicy(RegistrationPolicy.Allowed.HTTP, false));

    for (String url :
        new String[] {
          "http://127.0.0.1:3001/mcp",
          "http://localhost:3001/mcp",
          "http://10.1.2.3/mcp",
          "http://192.168.0.10/mcp",
          "http://172.16.5.5/mcp",
          "http://169.254.169.254/latest/meta-data",
          "http://100.64.0.1/mcp",
          "http://0.0.0.0:3001/mcp",
          "http://[::1]:3001/mcp",
          "http://[fd00::1]/mcp",
          "http://[fe80::1]/mcp",
          "http://[::ffff:127.0.0.1]/mcp"
        }) {
      assertRefused(register(url), "loopback, private or link-local");
    }
    assertThat(bridge.servers()).isEmpty();
  }

  @Test
  void publicAddressesAreNotInternal() throws Exception {
    assertThat(RegistrationPolicy.internal(InetAddress.getByName("8.8.8.8"))).isFalse();
    assertThat(RegistrationPolicy.internal(InetAddress.getByName("2606:4700::1111"))).isFalse();
    assertThat(RegistrationPolicy.internal(InetAddress.getByName("64:ff9b::a00:1"))).isTrue();
  }

  @Test
  void theOperatorMayAllowPrivateAddresses() {
    start(new RegistrationPolicy(RegistrationPolicy.Allowed.HTTP, true));
    int closed = TestProcesses.freePort();

    ToolResult result = register("http://127.0.0.1:" + closed + "/mcp");

    assertThat(result.isError()).as(result.text()).isFalse();
    assertThat(result.text()).contains("registered but not connected yet");
    assertThat(bridge.server("added")).isPresent();
  }

  @Test
  void aRefusedNameOrADuplicateIsTheModelsToFix() {
    start(new RegistrationPolicy(RegistrationPolicy.Allowed.HTTP, true));
    int closed = TestProcesses.freePort();
    String url = "http://127.0.0.1:" + closed + "/mcp";

    assertRefused(
        dispatcher.dispatch(
            ToolSet.of(registry, ToolProfiles.MAIN),
            ToolCall.of(
                "mcp_register_server",
                "{\"server_name\": \"no spaces\", \"command\": \"" + url + "\"}")),
        "is invalid");
    assertThat(register(url).isError()).isFalse();
    assertRefused(register(url), "already registered");
    assertRefused(register("http://exa mple.com/"), "not a valid URL");
  }

  @Test
  void aUrlThatIsNotHttpIsRefusedWithTheReasonAndNothingIsRegistered() {
    start(new RegistrationPolicy(RegistrationPolicy.Allowed.STDIO, true));

    assertRefused(register("file:///etc/passwd"), "'command' is a file: URL");
    assertRefused(register("FTP://example.com/mcp"), "'command' is a ftp: URL");
    assertRefused(
        register("javascript:alert(1)"), "an MCP server is a program to run or an http(s)");
    assertThat(bridge.servers()).isEmpty();
    assertThat(registry.tools().stream().map(ExecutableTool::name))
        .noneMatch(name -> name.startsWith("added"));
  }

  @Test
  void aProgramThatDoesNotExistIsRefusedWithTheReasonAndNothingIsRegistered() {
    start(new RegistrationPolicy(RegistrationPolicy.Allowed.STDIO, false));

    assertRefused(
        register("no-such-mcp-server-" + System.nanoTime()),
        "which is not an executable file on the host's PATH. Nothing was registered");
    assertRefused(register("/nonexistent/bin/mcp-server"), "which is not an executable file.");
    assertRefused(register("/tmp"), "'/tmp', which is not an executable file");
    assertThat(bridge.servers()).isEmpty();
  }

  @Test
  void aProgramOnThePathIsTakenByItsName() {
    start(new RegistrationPolicy(RegistrationPolicy.Allowed.STDIO, false));

    ToolResult result = register("true");

    // true is found and starts, and exits: registered, and not connected.
    assertThat(result.isError()).as(result.text()).isFalse();
    assertThat(bridge.server("added")).isPresent();
  }
}
