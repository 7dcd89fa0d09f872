package dev.toolhost.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.networknt.schema.Error;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import dev.toolhost.core.spi.HostExtensions;
import dev.toolhost.host.HostConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;
import tools.jackson.databind.JsonNode;
import tools.jackson.dataformat.yaml.YAMLMapper;

class ConfigCommandTest {

  private static final YAMLMapper YAML = YAMLMapper.builder().build();

  @TempDir Path dir;

  private static Schema compiled(JsonNode schema) {
    return SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12).getSchema(schema);
  }

  /** The markdown files whose YAML blocks are config files: the README and every page of docs/. */
  private static List<Path> documents() throws Exception {
    List<Path> documents = new ArrayList<>(List.of(Path.of("..", "README.md")));
    try (Stream<Path> pages = Files.list(Path.of("..", "docs"))) {
      pages.filter(page -> page.toString().endsWith(".md")).sorted().forEach(documents::add);
    }
    return documents;
  }

  /**
   * A YAML block of a document: a config file, unless a {@code <!-- not-checked: reason -->} line
   * stands right before its fence.
   */
  record Example(Path document, int line, String yaml, boolean checked) {
    @Override
    public String toString() {
      return document.getFileName() + " line " + line;
    }
  }

  private static final Pattern HEREDOC = Pattern.compile("(?s)<<'YAML'\\n(.*?\\n)YAML\\n");

  private static List<Example> docsExamples() throws Exception {
    Pattern fence = Pattern.compile("(?s)(<!-- not-checked: [^>]+ -->\\n)?```yaml\\n(.*?)```");
    List<Example> examples = new ArrayList<>();
    for (Path document : documents()) {
      String text = Files.readString(document);
      Matcher matcher = fence.matcher(text);
      while (matcher.find()) {
        int line = (int) text.substring(0, matcher.start(2)).lines().count();
        examples.add(new Example(document, line, matcher.group(2), matcher.group(1) == null));
      }
      // A config a shell block writes with a here-document, as docs/mcp.md's run does.
      Matcher heredoc = HEREDOC.matcher(text);
      while (heredoc.find()) {
        int line = (int) text.substring(0, heredoc.start(1)).lines().count();
        examples.add(new Example(document, line, heredoc.group(1), true));
      }
    }
    return examples;
  }

  /** The YAML blocks of the README and of docs/: config files, whole or (marked) naming files. */
  private static List<String> docsConfigs() throws Exception {
    return docsExamples().stream().map(Example::yaml).toList();
  }

  @Test
  void theSchemaValidatesEveryExampleConfigOfTheDocs() throws Exception {
    Schema schema = compiled(ConfigCommand.schema(HostExtensions.discovered()));
    List<String> configs = docsConfigs();

    assertThat(configs).hasSizeGreaterThanOrEqualTo(4);
    for (String config : configs) {
      List<Error> errors = schema.validate(YAML.readTree(config));
      assertThat(errors).as(config).isEmpty();
    }
  }

  @Test
  void configCheckFindsEveryExampleConfigOfTheDocsValid() throws Exception {
    List<Example> examples = docsExamples();

    assertThat(examples).filteredOn(Example::checked).hasSizeGreaterThanOrEqualTo(11);
    List<String> refused = new ArrayList<>();
    for (Example example : examples) {
      if (!example.checked()) {
        continue;
      }
      Path file = dir.resolve(example.document().getFileName() + "-" + example.line() + ".yaml");
      Files.writeString(file, example.yaml());

      CommandRun check = CommandRun.of("config", "check", file.toString());

      if (check.exitCode() != 0 || !check.out().contains(file + ": valid")) {
        refused.add(example + ": " + check.err().strip());
      }
    }
    assertThat(refused).as("examples config check refuses").isEmpty();
    // The README's tour checks the commented example at the root.
    CommandRun example =
        CommandRun.of("config", "check", Path.of("..", "toolhost.example.yaml").toString());
    assertThat(example.exitCode()).as(example.err()).isZero();
  }

  @Test
  void theExampleConfigAtTheRootMatchesTheSchemaAndReadsAsTheHostReadsIt() throws Exception {
    Path example = Path.of("..", "toolhost.example.yaml");
    String text = Files.readString(example);
    Schema schema = compiled(ConfigCommand.schema(HostExtensions.discovered()));

    assertThat(schema.validate(YAML.readTree(text))).isEmpty();
    HostConfig config = HostConfig.load(example);
    assertThat(config.http().port()).isEqualTo(8080);
    assertThat(config.profiles())
        .extracting(HostConfig.Profile::name)
        .contains("guides_only", "reviewer");
    // Each commented-out section is valid too, once uncommented.
    String uncommented =
        text.replaceAll("(?m)^# ([a-z0-9_]+:.*)$", "$1").replaceAll("(?m)^#   ", "  ");
    assertThat(schema.validate(YAML.readTree(uncommented))).isEmpty();
    assertThat(YAML.readTree(uncommented).propertyNames())
        .contains(
            "mcp",
            "web",
            "openrouter",
            "agents",
            "exec",
            "scheduling",
            "long_term_memory",
            "tool_services");
  }

  @Test
  void theSchemaRefusesATypoInASectionAndHoldsTheExtensionsSections() {
    JsonNode whole = ConfigCommand.schema(List.of(new HostExtensionTest.WeatherExtension()));
    Schema schema = compiled(whole);

    assertThat(schema.validate(YAML.readTree("http:\n  prot: 8080\n"))).isNotEmpty();
    assertThat(schema.validate(YAML.readTree("memory:\n  stor: redis\n"))).isNotEmpty();
    assertThat(schema.validate(YAML.readTree("weather:\n  city: Nantes\n"))).isEmpty();
    assertThat(schema.validate(YAML.readTree("weather:\n  unit: metric\n"))).isNotEmpty();
    assertThat(whole.at("/properties/http/properties").propertyNames())
        .contains("host", "port", "token_env", "allowed_hosts", "allowed_origins");
  }

  @Test
  void checkSaysAFileIsValidOrNamesEveryProblemWithItsPlace() throws Exception {
    Path good = dir.resolve("good.yaml");
    Files.writeString(
        good,
        "http:\n  port: 9090\nbuiltins:\n  search: false\nsecrets:\n  policy: block\n  depth: 3\n");
    Path bad = dir.resolve("bad.yaml");
    Files.writeString(bad, "http:\n  prot: 9090\n");
    // A problem of an extension's section is found by the extension, and placed the same way.
    Path badSection = dir.resolve("bad-section.yaml");
    Files.writeString(badSection, "secrets:\n  policy: maybe\n");

    CommandRun valid = CommandRun.of("config", "check", good.toString());
    CommandRun invalid = CommandRun.of("config", "check", bad.toString());
    CommandRun invalidSection = CommandRun.of("config", "check", badSection.toString());

    assertThat(valid.exitCode()).as(valid.err()).isZero();
    assertThat(valid.out()).contains(good + ": valid");
    assertThat(invalid.exitCode()).isEqualTo(CommandLine.ExitCode.USAGE);
    assertThat(invalid.err()).contains(bad + " line 2, column 3: unknown key 'prot' under 'http'");
    assertThat(invalidSection.exitCode()).isEqualTo(CommandLine.ExitCode.USAGE);
    assertThat(invalidSection.err())
        .contains(
            badSection
                + " line 2, column 11: 'secrets.policy' is 'maybe' (expected one of: redact,"
                + " block, off)");
  }

  @Test
  void schemaPrintsTheWholeFilesSchema() {
    CommandRun schema = CommandRun.of("config", "schema");

    assertThat(schema.exitCode()).isZero();
    JsonNode printed = YAML.readTree(schema.out());
    assertThat(printed.at("/properties").propertyNames())
        .contains("http", "builtins", "memory", "mcp", "profiles", "agents", "tool_services");
  }
}
