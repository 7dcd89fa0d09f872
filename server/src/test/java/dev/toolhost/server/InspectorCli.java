package dev.toolhost.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.mcp.NpmPackages;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** The MCP Inspector CLI from the npm registry, run against a URL over Streamable HTTP. */
final class InspectorCli {

  private InspectorCli() {}

  /** Runs one Inspector CLI request and returns its output, asserting that it succeeded. */
  static String run(String url, String... arguments) throws Exception {
    List<String> command =
        new ArrayList<>(
            List.of(NpmPackages.bin("mcp-inspector"), "--cli", url, "--transport", "http"));
    command.addAll(List.of(arguments));
    Process inspector = new ProcessBuilder(command).redirectErrorStream(true).start();
    String output = new String(inspector.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(inspector.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(inspector.exitValue()).as(output).isZero();
    return output;
  }
}
