package dev.toolhost.browser;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import dev.toolhost.core.spi.ConfigProblems;
import dev.toolhost.core.spi.ConfigSections;
import dev.toolhost.core.spi.ConfigSections.DurationText;
import dev.toolhost.core.spi.Counts;
import dev.toolhost.core.spi.Durations;
import dev.toolhost.core.spi.EnvironmentNames;
import dev.toolhost.core.spi.SectionReading;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import tools.jackson.databind.JsonNode;

/**
 * A browser config is the {@code browser:} section of a host config: which Chromium runs, where its
 * profiles and screenshots go, its time and size caps, whether {@code evaluate} may run scripts,
 * and the secrets {@code type} may type, by environment variable name.
 *
 * <pre>{@code
 * browser:
 *   enabled: true                  # false: the section is kept but no tool is registered
 *   binary: /usr/bin/chromium      # Debian's chromium; never downloaded
 *   headless: true
 *   profile_dir: /tmp              # under toolhost-browsers-PID here, deleted on close
 *   screenshot_dir: /var/lib/toolhost/screenshots   # relative: to the config file's directory
 *   max_browsers: 4                # per host; the oldest idle one is closed for a new one
 *   idle_timeout: 5m               # a browser unused this long is closed
 *   start_timeout: 20s
 *   navigation_timeout: 30s
 *   max_refs: 200                  # interactive elements numbered in one snapshot
 *   max_name_chars: 200
 *   max_value_chars: 100
 *   max_text_chars: 20000          # the page text a snapshot shows
 *   chunk_threshold: 8000          # longer content() goes to working memory in chunks
 *   chunk_length: 4000
 *   chunk_ttl: 30m
 *   evaluate: false                # run the model's JavaScript
 *   secrets: [SITE_PASSWORD]       # variables type(secret=...) may type
 * }</pre>
 *
 * <p>Every page the browser loads is checked by the {@code web:} section's outbound policy, so a
 * host with this section needs that one too.
 */
record BrowserConfig(
    boolean enabled,
    Path binary,
    boolean headless,
    Path profileDir,
    Path screenshotDir,
    int maxBrowsers,
    Duration idleTimeout,
    Duration startTimeout,
    Duration navigationTimeout,
    int maxRefs,
    int maxNameChars,
    int maxValueChars,
    int maxTextChars,
    int chunkThreshold,
    int chunkLength,
    Duration chunkTtl,
    boolean evaluate,
    List<String> secrets) {

  BrowserConfig {
    Objects.requireNonNull(binary, "binary");
    Objects.requireNonNull(profileDir, "profileDir");
    Objects.requireNonNull(screenshotDir, "screenshotDir");
    Objects.requireNonNull(idleTimeout, "idleTimeout");
    Objects.requireNonNull(startTimeout, "startTimeout");
    Objects.requireNonNull(navigationTimeout, "navigationTimeout");
    Objects.requireNonNull(chunkTtl, "chunkTtl");
    secrets = List.copyOf(secrets);
  }

  static final Path BINARY = Path.of("/usr/bin/chromium");

  /** The defaults, with profiles and screenshots under the system's temporary directory. */
  static BrowserConfig defaults() {
    Path tmp = Path.of(System.getProperty("java.io.tmpdir"));
    return new BrowserConfig(
        true,
        BINARY,
        true,
        tmp,
        tmp.resolve("toolhost-screenshots"),
        4,
        Duration.ofMinutes(5),
        Duration.ofSeconds(20),
        Duration.ofSeconds(30),
        200,
        200,
        100,
        20_000,
        8_000,
        4_000,
        Duration.ofMinutes(30),
        false,
        List.of());
  }

  /**
   * Reads a section its schema accepts, adding its problems to the reading's; the result is only
   * meaningful when none was added.
   */
  static BrowserConfig read(JsonNode section, SectionReading reading) {
    ConfigProblems problems = reading.problems();
    Raw raw = ConfigSections.bind(BrowserExtension.NAME, section, Raw.class);
    BrowserConfig d = defaults();
    List<String> secrets = new ArrayList<>();
    List<String> names = raw.secrets() == null ? List.of() : raw.secrets();
    for (int i = 0; i < names.size(); i++) {
      String name = names.get(i);
      if (!EnvironmentNames.isName(name)) {
        problems.atValue(
            "/browser/secrets/" + i,
            "'browser.secrets["
                + i
                + "]' is '"
                + name
                + "' (expected the name of an environment variable, such as SITE_PASSWORD; the"
                + " secret itself never goes in the config)");
      } else {
        secrets.add(name);
      }
    }
    return new BrowserConfig(
        raw.enabled() == null || raw.enabled(),
        path(raw.binary(), d.binary(), reading),
        raw.headless() == null || raw.headless(),
        path(raw.profileDir(), d.profileDir(), reading),
        path(raw.screenshotDir(), d.screenshotDir(), reading),
        count(raw.maxBrowsers(), d.maxBrowsers(), 1, 64, "max_browsers", problems),
        duration(raw.idleTimeout(), d.idleTimeout(), "idle_timeout", problems),
        duration(raw.startTimeout(), d.startTimeout(), "start_timeout", problems),
        duration(raw.navigationTimeout(), d.navigationTimeout(), "navigation_timeout", problems),
        count(raw.maxRefs(), d.maxRefs(), 1, 10_000, "max_refs", problems),
        count(raw.maxNameChars(), d.maxNameChars(), 10, 10_000, "max_name_chars", problems),
        count(raw.maxValueChars(), d.maxValueChars(), 10, 10_000, "max_value_chars", problems),
        count(raw.maxTextChars(), d.maxTextChars(), 0, 1_000_000, "max_text_chars", problems),
        count(
            raw.chunkThreshold(), d.chunkThreshold(), 100, 10_000_000, "chunk_threshold", problems),
        count(raw.chunkLength(), d.chunkLength(), 100, 10_000_000, "chunk_length", problems),
        duration(raw.chunkTtl(), d.chunkTtl(), "chunk_ttl", problems),
        raw.evaluate() != null && raw.evaluate(),
        secrets);
  }

  private static Path path(String raw, Path fallback, SectionReading reading) {
    if (raw == null || raw.isBlank()) {
      return fallback;
    }
    return reading.directory().resolve(raw.strip()).toAbsolutePath().normalize();
  }

  private static int count(
      Integer raw, int fallback, int min, int max, String key, ConfigProblems problems) {
    return Counts.read(raw, fallback, min, max, "/browser/" + key, problems);
  }

  private static Duration duration(
      String raw, Duration fallback, String key, ConfigProblems problems) {
    return Durations.read(raw, fallback, "/browser/" + key, problems).orElse(fallback);
  }

  /** This config with the given screenshot and profile directories (tests). */
  BrowserConfig withDirectories(Path profiles, Path screenshots) {
    return new BrowserConfig(
        enabled,
        binary,
        headless,
        profiles,
        screenshots,
        maxBrowsers,
        idleTimeout,
        startTimeout,
        navigationTimeout,
        maxRefs,
        maxNameChars,
        maxValueChars,
        maxTextChars,
        chunkThreshold,
        chunkLength,
        chunkTtl,
        evaluate,
        secrets);
  }

  // ---- the section's raw shape: every key optional, so every field may be null ----

  record Raw(
      @JsonPropertyDescription("false keeps the section but registers no browser tool")
          Boolean enabled,
      @JsonPropertyDescription("the Chromium executable (Debian's: /usr/bin/chromium)")
          String binary,
      Boolean headless,
      @JsonPropertyDescription("where each session's fresh profile directory is made")
          String profileDir,
      @JsonPropertyDescription("where screenshots are written; never outside it")
          String screenshotDir,
      @JsonPropertyDescription("the most browsers open at once on this host") Integer maxBrowsers,
      @DurationText String idleTimeout,
      @DurationText String startTimeout,
      @DurationText String navigationTimeout,
      Integer maxRefs,
      Integer maxNameChars,
      Integer maxValueChars,
      Integer maxTextChars,
      Integer chunkThreshold,
      Integer chunkLength,
      @DurationText String chunkTtl,
      @JsonPropertyDescription("whether evaluate may run the model's JavaScript in the page")
          Boolean evaluate,
      @JsonPropertyDescription("environment variables whose values type(secret=NAME) may type")
          List<String> secrets) {}
}
