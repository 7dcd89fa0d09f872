package dev.toolhost.testing;

import dev.toolhost.core.spi.CommandContext;
import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.core.spi.RunningHost;
import dev.toolhost.host.HostConfig;
import dev.toolhost.host.HostRuntime;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import picocli.CommandLine;

/**
 * A text command context is what an extension's command sees of a command line whose config is text
 * in a test rather than a {@code --config} file: its sections read by the given extensions as
 * {@code toolhost config check} reads them, its config file {@value TestHost#FILE_NAME} in the
 * given directory (when one is given), and its hosts built from those extensions with an empty
 * environment and no message bus. {@link #run} runs a command on a command line of its own, for
 * tests of one extension's command without the server's.
 */
public final class TextCommandContext implements CommandContext {

  private final HostConfig config;
  private final Optional<Path> directory;
  private final List<HostExtension<?>> extensions;

  /** A context of the text, read with the extensions, with no config file. */
  public TextCommandContext(String yaml, List<HostExtension<?>> extensions) {
    this(yaml, Optional.empty(), extensions);
  }

  /** A context of the text, as the file {@value TestHost#FILE_NAME} in the directory. */
  public TextCommandContext(String yaml, Path directory, List<HostExtension<?>> extensions) {
    this(yaml, Optional.of(directory), extensions);
  }

  private TextCommandContext(
      String yaml, Optional<Path> directory, List<HostExtension<?>> extensions) {
    this.config = TestHost.config(yaml, extensions, directory.orElse(Path.of("")));
    this.directory = directory;
    this.extensions = List.copyOf(extensions);
  }

  /** What one run of a command printed and how it exited. */
  public record Run(int exitCode, String out, String err) {}

  /** Runs the command made with this context on a command line of its own, with the arguments. */
  public Run run(Function<CommandContext, Object> command, String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine line = new CommandLine(command.apply(this));
    line.setOut(new PrintWriter(out, true));
    line.setErr(new PrintWriter(err, true));
    int exitCode = line.execute(args);
    return new Run(exitCode, out.toString(), err.toString());
  }

  /** The config, as the host reads it. */
  public HostConfig config() {
    return config;
  }

  @Override
  public <C> Optional<C> section(HostExtension<C> extension) {
    return config.read(extension);
  }

  @Override
  public Optional<Path> configFile() {
    return directory.map(found -> found.resolve(TestHost.FILE_NAME));
  }

  @Override
  public RunningHost open() {
    return builder().build();
  }

  @Override
  public <C> RunningHost open(HostExtension<C> extension, C section) {
    return builder().extension(extension, section).build();
  }

  @Override
  public RunningHost openAlone() {
    return open();
  }

  private HostRuntime.Builder builder() {
    return HostRuntime.builder(config).environment(Map.of()).extensions(extensions);
  }
}
