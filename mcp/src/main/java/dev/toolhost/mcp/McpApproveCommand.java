package dev.toolhost.mcp;

import dev.toolhost.core.spi.CommandContext;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * The mcp-approve command approves the changed definition of a quarantined MCP tool: it pins the
 * pending definition in {@code mcp-pins.json} under the config's {@code mcp.state_dir}.
 *
 * <p>It writes the file only; a running host re-reads it at the server's next listing (on its
 * {@code tools/list_changed}, a reconnect, or a restart) and registers the tool then. Exit codes: 0
 * approved; 1 nothing of that name awaits approval (the pending ones are listed); 2 bad usage or a
 * config without a state directory.
 */
@Command(
    name = "mcp-approve",
    mixinStandardHelpOptions = true,
    description =
        "Approves the changed definition of a quarantined MCP tool, pinning it in the config's"
            + " mcp.state_dir.")
final class McpApproveCommand implements Callable<Integer> {

  private final CommandContext context;

  @Spec private CommandSpec spec;

  @Parameters(index = "0", paramLabel = "SERVER", description = "The MCP server's name.")
  private String server;

  @Parameters(index = "1", paramLabel = "TOOL", description = "The server's name for the tool.")
  private String tool;

  McpApproveCommand(CommandContext context) {
    this.context = context;
  }

  @Override
  public Integer call() {
    McpConfig mcp = context.section(new McpExtension()).orElseGet(McpConfig::none);
    if (mcp.stateDirectory().isEmpty()) {
      spec.commandLine()
          .getErr()
          .println(
              "The config sets no mcp.state_dir, so definition pins live in memory only and"
                  + " there is nothing to approve: pass --config with the host's config file.");
      return CommandLine.ExitCode.USAGE;
    }
    Path directory = mcp.stateDirectory().get();
    DefinitionPins pins = DefinitionPins.inDirectory(directory, Set.of());
    if (pins.approve(server, tool)) {
      spec.commandLine()
          .getOut()
          .println(
              "Approved the changed definition of tool '"
                  + tool
                  + "' of MCP server '"
                  + server
                  + "' in "
                  + pins.file().orElseThrow()
                  + "; a running host registers it at the server's next listing.");
      return CommandLine.ExitCode.OK;
    }
    Set<String> pending = new TreeSet<>(pins.pending());
    spec.commandLine()
        .getErr()
        .println(
            "No changed definition of tool '"
                + tool
                + "' of MCP server '"
                + server
                + "' awaits approval in "
                + pins.file().orElseThrow()
                + ". "
                + (pending.isEmpty()
                    ? "No tool awaits approval."
                    : "Awaiting approval (SERVER/TOOL): " + String.join(", ", pending) + "."));
    return CommandLine.ExitCode.SOFTWARE;
  }
}
