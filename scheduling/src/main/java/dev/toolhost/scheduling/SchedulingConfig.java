package dev.toolhost.scheduling;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import dev.toolhost.core.spi.ConfigProblems;
import dev.toolhost.core.spi.ConfigSections;
import dev.toolhost.core.spi.ConfigSections.DurationText;
import dev.toolhost.core.spi.Counts;
import dev.toolhost.core.spi.Durations;
import dev.toolhost.core.spi.SectionReading;
import dev.toolhost.core.spi.Storage;
import dev.toolhost.web.OutboundException;
import dev.toolhost.web.OutboundHttp;
import java.nio.file.Path;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.ZoneId;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;
import tools.jackson.databind.JsonNode;

/**
 * A scheduling config is the {@code scheduling:} section of a host config: where tasks are stored,
 * the zone their crons read by default, what a fire runs, and the limits.
 *
 * <pre>{@code
 * scheduling:
 *   store: embedded                # or a JDBC URL: jdbc:postgresql://127.0.0.1:5432/test
 *   state_dir: state               # embedded: the database file's directory
 *   user: toolhost                 # a JDBC store's user
 *   password_env: SCHEDULES_DB_PASSWORD  # the variable that holds its password
 *   zone: Europe/Paris             # IANA; the system zone by default
 *   agent: assistant               # the agent whose turn a fire runs; none: tool calls only
 *   grace: 10m                     # a fire found later than this is recorded missed
 *   max_tasks: 100
 *   max_run_time: 10m
 *   poll_interval: 1s              # how often the store is asked for due tasks
 *   heartbeat: 30s                 # a host silent for 4 heartbeats has its runs marked failed
 *   fires_may_schedule: false      # fired tasks may not schedule tasks
 *   webhooks:                      # off unless present: where a task's delivery may post
 *     allow: [hooks.example.com, "*.example.org"]   # host names, *.domain, IP addresses
 *     timeout: 10s                 # one post, connection included
 * }</pre>
 *
 * @param store where tasks are stored
 * @param zone the zone a task's cron reads when the task names none
 * @param agent the agent whose turn a fire runs (its description is the prompt); empty: tasks may
 *     only call tools
 * @param grace how late a fire may run; a later one is recorded missed
 * @param maxTasks the most tasks the store may hold
 * @param maxRunTime how long one run may take
 * @param pollInterval how often the store is asked for due tasks
 * @param heartbeat how often a host running a fire says so
 * @param firesMaySchedule whether fired tasks may schedule tasks ({@code schedule_task} stays in
 *     the {@code scheduled} profile); no by default, so that tasks cannot multiply unattended
 * @param webhooks where a task's {@code delivery: {webhook: URL}} may post its results; empty:
 *     tasks take no webhook
 */
public record SchedulingConfig(
    Storage store,
    ZoneId zone,
    Optional<String> agent,
    Duration grace,
    int maxTasks,
    Duration maxRunTime,
    Duration pollInterval,
    Duration heartbeat,
    boolean firesMaySchedule,
    Optional<Webhooks> webhooks) {

  public SchedulingConfig {
    Objects.requireNonNull(webhooks, "webhooks");
    Objects.requireNonNull(store, "store");
    Objects.requireNonNull(zone, "zone");
    Objects.requireNonNull(agent, "agent");
    Objects.requireNonNull(grace, "grace");
    Objects.requireNonNull(maxRunTime, "maxRunTime");
    Objects.requireNonNull(pollInterval, "pollInterval");
    Objects.requireNonNull(heartbeat, "heartbeat");
  }

  /** The most tasks a config may allow. */
  public static final int MAX_TASKS = 100_000;

  /** How long one webhook post may take by default. */
  public static final Duration WEBHOOK_TIMEOUT = Duration.ofSeconds(10);

  /**
   * Webhooks are where a task's results may be posted: only to the hosts the operator lists, each a
   * host name, {@code *.} and a domain, or an IP address. A listed host is reached wherever it
   * resolves, internal addresses included, as the web section's allow-list opens a host; a cloud
   * metadata address never.
   *
   * @param allow the hosts, lower case, IPv6 addresses without brackets
   * @param timeout how long one post may take
   */
  public record Webhooks(Set<String> allow, Duration timeout) {
    public Webhooks {
      allow = Set.copyOf(allow);
      Objects.requireNonNull(timeout, "timeout");
    }
  }

  /** The defaults, with tasks stored under the directory: the system zone, no agent. */
  public static SchedulingConfig defaults(Path directory) {
    return builder(directory).build();
  }

  /** A builder of a config with tasks stored under the directory, starting from the defaults. */
  public static Builder builder(Path directory) {
    return new Builder(new Storage.Embedded(directory));
  }

  /** A builder starting from this config. */
  public Builder toBuilder() {
    Builder builder = new Builder(store);
    builder.zone = zone;
    builder.agent = agent;
    builder.grace = grace;
    builder.maxTasks = maxTasks;
    builder.maxRunTime = maxRunTime;
    builder.pollInterval = pollInterval;
    builder.heartbeat = heartbeat;
    builder.firesMaySchedule = firesMaySchedule;
    builder.webhooks = webhooks;
    return builder;
  }

  /** A builder of a {@link SchedulingConfig}; each value starts at its default. */
  public static final class Builder {
    private Storage store;
    private ZoneId zone = ZoneId.systemDefault();
    private Optional<String> agent = Optional.empty();
    private Duration grace = Duration.ofMinutes(10);
    private int maxTasks = 100;
    private Duration maxRunTime = Duration.ofMinutes(10);
    private Duration pollInterval = Duration.ofSeconds(1);
    private Duration heartbeat = Duration.ofSeconds(30);
    private boolean firesMaySchedule;
    private Optional<Webhooks> webhooks = Optional.empty();

    private Builder(Storage store) {
      this.store = Objects.requireNonNull(store, "store");
    }

    /** Where tasks are stored (an H2 file under the builder's directory by default). */
    public Builder store(Storage store) {
      this.store = Objects.requireNonNull(store, "store");
      return this;
    }

    /** The zone crons read (the system zone by default). */
    public Builder zone(ZoneId zone) {
      this.zone = Objects.requireNonNull(zone, "zone");
      return this;
    }

    /** The agent whose turn a fire runs (none by default: tool calls only). */
    public Builder agent(String agent) {
      this.agent = Optional.of(agent);
      return this;
    }

    /** How late a fire may run (10 minutes by default). */
    public Builder grace(Duration grace) {
      this.grace = Objects.requireNonNull(grace, "grace");
      return this;
    }

    /** The most tasks the store may hold (100 by default). */
    public Builder maxTasks(int maxTasks) {
      this.maxTasks = maxTasks;
      return this;
    }

    /** How long one run may take (10 minutes by default). */
    public Builder maxRunTime(Duration maxRunTime) {
      this.maxRunTime = Objects.requireNonNull(maxRunTime, "maxRunTime");
      return this;
    }

    /** How often the store is asked for due tasks (every second by default). */
    public Builder pollInterval(Duration pollInterval) {
      this.pollInterval = Objects.requireNonNull(pollInterval, "pollInterval");
      return this;
    }

    /** How often a host running a fire says so (every 30 seconds by default). */
    public Builder heartbeat(Duration heartbeat) {
      this.heartbeat = Objects.requireNonNull(heartbeat, "heartbeat");
      return this;
    }

    /** Whether fired tasks may schedule tasks (no by default). */
    public Builder firesMaySchedule(boolean may) {
      this.firesMaySchedule = may;
      return this;
    }

    /** Where tasks' results may be posted (nowhere by default). */
    public Builder webhooks(Webhooks allowed) {
      this.webhooks = Optional.of(allowed);
      return this;
    }

    /** The config. */
    public SchedulingConfig build() {
      return new SchedulingConfig(
          store,
          zone,
          agent,
          grace,
          maxTasks,
          maxRunTime,
          pollInterval,
          heartbeat,
          firesMaySchedule,
          webhooks);
    }
  }

  private static final Pattern AGENT = Pattern.compile("[A-Za-z0-9_.-]{1,64}");

  /**
   * Reads a section its schema accepts, adding its problems to the reading's; the result is only
   * meaningful when none was added. A relative {@code state_dir} is resolved against the config
   * file's directory.
   */
  public static SchedulingConfig read(JsonNode section, SectionReading reading) {
    ConfigProblems problems = reading.problems();
    Raw raw = ConfigSections.bind(SchedulingExtension.NAME, section, Raw.class);
    SchedulingConfig defaults = defaults(reading.directory().resolve("state"));
    Storage store =
        Storage.read(
            SchedulingExtension.NAME,
            new Storage.Keys(raw.store(), raw.stateDir(), raw.user(), raw.passwordEnv()),
            "the schedules' database file",
            reading.directory().resolve("state"),
            List.of("jdbc:postgresql://", "jdbc:h2:"),
            "SCHEDULES_DB_PASSWORD",
            reading);
    ZoneId zone = defaults.zone();
    if (raw.zone() != null) {
      try {
        zone = ZoneId.of(raw.zone().strip());
      } catch (DateTimeException e) {
        problems.atValue(
            "/scheduling/zone",
            "'scheduling.zone' is '"
                + raw.zone()
                + "' (expected an IANA zone name, such as Europe/Paris or America/New_York)");
      }
    }
    Optional<String> agent = Optional.empty();
    if (raw.agent() != null) {
      if (AGENT.matcher(raw.agent()).matches()) {
        agent = Optional.of(raw.agent());
      } else {
        problems.atValue(
            "/scheduling/agent",
            "'scheduling.agent' is '"
                + raw.agent()
                + "' (expected the name of an agent of the 'agents:' section)");
      }
    }
    int maxTasks =
        Counts.read(
            raw.maxTasks(), defaults.maxTasks(), 1, MAX_TASKS, "/scheduling/max_tasks", problems);
    Duration grace = duration(raw.grace(), defaults.grace(), "grace", problems);
    Duration maxRunTime =
        duration(raw.maxRunTime(), defaults.maxRunTime(), "max_run_time", problems);
    Duration poll =
        duration(raw.pollInterval(), defaults.pollInterval(), "poll_interval", problems);
    Duration heartbeat = duration(raw.heartbeat(), defaults.heartbeat(), "heartbeat", problems);
    if (grace.compareTo(poll.multipliedBy(2)) < 0) {
      problems.atValue(
          "/scheduling/grace",
          "'scheduling.grace' is "
              + text(grace)
              + ", shorter than twice 'scheduling.poll_interval' ("
              + text(poll)
              + "): fires would be recorded missed while they wait for a poll");
    }
    Builder builder =
        defaults.toBuilder()
            .store(store)
            .zone(zone)
            .grace(grace)
            .maxTasks(maxTasks)
            .maxRunTime(maxRunTime)
            .pollInterval(poll)
            .heartbeat(heartbeat)
            .firesMaySchedule(raw.firesMaySchedule() != null && raw.firesMaySchedule());
    agent.ifPresent(builder::agent);
    if (raw.webhooks() != null) {
      builder.webhooks(webhooks(raw.webhooks(), problems));
    }
    return builder.build();
  }

  private static Webhooks webhooks(RawWebhooks raw, ConfigProblems problems) {
    Set<String> allow = new LinkedHashSet<>();
    List<String> entries = raw.allow() == null ? List.of() : raw.allow();
    for (int i = 0; i < entries.size(); i++) {
      String entry = entries.get(i).strip().toLowerCase(Locale.ROOT);
      String bare =
          entry.startsWith("[") && entry.endsWith("]")
              ? entry.substring(1, entry.length() - 1)
              : entry;
      String name = bare.startsWith("*.") ? bare.substring(2) : bare;
      boolean valid = !name.isEmpty() && !name.contains("/") && !name.contains("*");
      if (valid) {
        try {
          // The web module's check of a URL's host: the name or address a post would reach.
          OutboundHttp.checkedUrl("http://" + (name.contains(":") ? "[" + name + "]" : name) + "/");
        } catch (OutboundException e) {
          valid = false;
        }
      }
      if (valid) {
        allow.add(bare);
      } else {
        problems.atValue(
            "/scheduling/webhooks/allow/" + i,
            "'scheduling.webhooks.allow["
                + i
                + "]' is '"
                + entries.get(i)
                + "' (expected a host name such as hooks.example.com or *.example.org, or an IP"
                + " address)");
      }
    }
    if (entries.isEmpty()) {
      problems.atValue(
          "/scheduling/webhooks",
          "'scheduling.webhooks' allows no host: list the hosts results may be posted to in"
              + " 'scheduling.webhooks.allow', or leave 'webhooks' out to take no webhooks");
    }
    Duration timeout = duration(raw.timeout(), WEBHOOK_TIMEOUT, "webhooks/timeout", problems);
    return new Webhooks(allow, timeout);
  }

  /** A duration as the config would say it: 500ms, 30s, 10m, 1h. */
  static String text(Duration duration) {
    long millis = duration.toMillis();
    if (millis % 1000 != 0) {
      return millis + "ms";
    }
    long seconds = millis / 1000;
    if (seconds % 3600 == 0) {
      return seconds / 3600 + "h";
    }
    return seconds % 60 == 0 ? seconds / 60 + "m" : seconds + "s";
  }

  private static Duration duration(
      String raw, Duration fallback, String key, ConfigProblems problems) {
    return Durations.read(raw, fallback, "/scheduling/" + key, problems).orElse(fallback);
  }

  // ---- the section's raw shape: every key optional, so every field may be null ----

  record Raw(
      @JsonPropertyDescription("embedded, or a JDBC URL such as jdbc:postgresql://host:5432/db")
          String store,
      @JsonPropertyDescription("the embedded database's directory (state by default)")
          String stateDir,
      @JsonPropertyDescription("a JDBC store's user") String user,
      @JsonPropertyDescription("the environment variable that holds a JDBC store's password")
          String passwordEnv,
      @JsonPropertyDescription("an IANA zone name, such as Europe/Paris") String zone,
      @JsonPropertyDescription("the agent whose turn a fire runs") String agent,
      @DurationText String grace,
      @JsonPropertyDescription("the most tasks the store may hold") Integer maxTasks,
      @DurationText String maxRunTime,
      @DurationText String pollInterval,
      @DurationText String heartbeat,
      @JsonPropertyDescription("whether fired tasks may schedule tasks (false by default)")
          Boolean firesMaySchedule,
      @JsonPropertyDescription("where a task's delivery may post its results (off when absent)")
          RawWebhooks webhooks) {}

  record RawWebhooks(
      @JsonPropertyDescription("host names (or *.domain) and IP addresses results may be posted to")
          List<String> allow,
      @DurationText String timeout) {}
}
