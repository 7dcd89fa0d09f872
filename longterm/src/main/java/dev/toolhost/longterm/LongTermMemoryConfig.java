package dev.toolhost.longterm;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import dev.toolhost.core.spi.ConfigProblems;
import dev.toolhost.core.spi.ConfigSections;
import dev.toolhost.core.spi.ConfigSections.DurationText;
import dev.toolhost.core.spi.Counts;
import dev.toolhost.core.spi.Durations;
import dev.toolhost.core.spi.EnvironmentNames;
import dev.toolhost.core.spi.SectionReading;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;
import tools.jackson.databind.JsonNode;

/**
 * A long-term memory config is the {@code long_term_memory:} section of a host config: where
 * memories are stored, what embeds them, the limits of the tools, and whose memories a call without
 * a user reads. A section with nothing in it ({@code long_term_memory: {}}) stores in Lucene under
 * the state directory and embeds with the bundled model.
 *
 * <pre>{@code
 * long_term_memory:
 *   store: lucene                  # lucene (embedded) or postgres (shared by several hosts)
 *   state_dir: state/long-term-memory   # lucene's index; relative to the config file
 *   postgres:
 *     url: jdbc:postgresql://127.0.0.1:5432/toolhost
 *     user: toolhost
 *     password_env: TOOLHOST_PG_PASSWORD   # the variable that holds the password, if any
 *     table_prefix: toolhost_memory        # tables toolhost_memory and toolhost_memory_meta
 *   embedder:
 *     provider: bundled            # bundled (all-MiniLM-L6-v2, no download) or endpoint
 *     base_url: https://api.openai.com/v1  # endpoint: POST {base_url}/embeddings
 *     model: text-embedding-3-small
 *     dimension: 512
 *     send_dimensions: true        # ask the endpoint for that many dimensions
 *     api_key_env: OPENAI_API_KEY
 *     timeout: 30s
 *   embed_retry: 30s               # how often memories without a vector are embedded again
 *   default_user: default          # whose memories a call without a user reads and writes
 *   per_agent: true                # an agent's memories are its own (false: the user's, shared)
 *   limits:
 *     max_content_bytes: 51200     # the largest memory
 *     default_results: 10          # memory_recall's max_results when the model gives none
 *     max_results: 50              # the most memory_recall answers
 *   skills:
 *     scope: user                  # user (each user's own) or shared (every user's the same)
 *     max_content_bytes: 16384     # the largest skill
 *     max_skills: 200              # the most skills one owner keeps
 * }</pre>
 *
 * @param store which store
 * @param stateDirectory the Lucene index's directory
 * @param postgres the PostgreSQL store's connection, when the store is postgres
 * @param embedder what embeds memories
 * @param embedRetry how often the background pass looks for memories without a vector
 * @param defaultUser the user of calls that name none
 * @param perAgent whether a memory an agent's run saves is that agent's, seen by no other agent of
 *     the user (each agent still sees the user's own memories); when false, agents save and see the
 *     user's memories together (see {@link Owner})
 * @param limits the tools' limits
 * @param skills whose skills a call sees, and their limits
 */
public record LongTermMemoryConfig(
    Store store,
    Path stateDirectory,
    Optional<Postgres> postgres,
    EmbedderChoice embedder,
    Duration embedRetry,
    String defaultUser,
    boolean perAgent,
    Limits limits,
    SkillsConfig skills) {

  public LongTermMemoryConfig {
    Objects.requireNonNull(store, "store");
    Objects.requireNonNull(stateDirectory, "stateDirectory");
    Objects.requireNonNull(postgres, "postgres");
    Objects.requireNonNull(embedder, "embedder");
    Objects.requireNonNull(embedRetry, "embedRetry");
    Objects.requireNonNull(defaultUser, "defaultUser");
    Objects.requireNonNull(limits, "limits");
    Objects.requireNonNull(skills, "skills");
    if (store == Store.POSTGRES && postgres.isEmpty()) {
      throw new IllegalArgumentException("The postgres store needs its connection.");
    }
  }

  /** The state directory when the section names none, relative to the config file. */
  public static final Path DEFAULT_STATE_DIRECTORY = Path.of("state", "long-term-memory");

  /** A store's kind. */
  public enum Store {
    /** Lucene, in the state directory. */
    LUCENE,
    /** PostgreSQL, shared by several hosts. */
    POSTGRES
  }

  /**
   * The PostgreSQL store's connection.
   *
   * @param url the JDBC URL
   * @param user the database user
   * @param password the password, read from the variable the section names, if any
   * @param tablePrefix the tables' names start with it
   */
  public record Postgres(
      String url,
      String user,
      Optional<String> password,
      String tablePrefix,
      Optional<String> passwordEnv) {
    public Postgres {
      Objects.requireNonNull(url, "url");
      Objects.requireNonNull(user, "user");
      Objects.requireNonNull(password, "password");
      Objects.requireNonNull(tablePrefix, "tablePrefix");
      Objects.requireNonNull(passwordEnv, "passwordEnv");
    }

    /** A connection with the given password, read from no variable. */
    public Postgres(String url, String user, Optional<String> password, String tablePrefix) {
      this(url, user, password, tablePrefix, Optional.empty());
    }

    /** This connection with its password read from the variable it names, if it names one. */
    public Postgres withPasswordFrom(java.util.Map<String, String> environment) {
      return passwordEnv.isEmpty()
          ? this
          : new Postgres(url, user, passwordEnv.map(environment::get), tablePrefix, passwordEnv);
    }

    /** The password's variable is resolved where the host starts, not here. */
    @Override
    public String toString() {
      return "Postgres[url=" + url + ", user=" + user + ", tablePrefix=" + tablePrefix + "]";
    }
  }

  /**
   * What embeds memories: the bundled model, or an OpenAI-compatible endpoint.
   *
   * @param endpoint the endpoint's base URL, model and dimension; empty for the bundled model
   */
  public record EmbedderChoice(Optional<Endpoint> endpoint) {
    public EmbedderChoice {
      Objects.requireNonNull(endpoint, "endpoint");
    }

    /** The bundled model. */
    public static EmbedderChoice bundled() {
      return new EmbedderChoice(Optional.empty());
    }
  }

  /**
   * An OpenAI-compatible embeddings endpoint.
   *
   * @param baseUrl the API's base URL ({@code /embeddings} is added)
   * @param model the model to ask for
   * @param dimension the vectors' length
   * @param sendDimensions whether to ask for that length
   * @param apiKeyEnv the variable that holds the key, if the endpoint needs one
   * @param timeout how long a request may take
   */
  public record Endpoint(
      URI baseUrl,
      String model,
      int dimension,
      boolean sendDimensions,
      Optional<String> apiKeyEnv,
      Duration timeout) {
    public Endpoint {
      Objects.requireNonNull(baseUrl, "baseUrl");
      Objects.requireNonNull(model, "model");
      Objects.requireNonNull(apiKeyEnv, "apiKeyEnv");
      Objects.requireNonNull(timeout, "timeout");
    }
  }

  /**
   * The tools' limits.
   *
   * @param maxContentBytes the largest memory, in UTF-8 bytes (51,200)
   * @param defaultResults memory_recall's results when the model asks for no number (10)
   * @param maxResults the most results memory_recall gives (50)
   */
  public record Limits(int maxContentBytes, int defaultResults, int maxResults) {
    /** The limits: 50 KB, 10 results, at most 50. */
    public static Limits defaults() {
      return new Limits(51_200, 10, 50);
    }
  }

  /**
   * How skills are kept.
   *
   * @param shared whether every user sees the same skills (else each user has their own)
   * @param maxContentBytes the largest skill, in UTF-8 bytes (16,384)
   * @param maxSkills the most skills one owner keeps (200)
   */
  public record SkillsConfig(boolean shared, int maxContentBytes, int maxSkills) {
    public SkillsConfig {
      if (maxContentBytes < 1 || maxSkills < 1) {
        throw new IllegalArgumentException("Skill limits must be positive.");
      }
    }

    /** Each user's own skills, 16 KB each, 200 of them. */
    public static SkillsConfig defaults() {
      return new SkillsConfig(false, 16_384, 200);
    }
  }

  /** Lucene in the given directory, the bundled model, the default limits and user. */
  public static LongTermMemoryConfig embedded(Path stateDirectory) {
    return new LongTermMemoryConfig(
        Store.LUCENE,
        stateDirectory,
        Optional.empty(),
        EmbedderChoice.bundled(),
        Duration.ofSeconds(30),
        "default",
        true,
        Limits.defaults(),
        SkillsConfig.defaults());
  }

  /** This config storing in PostgreSQL. */
  public LongTermMemoryConfig withPostgres(Postgres connection) {
    return new LongTermMemoryConfig(
        Store.POSTGRES,
        stateDirectory,
        Optional.of(connection),
        embedder,
        embedRetry,
        defaultUser,
        perAgent,
        limits,
        skills);
  }

  /** This config keeping memories per agent, or not. */
  public LongTermMemoryConfig withPerAgent(boolean keptPerAgent) {
    return new LongTermMemoryConfig(
        store,
        stateDirectory,
        postgres,
        embedder,
        embedRetry,
        defaultUser,
        keptPerAgent,
        limits,
        skills);
  }

  /** This config with the given embedder. */
  public LongTermMemoryConfig withEmbedder(EmbedderChoice choice) {
    return new LongTermMemoryConfig(
        store, stateDirectory, postgres, choice, embedRetry, defaultUser, perAgent, limits, skills);
  }

  /** This config retrying embeddings at the given interval. */
  public LongTermMemoryConfig withEmbedRetry(Duration interval) {
    return new LongTermMemoryConfig(
        store, stateDirectory, postgres, embedder, interval, defaultUser, perAgent, limits, skills);
  }

  /** This config keeping skills so. */
  public LongTermMemoryConfig withSkills(SkillsConfig given) {
    return new LongTermMemoryConfig(
        store,
        stateDirectory,
        postgres,
        embedder,
        embedRetry,
        defaultUser,
        perAgent,
        limits,
        given);
  }

  /** The longest vector Lucene's default codec indexes. */
  static final int LUCENE_MAX_DIMENSION = 1024;

  private static final Pattern TABLE = Pattern.compile("[a-z_][a-z0-9_]{0,40}");
  private static final String AT = "/" + LongTermMemoryExtension.NAME;

  /**
   * Reads a section its schema accepts, adding its problems to the reading's; the password's
   * variable is read from the given environment. The result is only meaningful when no problem was
   * added.
   */
  public static LongTermMemoryConfig read(
      JsonNode section, SectionReading reading, java.util.Map<String, String> environment) {
    ConfigProblems problems = reading.problems();
    Raw raw = ConfigSections.bind(LongTermMemoryExtension.NAME, section, Raw.class);
    Store store = Store.LUCENE;
    if (raw.store() != null) {
      try {
        store = Store.valueOf(raw.store().strip().toUpperCase(Locale.ROOT));
      } catch (IllegalArgumentException e) {
        problems.atValue(
            AT + "/store",
            "'long_term_memory.store' is '" + raw.store() + "' (expected lucene or postgres)");
      }
    }
    Path state = reading.directory().resolve(DEFAULT_STATE_DIRECTORY);
    if (raw.stateDir() != null) {
      try {
        state = reading.directory().resolve(raw.stateDir().strip());
      } catch (InvalidPathException e) {
        problems.atValue(
            AT + "/state_dir",
            "'long_term_memory.state_dir' is '" + raw.stateDir() + "' (expected a directory)");
      }
    }
    Optional<Postgres> postgres = Optional.empty();
    if (store == Store.POSTGRES && raw.postgres() == null) {
      problems.atValue(
          AT + "/store",
          "'long_term_memory.store' is postgres but there is no 'postgres' section (url, user)");
    }
    if (raw.postgres() != null) {
      RawPostgres p = raw.postgres();
      if (p.url() == null || !p.url().startsWith("jdbc:postgresql:")) {
        problems.atValue(
            AT + "/postgres" + (p.url() == null ? "" : "/url"),
            "'long_term_memory.postgres.url' is "
                + (p.url() == null ? "missing" : "'" + p.url() + "'")
                + " (expected a JDBC URL such as jdbc:postgresql://127.0.0.1:5432/toolhost)");
      }
      Optional<String> passwordEnv = variable(p.passwordEnv(), "postgres/password_env", problems);
      String prefix = p.tablePrefix() == null ? "toolhost_memory" : p.tablePrefix();
      if (!TABLE.matcher(prefix).matches()) {
        problems.atValue(
            AT + "/postgres/table_prefix",
            "'long_term_memory.postgres.table_prefix' is '"
                + prefix
                + "' (expected lower-case letters, digits and _, such as toolhost_memory)");
      }
      postgres =
          Optional.of(
              new Postgres(
                  p.url() == null ? "" : p.url(),
                  p.user() == null ? System.getProperty("user.name", "postgres") : p.user(),
                  passwordEnv.map(environment::get),
                  prefix,
                  passwordEnv));
    }
    EmbedderChoice embedder = EmbedderChoice.bundled();
    if (raw.embedder() != null) {
      embedder = embedder(raw.embedder(), problems);
    }
    if (store == Store.LUCENE
        && embedder.endpoint().isPresent()
        && embedder.endpoint().get().dimension() > LUCENE_MAX_DIMENSION) {
      problems.atValue(
          AT + "/embedder/dimension",
          "'long_term_memory.embedder.dimension' is "
              + embedder.endpoint().get().dimension()
              + ", but the lucene store holds vectors of at most "
              + LUCENE_MAX_DIMENSION
              + " dimensions: ask the endpoint for fewer (dimension: 1024 with send_dimensions:"
              + " true, where the model can shorten its vectors) or use store: postgres");
    }
    Duration retry = duration(raw.embedRetry(), Duration.ofSeconds(30), "embed_retry", problems);
    String user = raw.defaultUser() == null ? "default" : raw.defaultUser().strip();
    if (user.isEmpty()) {
      problems.atValue(AT + "/default_user", "'long_term_memory.default_user' is empty");
      user = "default";
    }
    Limits limits = Limits.defaults();
    if (raw.limits() != null) {
      RawLimits l = raw.limits();
      int content =
          range(
              l.maxContentBytes(),
              limits.maxContentBytes(),
              1,
              1 << 20,
              "limits/max_content_bytes",
              problems);
      int max = range(l.maxResults(), limits.maxResults(), 1, 1000, "limits/max_results", problems);
      int given =
          range(
              l.defaultResults(),
              Math.min(limits.defaultResults(), max),
              1,
              1000,
              "limits/default_results",
              problems);
      if (given > max) {
        problems.atValue(
            AT + "/limits/default_results",
            "'long_term_memory.limits.default_results' is "
                + given
                + ", above max_results ("
                + max
                + ")");
      }
      limits = new Limits(content, Math.min(given, max), max);
    }
    SkillsConfig skills = SkillsConfig.defaults();
    if (raw.skills() != null) {
      RawSkills k = raw.skills();
      boolean shared = false;
      if (k.scope() != null) {
        switch (k.scope().strip().toLowerCase(Locale.ROOT)) {
          case "user" -> shared = false;
          case "shared" -> shared = true;
          default ->
              problems.atValue(
                  AT + "/skills/scope",
                  "'long_term_memory.skills.scope' is '"
                      + k.scope()
                      + "' (expected user or shared)");
        }
      }
      int content =
          range(
              k.maxContentBytes(),
              skills.maxContentBytes(),
              1,
              1 << 20,
              "skills/max_content_bytes",
              problems);
      int count =
          range(k.maxSkills(), skills.maxSkills(), 1, 100_000, "skills/max_skills", problems);
      skills = new SkillsConfig(shared, content, count);
    }
    return new LongTermMemoryConfig(
        store,
        state,
        postgres,
        embedder,
        retry,
        user,
        raw.perAgent() != Boolean.FALSE,
        limits,
        skills);
  }

  private static EmbedderChoice embedder(RawEmbedder raw, ConfigProblems problems) {
    String provider =
        raw.provider() == null ? "bundled" : raw.provider().strip().toLowerCase(Locale.ROOT);
    if (provider.equals("bundled")) {
      if (raw.baseUrl() != null || raw.model() != null) {
        problems.atValue(
            AT + "/embedder",
            "'long_term_memory.embedder' sets base_url or model but its provider is bundled"
                + " (set 'provider: endpoint' to use an endpoint)");
      }
      return EmbedderChoice.bundled();
    }
    if (!provider.equals("endpoint")) {
      problems.atValue(
          AT + "/embedder/provider",
          "'long_term_memory.embedder.provider' is '"
              + raw.provider()
              + "' (expected bundled or endpoint)");
      return EmbedderChoice.bundled();
    }
    URI url = URI.create("http://invalid.invalid");
    if (raw.baseUrl() == null) {
      problems.atValue(
          AT + "/embedder",
          "'long_term_memory.embedder' uses an endpoint but gives no 'base_url' (such as"
              + " https://api.openai.com/v1)");
    } else {
      try {
        URI given = new URI(raw.baseUrl().strip());
        if (given.getHost() == null
            || !("http".equalsIgnoreCase(given.getScheme())
                || "https".equalsIgnoreCase(given.getScheme()))) {
          throw new URISyntaxException(raw.baseUrl(), "not http");
        }
        url = given;
      } catch (URISyntaxException e) {
        problems.atValue(
            AT + "/embedder/base_url",
            "'long_term_memory.embedder.base_url' is '"
                + raw.baseUrl()
                + "' (expected an http or https URL, such as https://api.openai.com/v1)");
      }
    }
    if (raw.model() == null || raw.model().isBlank()) {
      problems.atValue(
          AT + "/embedder", "'long_term_memory.embedder' uses an endpoint but names no 'model'");
    }
    int dimension = 0;
    if (raw.dimension() == null) {
      problems.atValue(
          AT + "/embedder",
          "'long_term_memory.embedder' uses an endpoint but gives no 'dimension' (the length of"
              + " its vectors, such as 1536)");
    } else {
      dimension = range(raw.dimension(), 0, 1, 4096, "embedder/dimension", problems);
    }
    return new EmbedderChoice(
        Optional.of(
            new Endpoint(
                url,
                raw.model() == null ? "" : raw.model().strip(),
                dimension,
                raw.sendDimensions() != null && raw.sendDimensions(),
                variable(raw.apiKeyEnv(), "embedder/api_key_env", problems),
                duration(raw.timeout(), Duration.ofSeconds(30), "embedder/timeout", problems))));
  }

  private static int range(
      Integer raw, int fallback, int min, int max, String path, ConfigProblems problems) {
    return Counts.read(raw, fallback, min, max, AT + "/" + path, problems);
  }

  private static Duration duration(
      String raw, Duration fallback, String path, ConfigProblems problems) {
    return Durations.read(raw, fallback, AT + "/" + path, problems).orElse(fallback);
  }

  private static Optional<String> variable(String raw, String path, ConfigProblems problems) {
    return EnvironmentNames.read(raw, AT + "/" + path, Optional.empty(), "secret", problems);
  }

  // ---- the section's raw shape: every key optional, so every field may be null ----

  record Raw(
      @JsonPropertyDescription("lucene or postgres") String store,
      String stateDir,
      RawPostgres postgres,
      RawEmbedder embedder,
      @DurationText String embedRetry,
      String defaultUser,
      @JsonPropertyDescription(
              "whether an agent's memories are its own (true) or shared by the user's agents")
          Boolean perAgent,
      RawLimits limits,
      RawSkills skills) {}

  record RawPostgres(String url, String user, String passwordEnv, String tablePrefix) {}

  record RawEmbedder(
      @JsonPropertyDescription("bundled or endpoint") String provider,
      String baseUrl,
      String model,
      Integer dimension,
      Boolean sendDimensions,
      String apiKeyEnv,
      @DurationText String timeout) {}

  record RawLimits(Integer maxContentBytes, Integer defaultResults, Integer maxResults) {}

  record RawSkills(
      @JsonPropertyDescription("user or shared") String scope,
      Integer maxContentBytes,
      Integer maxSkills) {}
}
