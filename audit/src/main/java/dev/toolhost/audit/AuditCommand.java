package dev.toolhost.audit;

import dev.toolhost.core.spi.CommandContext;
import dev.toolhost.core.spi.ConfigException;
import dev.toolhost.core.spi.Storage;
import java.io.IOException;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * The audit command reads the audit journal the config names, without a host: {@code toolhost audit
 * tail [-n N] [--user U] [--principal P] [--tool T] [--follow]} prints the latest entries as JSON
 * lines, oldest first; with {@code --follow} it goes on printing new ones as they come.
 *
 * <p>A file journal is read beside the host that writes it (the reader takes no lock); a JDBC one
 * from anywhere that reaches its database.
 */
@Command(
    name = "audit",
    mixinStandardHelpOptions = true,
    description = "Reads the audit journal of the host's calls.",
    subcommands = {AuditCommand.Tail.class})
final class AuditCommand implements Callable<Integer> {

  private final CommandContext context;
  private final AuditExtension extension;

  @Spec private CommandSpec spec;

  AuditCommand(CommandContext context, AuditExtension extension) {
    this.context = context;
    this.extension = extension;
  }

  @Override
  public Integer call() {
    spec.commandLine().usage(spec.commandLine().getErr());
    return CommandLine.ExitCode.USAGE;
  }

  /** {@code toolhost audit tail}. */
  @Command(
      name = "tail",
      mixinStandardHelpOptions = true,
      description =
          "Prints the latest entries of the audit journal as JSON lines, oldest first; never an"
              + " argument value.")
  static final class Tail implements Callable<Integer> {

    /** How often {@code --follow} asks the journal for new entries. */
    static final Duration POLL = Duration.ofMillis(500);

    @Spec private CommandSpec spec;

    @ParentCommand private AuditCommand parent;

    @Option(
        names = {"-n", "--lines"},
        defaultValue = "20",
        description = "How many entries to print (default: ${DEFAULT-VALUE}).")
    private int lines;

    @Option(names = "--user", description = "Only this user's calls.")
    private String user;

    @Option(names = "--principal", description = "Only this principal's calls.")
    private String principal;

    @Option(names = "--tool", description = "Only calls of this tool.")
    private String tool;

    @Option(
        names = {"-f", "--follow"},
        description = "Go on printing entries as they are written, until interrupted.")
    private boolean follow;

    @Override
    public Integer call() throws IOException, InterruptedException {
      PrintWriter out = spec.commandLine().getOut();
      PrintWriter err = spec.commandLine().getErr();
      Optional<AuditConfig> config;
      try {
        config = parent.context.section(parent.extension);
      } catch (ConfigException e) {
        err.println(e.getMessage());
        return CommandLine.ExitCode.USAGE;
      }
      if (config.isEmpty()) {
        err.println(
            "The config has no 'audit:' section, so its host keeps no audit journal: add one"
                + " (see docs/auth.md).");
        return CommandLine.ExitCode.USAGE;
      }
      if (lines < 1 || lines > AuditQuery.MAX_LIMIT) {
        err.println("-n is " + lines + " (expected 1 to " + AuditQuery.MAX_LIMIT + ")");
        return CommandLine.ExitCode.USAGE;
      }
      try (Reader reader = Reader.open(config.get(), System.getenv())) {
        Optional<Instant> since = Optional.empty();
        int limit = lines;
        java.util.Set<String> printed = new java.util.HashSet<>();
        do {
          List<AuditEntry> entries =
              reader.query(
                  new AuditQuery(
                      Optional.ofNullable(user),
                      Optional.ofNullable(principal),
                      Optional.ofNullable(tool),
                      since,
                      limit));
          for (AuditEntry entry : entries) {
            // Entries at the instant of the last one printed come again: print each once.
            if (printed.add(entry.callId() + "@" + entry.at())) {
              out.println(entry.toJson());
            }
          }
          out.flush();
          if (!entries.isEmpty()) {
            Instant last = entries.getLast().at();
            if (since.isEmpty() || last.isAfter(since.get())) {
              printed.removeIf(key -> !key.endsWith("@" + last));
            }
            since = Optional.of(last);
          }
          limit = AuditQuery.MAX_LIMIT;
          if (follow) {
            Thread.sleep(POLL);
          }
        } while (follow);
      }
      return CommandLine.ExitCode.OK;
    }
  }

  /** A reader of a journal: a file journal read without its writer's lock, or a database one. */
  private sealed interface Reader extends AutoCloseable {
    List<AuditEntry> query(AuditQuery query) throws IOException;

    @Override
    void close() throws IOException;

    static Reader open(AuditConfig config, java.util.Map<String, String> environment)
        throws IOException {
      return switch (config.store()) {
        case Storage.Embedded files -> new FileReader(files.directory());
        case Storage.Jdbc jdbc -> {
          Journal journal = AuditExtension.open(config, environment);
          yield new JournalReader(journal);
        }
      };
    }
  }

  private record FileReader(java.nio.file.Path directory) implements Reader {
    @Override
    public List<AuditEntry> query(AuditQuery query) throws IOException {
      return FileJournal.read(directory, query);
    }

    @Override
    public void close() {}
  }

  private record JournalReader(Journal journal) implements Reader {
    @Override
    public List<AuditEntry> query(AuditQuery query) throws IOException {
      return journal.query(query);
    }

    @Override
    public void close() throws IOException {
      journal.close();
    }
  }
}
