package dev.toolhost.secrets;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.testing.TextCommandContext;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code toolhost secrets scan FILE} prints where each secret is and which rule found it, never the
 * secret, and exits 1 when it found one; {@code --redact} prints the text redacted instead.
 *
 * <p>The command runs on its own command line, its config read from text as {@code --config} would
 * read the file. Standard input ({@code -}) is not covered here: a run gives the command no input.
 */
class SecretsCommandTest {

  /** A GitHub token made at run time, so that no secret-looking literal is in the source. */
  private static final String PAT =
      "ghp_" + SecretSamples.random(new Random(0x5CA7L), SecretSamples.ALNUM, 36);

  @TempDir Path dir;

  /** Runs {@code toolhost secrets ARGS...} with the config of that text. */
  private TextCommandContext.Run run(String yaml, String... args) {
    return new TextCommandContext(yaml, dir, List.of(new SecretsExtension()))
        .run(SecretsCommand::new, args);
  }

  private Path write(String name, String text) throws Exception {
    Path file = dir.resolve(name);
    Files.writeString(file, text);
    return file;
  }

  @Test
  void aFileWithASecretPrintsItsPlaceAndRuleNeverItsValueAndExitsOne() throws Exception {
    Path file =
        write(
            "deploy.log",
            "12:00:01 INFO cloning\n12:00:02 INFO pushing\n12:00:03 WARN push with " + PAT + "\n");

    TextCommandContext.Run run = run("", "scan", file.toString());

    assertThat(run.exitCode()).as(run.err()).isEqualTo(1);
    assertThat(run.out()).isEqualTo(file + ":3:25: github-pat (40 chars, plain)\n");
    assertThat(run.err()).isEqualTo("1 secret found\n");
    assertThat(run.out() + run.err()).doesNotContain(PAT).doesNotContain(PAT.substring(4));
  }

  @Test
  void aCleanFilePrintsNothingAndExitsZero() throws Exception {
    Path file = write("build.log", "12:00:01 INFO compiled 412 sources\n12:00:09 INFO done\n");

    TextCommandContext.Run run = run("", "scan", file.toString());

    assertThat(run.exitCode()).as(run.err()).isZero();
    assertThat(run.out()).isEmpty();
    assertThat(run.err()).isEqualTo("0 secrets found\n");
  }

  @Test
  void redactPrintsTheRedactedText() throws Exception {
    Path file = write("deploy.log", "pushing\npush with " + PAT + " done\n");

    TextCommandContext.Run run = run("", "scan", "--redact", file.toString());

    assertThat(run.exitCode()).isEqualTo(1);
    assertThat(run.out()).isEqualTo("pushing\npush with [REDACTED:github-pat] done\n");
    assertThat(run.err()).isEqualTo("1 secret found\n");
  }

  @Test
  void aMissingFileExitsTwoWithAClearMessage() {
    Path missing = dir.resolve("nowhere.log");

    TextCommandContext.Run run = run("", "scan", missing.toString());

    assertThat(run.exitCode()).isEqualTo(CommandLine.ExitCode.USAGE);
    assertThat(run.out()).isEmpty();
    assertThat(run.err()).isEqualTo(missing + ": no such file\n");
  }

  @Test
  void aFileThatIsNotUtf8IsScannedAsItsTextReads() throws Exception {
    // A Latin-1 log: its 'é' is no UTF-8, and the secret in it is plain ASCII all the same.
    Path file = dir.resolve("latin1.log");
    Files.write(
        file, ("café opened\npush with " + PAT + "\n").getBytes(StandardCharsets.ISO_8859_1));

    TextCommandContext.Run run = run("", "scan", file.toString());

    assertThat(run.err()).isEqualTo("1 secret found\n");
    assertThat(run.out()).isEqualTo(file + ":2:11: github-pat (40 chars, plain)\n");
    assertThat(run.exitCode()).isEqualTo(1);
  }

  @Test
  void theConfigsRulesAndAllowListApply() throws Exception {
    Path rules =
        write(
            "company.toml",
            """
            [[rules]]
            id = "acme-deploy-key"
            regex = '''\\bacmedk_[a-z0-9]{24}\\b'''
            keywords = ["acmedk_"]
            """);
    String config =
        "secrets:\n  rules: [%s]\n  allow:\n    rules: [github-pat]\n"
            .formatted(rules.getFileName());
    Path file = write("deploy.log", "key acmedk_" + "k3y9".repeat(6) + "\npush with " + PAT + "\n");

    TextCommandContext.Run run = run(config, "scan", file.toString());

    assertThat(run.exitCode()).as(run.err()).isEqualTo(1);
    assertThat(run.out()).isEqualTo(file + ":1:5: acme-deploy-key (31 chars, plain)\n");
  }
}
