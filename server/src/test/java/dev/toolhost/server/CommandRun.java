package dev.toolhost.server;

import java.io.PrintWriter;
import java.io.StringWriter;
import picocli.CommandLine;

/**
 * A command run is what one in-process run of the {@code toolhost} command line printed and how it
 * exited, for tests of the commands.
 */
record CommandRun(int exitCode, String out, String err) {

  /** Runs the command line with the given arguments, capturing its output and error streams. */
  static CommandRun of(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine commandLine = Main.commandLine();
    commandLine.setOut(new PrintWriter(out, true));
    commandLine.setErr(new PrintWriter(err, true));
    int exitCode = commandLine.execute(args);
    return new CommandRun(exitCode, out.toString(), err.toString());
  }
}
