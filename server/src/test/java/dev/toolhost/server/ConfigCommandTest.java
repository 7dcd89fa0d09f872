package dev.toolhost.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.networknt.schema.Error;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import dev.toolhost.core.spi.HostExtensions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
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

  /** The YAML blocks of the README that are whole config files. */
  private static List<String> readmeConfigs() throws Exception {
    String readme = Files.readString(Path.of("..", "README.md"));
    List<String> blocks = new ArrayList<>();
    Matcher matcher = Pattern.compile("(?s)```yaml\\n(.*?)```").matcher(readme);
    while (matcher.find()) {
      blocks.add(matcher.group(1));
    }
    return blocks;
  }

  @Test
  void theSchemaValidatesEveryExampleConfigOfTheReadme() throws Exception {
    Schema schema = compiled(ConfigCommand.schema(HostExtensions.discovered()));
    List<String> configs = readmeConfigs();

    assertThat(configs).hasSizeGreaterThanOrEqualTo(4);
    for (String config : configs) {
      List<Error> errors = schema.validate(YAML.readTree(config));
      assertThat(errors).as(config).isEmpty();
    }
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
    Files.writeString(good, "http:\n  port: 9090\nbuiltins:\n  search: false\n");
    Path bad = dir.resolve("bad.yaml");
    Files.writeString(bad, "http:\n  prot: 9090\n");

    CommandRun valid = CommandRun.of("config", "check", good.toString());
    CommandRun invalid = CommandRun.of("config", "check", bad.toString());

    assertThat(valid.exitCode()).isZero();
    assertThat(valid.out()).contains(good + ": valid");
    assertThat(invalid.exitCode()).isEqualTo(CommandLine.ExitCode.USAGE);
    assertThat(invalid.err()).contains(bad + " line 2, column 3: unknown key 'prot' under 'http'");
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
