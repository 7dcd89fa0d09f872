package dev.toolhost.core.spi;

/**
 * A host command is a subcommand that an extension adds to the {@code toolhost} command line
 * ({@link HostExtension#commands}): {@code chat} is the agents extension's, {@code mcp} the MCP
 * extension's. The command line composes them; the command reads the user's config and opens the
 * host it describes through its {@link CommandContext}, so it needs nothing of the server module.
 */
public interface HostCommand {

  /**
   * A new command object for one run of the command line: an instance of a class annotated with
   * picocli's {@code @Command}, whose name is the subcommand's. The command line adds {@code
   * --config FILE} (and, for a command that {@linkplain #opensHost opens a host}, {@code --bus
   * URI}) to it, which the context reads.
   */
  Object command(CommandContext context);

  /** Whether the command opens a host, and so takes {@code --bus} beside {@code --config}. */
  default boolean opensHost() {
    return true;
  }
}
