package dev.toolhost.scheduling;

import java.net.URI;
import java.time.Instant;
import java.time.ZoneId;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;
import tools.jackson.databind.JsonNode;

/**
 * A scheduled task is what {@code schedule_task} stores: a name, when it fires (a cron expression
 * on a zone's wall clock), what it does (the description as an agent turn's prompt, or a tool call)
 * and whether it fires only once, and whose it is.
 *
 * <p>A task belongs to the user who scheduled it ({@link Owner}): one user's name for a task never
 * collides with another's, since the store keys a task by its {@link #id()}, its owner's user and
 * its name; and it fires within the rights of the profile it was scheduled under.
 *
 * @param name 1 to 64 characters of {@code [A-Za-z0-9_.-]}, unique among its owner's tasks
 * @param cron when it fires
 * @param zone the zone whose wall clock the cron reads
 * @param description what the task is for: the prompt of the agent turn it runs, when it names no
 *     tool
 * @param runOnce whether it fires once and is then removed
 * @param tool the tool it calls, when it is a tool call rather than an agent turn
 * @param arguments the tool's arguments (an object); empty for an agent turn
 * @param created when it was scheduled
 * @param owner who scheduled it, and under which profile
 * @param webhook where each run's result is posted as well, when the task says so ({@code delivery:
 *     {webhook: URL}}); only to a host the config's {@code scheduling.webhooks} allows
 */
public record ScheduledTask(
    String name,
    CronExpression cron,
    ZoneId zone,
    String description,
    boolean runOnce,
    Optional<String> tool,
    Optional<JsonNode> arguments,
    Instant created,
    Owner owner,
    Optional<URI> webhook) {

  /** What a task's name may be. */
  public static final Pattern NAME = Pattern.compile("[A-Za-z0-9_.-]{1,64}");

  public ScheduledTask {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(cron, "cron");
    Objects.requireNonNull(zone, "zone");
    Objects.requireNonNull(description, "description");
    Objects.requireNonNull(tool, "tool");
    Objects.requireNonNull(arguments, "arguments");
    Objects.requireNonNull(created, "created");
    Objects.requireNonNull(owner, "owner");
    Objects.requireNonNull(webhook, "webhook");
    if (!NAME.matcher(name).matches()) {
      throw new IllegalArgumentException(
          "A task's name is 1 to 64 characters of A-Z, a-z, 0-9, '_', '.' and '-': '" + name + "'");
    }
  }

  /** A task that runs an agent turn with the description as its prompt. */
  public static ScheduledTask turn(
      String name,
      CronExpression cron,
      ZoneId zone,
      String description,
      boolean runOnce,
      Instant created) {
    return new ScheduledTask(
        name,
        cron,
        zone,
        description,
        runOnce,
        Optional.empty(),
        Optional.empty(),
        created,
        Owner.NONE,
        Optional.empty());
  }

  /** A task that calls a tool with the given arguments. */
  public static ScheduledTask toolCall(
      String name,
      CronExpression cron,
      ZoneId zone,
      String description,
      boolean runOnce,
      String tool,
      JsonNode arguments,
      Instant created) {
    return new ScheduledTask(
        name,
        cron,
        zone,
        description,
        runOnce,
        Optional.of(tool),
        Optional.of(arguments),
        created,
        Owner.NONE,
        Optional.empty());
  }

  /** This task, owned as given. */
  public ScheduledTask withOwner(Owner given) {
    return new ScheduledTask(
        name, cron, zone, description, runOnce, tool, arguments, created, given, webhook);
  }

  /** This task, with each run's result posted to the URL as well. */
  public ScheduledTask withWebhook(URI url) {
    return new ScheduledTask(
        name, cron, zone, description, runOnce, tool, arguments, created, owner, Optional.of(url));
  }

  /**
   * The task's key in the store: its owner's user and its name ({@code alice/remind}), or its name
   * alone for a task no user owns. A name holds no {@code /}, so the key is read back unambiguously
   * ({@link #nameOf}).
   */
  public String id() {
    return owner.id(name);
  }

  /** The name in a task's key. */
  static String nameOf(String id) {
    return id.substring(id.lastIndexOf('/') + 1);
  }

  /**
   * An owner is who scheduled a task: the user the call acted for, the profile it was dispatched
   * under (each fire runs within it as well as within {@code scheduled}), and the conversation it
   * came from.
   *
   * @param user the user, when the call named one; tasks of no user are the host's default user's
   * @param profile the caller's profile; empty for a task scheduled before tasks had owners, which
   *     fires under {@code scheduled} alone
   * @param session the conversation that scheduled it, when there was one
   */
  public record Owner(Optional<String> user, Optional<String> profile, Optional<String> session) {

    /** No owner: a task stored before tasks had owners, or made in code. */
    public static final Owner NONE =
        new Owner(Optional.empty(), Optional.empty(), Optional.empty());

    public Owner {
      Objects.requireNonNull(user, "user");
      Objects.requireNonNull(profile, "profile");
      Objects.requireNonNull(session, "session");
    }

    /** The key of this owner's task of that name. */
    public String id(String name) {
      return user.map(owner -> owner + "/" + name).orElse(name);
    }

    /** Whether the task is this user's: the same user, or no user on both sides. */
    public boolean ownedBy(Optional<String> asking) {
      return user.equals(asking);
    }
  }
}
