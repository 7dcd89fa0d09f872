package dev.toolhost.mcp;

import dev.toolhost.core.ToolSet;
import dev.toolhost.core.spi.CommandContext;
import dev.toolhost.core.spi.RunningHost;
import dev.toolhost.core.spi.Signals;
import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * The mcp command serves one profile's tools as an MCP server over stdio, so that desktop MCP
 * clients can launch Toolhost; it runs until standard input closes or the process is stopped.
 * Standard output carries MCP messages only; logs go to standard error.
 */
@Command(
    name = "mcp",
    mixinStandardHelpOptions = true,
    description = "Serves a profile's tools as an MCP server over stdio (for desktop MCP clients).")
final class McpCommand implements Callable<Integer> {

  private final CommandContext context;

  @Spec private CommandSpec spec;

  @Option(
      names = "--profile",
      paramLabel = "P",
      defaultValue = "main",
      description = "The profile whose tools to serve (default: ${DEFAULT-VALUE}).")
  private String profile;

  McpCommand(CommandContext context) {
    this.context = context;
  }

  @Override
  public Integer call() throws InterruptedException {
    try (RunningHost host = context.open()) {
      Optional<ToolSet> found = host.toolSet(profile, spec.commandLine().getErr());
      if (found.isEmpty()) {
        return CommandLine.ExitCode.USAGE;
      }
      ToolSet tools = found.get();
      CountDownLatch stdinClosed = new CountDownLatch(1);
      FileInputStream in =
          new FileInputStream(FileDescriptor.in) {
            @Override
            public int read(byte[] buffer, int offset, int length) throws java.io.IOException {
              int read = super.read(buffer, offset, length);
              if (read < 0) {
                stdinClosed.countDown();
              }
              return read;
            }
          };
      try (McpGateway gateway =
          McpGateway.stdio(
              host.registry(),
              tools,
              host.dispatcher(),
              in,
              new FileOutputStream(FileDescriptor.out))) {
        // The client closing stdin ends the server, and so do SIGTERM and Ctrl-C: each closes the
        // gateway and the host, and the command exits 0.
        Signals.onStop(stdinClosed::countDown);
        stdinClosed.await();
      }
      return CommandLine.ExitCode.OK;
    }
  }
}
