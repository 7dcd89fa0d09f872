package dev.toolhost.secrets;

import dev.toolhost.core.spi.CommandContext;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * The secrets command runs the host's secret scanner outside a host, for operators and CI: {@code
 * toolhost secrets scan FILE|-} scans a file, or standard input, with the same rules, allow-list
 * and known values (this process's environment) a host of the config would use, and prints each
 * finding as {@code FILE:LINE:COLUMN: RULE (N chars, ENCODING)}, never the secret; with {@code
 * --redact} it prints the redacted text instead. Exit code 0 when nothing is found, 1 when
 * something is.
 */
@Command(
    name = "secrets",
    mixinStandardHelpOptions = true,
    description = "Finds secrets in text as the host's output scan does.",
    subcommands = {SecretsCommand.Scan.class})
final class SecretsCommand implements Callable<Integer> {

  private final CommandContext context;

  @Spec private CommandSpec spec;

  SecretsCommand(CommandContext context) {
    this.context = context;
  }

  @Override
  public Integer call() {
    spec.commandLine().usage(spec.commandLine().getErr());
    return CommandLine.ExitCode.USAGE;
  }

  /** {@code toolhost secrets scan FILE|-}. */
  @Command(
      name = "scan",
      mixinStandardHelpOptions = true,
      description =
          "Scans a file (or - for standard input) for secrets with the host's rules and"
              + " known values. Prints each finding's place and rule, never its value; exit 1 when"
              + " any is found.")
  static final class Scan implements Callable<Integer> {
    @Spec private CommandSpec spec;

    @ParentCommand private SecretsCommand parent;

    @Option(names = "--redact", description = "Print the text with its secrets redacted instead.")
    private boolean redact;

    @Parameters(paramLabel = "FILE", description = "The file to scan, or - for standard input.")
    private String file;

    private InputStream in = System.in;

    @Override
    public Integer call() throws IOException {
      PrintWriter out = spec.commandLine().getOut();
      PrintWriter err = spec.commandLine().getErr();
      String text;
      try {
        // Decoded as standard input is: a byte that is not UTF-8 (a Latin-1 log) becomes U+FFFD
        // and the rest is scanned, rather than failing with the exit code of a secret found.
        text =
            new String(
                file.equals("-") ? in.readAllBytes() : Files.readAllBytes(Path.of(file)),
                StandardCharsets.UTF_8);
      } catch (NoSuchFileException e) {
        err.println(file + ": no such file");
        return CommandLine.ExitCode.USAGE;
      } catch (IOException e) {
        // A directory, say: not the exit code of a secret found.
        err.println(file + ": cannot read it (" + e.getMessage() + ")");
        return CommandLine.ExitCode.USAGE;
      }
      SecretScanner scanner = SecretsExtension.scanner(secretsConfig(), System.getenv(), Map.of());
      SecretScanner.Redaction redaction = scanner.redaction(text);
      if (redact) {
        out.print(redaction.text());
      } else {
        String name = file.equals("-") ? "<stdin>" : file;
        for (Finding finding : redaction.findings()) {
          int line = 1;
          int lineStart = 0;
          for (int i = 0; i < finding.start(); i++) {
            if (text.charAt(i) == '\n') {
              line++;
              lineStart = i + 1;
            }
          }
          out.println(
              name
                  + ":"
                  + line
                  + ":"
                  + (finding.start() - lineStart + 1)
                  + ": "
                  + finding.rule()
                  + " ("
                  + finding.length()
                  + " chars, "
                  + finding.encoding().name().toLowerCase(java.util.Locale.ROOT)
                  + ")");
        }
      }
      out.flush();
      err.println(
          redaction.findings().size()
              + (redaction.findings().size() == 1 ? " secret" : " secrets")
              + " found");
      err.flush();
      return redaction.findings().isEmpty() ? CommandLine.ExitCode.OK : 1;
    }

    private SecretsConfig secretsConfig() {
      return parent.context.section(new SecretsExtension()).orElseGet(SecretsConfig::defaults);
    }
  }
}
