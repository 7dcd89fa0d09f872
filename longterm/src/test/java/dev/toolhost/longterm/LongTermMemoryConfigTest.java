package dev.toolhost.longterm;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.core.spi.ConfigProblems;
import dev.toolhost.core.spi.ConfigSections;
import dev.toolhost.core.spi.SectionReading;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

class LongTermMemoryConfigTest {

  private static final JsonMapper JSON = JsonMapper.builder().build();

  private record Read(
      LongTermMemoryConfig config, ConfigProblems problems, List<String> messages) {}

  private static Read read(String section) {
    List<String> messages = new ArrayList<>();
    ConfigProblems problems = new ConfigProblems(messages, p -> "at " + p, p -> "at " + p);
    JsonNode node = JSON.readTree(section);
    ConfigSections.check(
        LongTermMemoryExtension.NAME, new LongTermMemoryExtension().configSchema(), node, problems);
    LongTermMemoryConfig config =
        problems.count() == 0
            ? LongTermMemoryConfig.read(
                node,
                new SectionReading(problems, Path.of("/etc/toolhost"), List.of("main")),
                Map.of("PGPASS", "secret"))
            : null;
    return new Read(config, problems, messages);
  }

  @Test
  void anEmptySectionIsLuceneUnderTheConfigFilesDirectoryWithTheBundledModel() {
    Read read = read("{}");

    assertThat(read.problems().count()).isZero();
    assertThat(read.config().store()).isEqualTo(LongTermMemoryConfig.Store.LUCENE);
    assertThat(read.config().stateDirectory())
        .isEqualTo(Path.of("/etc/toolhost/state/long-term-memory"));
    assertThat(read.config().embedder().endpoint()).isEmpty();
    assertThat(read.config().defaultUser()).isEqualTo("default");
    assertThat(read.config().perAgent()).isTrue();
    assertThat(read.config().limits()).isEqualTo(LongTermMemoryConfig.Limits.defaults());
  }

  @Test
  void skillsAreEachUsersOwnUnlessSharedAndTheirLimitsAreChecked() {
    assertThat(read("{}").config().skills())
        .isEqualTo(LongTermMemoryConfig.SkillsConfig.defaults());
    assertThat(
            read("{\"skills\": {\"scope\": \"shared\", \"max_content_bytes\": 4096, \"max_skills\": 5}}")
                .config()
                .skills())
        .isEqualTo(new LongTermMemoryConfig.SkillsConfig(true, 4096, 5));

    Read bad = read("{\"skills\": {\"scope\": \"team\", \"max_skills\": 0}}");

    assertThat(bad.messages())
        .containsExactly(
            "at /long_term_memory/skills/scope: 'long_term_memory.skills.scope' is 'team'"
                + " (expected user or shared)",
            "at /long_term_memory/skills/max_skills: 'long_term_memory.skills.max_skills' is 0"
                + " (expected 1 to 100000)");
  }

  @Test
  void everyKeyIsRead() {
    Read read =
        read(
            """
            {"store": "postgres", "state_dir": "/var/lib/toolhost",
             "postgres": {"url": "jdbc:postgresql://db:5432/t", "user": "u", "password_env": "PGPASS",
                          "table_prefix": "mem"},
             "embedder": {"provider": "endpoint", "base_url": "https://api.openai.com/v1",
                          "model": "text-embedding-3-small", "dimension": 512,
                          "send_dimensions": true, "api_key_env": "OPENAI_API_KEY", "timeout": "10s"},
             "embed_retry": "1m", "default_user": "me", "per_agent": false,
             "limits": {"max_content_bytes": 1000, "default_results": 5, "max_results": 20}}
            """);

    assertThat(read.problems().count()).isZero();
    LongTermMemoryConfig config = read.config();
    assertThat(config.postgres().orElseThrow().password()).contains("secret");
    assertThat(config.postgres().orElseThrow().toString()).doesNotContain("secret");
    assertThat(config.embedder().endpoint().orElseThrow().dimension()).isEqualTo(512);
    assertThat(config.embedder().endpoint().orElseThrow().timeout())
        .isEqualTo(Duration.ofSeconds(10));
    assertThat(config.embedRetry()).isEqualTo(Duration.ofMinutes(1));
    assertThat(config.defaultUser()).isEqualTo("me");
    assertThat(config.perAgent()).isFalse();
    assertThat(config.limits()).isEqualTo(new LongTermMemoryConfig.Limits(1000, 5, 20));
  }

  @Test
  void everyProblemIsPlacedAtItsKey() {
    Read read =
        read(
            """
            {"store": "redis", "embedder": {"provider": "endpoint"},
             "limits": {"max_results": 0}, "embed_retry": "soon", "colour": "blue"}
            """);

    assertThat(read.problems().count()).isEqualTo(1);
    assertThat(String.join("\n", read.messages())).contains("unknown key 'colour'");

    read =
        read(
            """
            {"store": "redis", "embedder": {"provider": "endpoint"},
             "limits": {"max_results": 0}, "embed_retry": "soon"}
            """);
    String problems = String.join("\n", read.messages());
    assertThat(problems)
        .contains("'long_term_memory.store' is 'redis' (expected lucene or postgres)")
        .contains("gives no 'base_url'")
        .contains("names no 'model'")
        .contains("gives no 'dimension'")
        .contains("'long_term_memory.limits.max_results' is 0")
        .contains("'long_term_memory.embed_retry' is 'soon'");
  }

  @Test
  void theLuceneStoreRefusesVectorsLongerThanLuceneIndexes() {
    String endpoint =
        "\"embedder\": {\"provider\": \"endpoint\", \"base_url\": \"https://api.openai.com/v1\","
            + " \"model\": \"text-embedding-3-small\", \"dimension\": 1536}";

    Read lucene = read("{" + endpoint + "}");
    Read postgres =
        read(
            "{\"store\": \"postgres\", \"postgres\": {\"url\": \"jdbc:postgresql://db/t\"}, "
                + endpoint
                + "}");

    assertThat(String.join("\n", lucene.messages()))
        .contains("'long_term_memory.embedder.dimension' is 1536")
        .contains("at most 1024 dimensions");
    assertThat(postgres.messages()).isEmpty();
  }
}
