package dev.toolhost.secrets;

import dev.toolhost.core.spi.CommandContext;
import dev.toolhost.core.spi.ConfigProblems;
import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.core.spi.RunningHost;
import dev.toolhost.core.spi.SectionReading;
import dev.toolhost.host.HostConfig;
import dev.toolhost.testing.TestHost;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import picocli.CommandLine;

/**
 * A config text context is what an extension's command sees of a command line whose {@code
 * --config} names a file of that text, for tests of the command alone: its sections are read as
 * {@code toolhost config check} reads them, with the given extensions. It opens no host.
 */
record ConfigTextContext(String yaml, Path directory, List<HostExtension<?>> extensions)
    implements CommandContext {

  /** What one run of a command printed and how it exited. */
  record Run(int exitCode, String out, String err) {}

  /** Runs the command made with this context on a command line of its own, with the arguments. */
  Run run(Function<CommandContext, Object> command, String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine line = new CommandLine(command.apply(this));
    line.setOut(new PrintWriter(out, true));
    line.setErr(new PrintWriter(err, true));
    int exitCode = line.execute(args);
    return new Run(exitCode, out.toString(), err.toString());
  }

  @Override
  public <C> Optional<C> section(HostExtension<C> extension) {
    HostConfig config = TestHost.config(yaml, extensions, directory);
    if (!config.sections().containsKey(extension.name())) {
      return Optional.empty();
    }
    SectionReading reading =
        new SectionReading(
            ConfigProblems.unplaced(), config.directory(), config.toolProfiles().names());
    C read = extension.read(config.section(extension.name()), reading);
    reading.problems().throwIfAny();
    return Optional.of(read);
  }

  @Override
  public Optional<Path> configFile() {
    return Optional.of(directory.resolve(TestHost.FILE_NAME));
  }

  @Override
  public RunningHost open() {
    throw new UnsupportedOperationException("A config text context opens no host");
  }

  @Override
  public <C> RunningHost open(HostExtension<C> extension, C config) {
    throw new UnsupportedOperationException("A config text context opens no host");
  }

  @Override
  public RunningHost openAlone() {
    throw new UnsupportedOperationException("A config text context opens no host");
  }
}
