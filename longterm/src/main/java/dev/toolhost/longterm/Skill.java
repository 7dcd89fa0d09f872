package dev.toolhost.longterm;

import java.time.Instant;
import java.util.Objects;

/**
 * A skill is a procedure a model worked out and saved for later sessions: a markdown guide with a
 * name and a one-line description, kept in the long-term memory store beside the memories and
 * served among the tool guides.
 *
 * @param owner whose skill it is: a user, or {@link Skills#SHARED} when skills are shared
 * @param name its name, which follows the tool-name rule ({@code [A-Za-z0-9_.-]}, 1 to 128)
 * @param description one line on what it is for
 * @param content the procedure, in markdown
 * @param savedAt when it was last saved
 */
public record Skill(
    String owner, String name, String description, String content, Instant savedAt) {

  public Skill {
    Objects.requireNonNull(owner, "owner");
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(description, "description");
    Objects.requireNonNull(content, "content");
    Objects.requireNonNull(savedAt, "savedAt");
  }
}
