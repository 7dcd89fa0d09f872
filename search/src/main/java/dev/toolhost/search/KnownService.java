package dev.toolhost.search;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A known service is one entry of the service index: an agent with its skills, an MCP server, a
 * tool service or a group of remote workers with their tools, and a summary that says what it is
 * for.
 *
 * <p>Immutable. Its identity in the index is its kind and id together; everything in it is
 * searched: id, summary, tags, and each capability's name and description.
 *
 * @param id what the caller passes on to reach it: an agent's name, an MCP server's name, a tool
 *     service's id, a worker group's name
 * @param kind what kind of thing it is
 * @param summary what it is for, in a sentence; the main signal for choosing between candidates
 * @param capabilities its skills (an agent) or tools (everything else), in the order it gives them
 * @param tags more words to find it by
 */
public record KnownService(
    String id, ServiceKind kind, String summary, List<Capability> capabilities, List<String> tags) {

  public KnownService {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(summary, "summary");
    capabilities = List.copyOf(capabilities);
    tags = List.copyOf(tags);
    if (id.isBlank()) {
      throw new IllegalArgumentException("A known service needs an id.");
    }
  }

  /** A service with capabilities and no tags. */
  public KnownService(String id, ServiceKind kind, String summary, List<Capability> capabilities) {
    this(id, kind, summary, capabilities, List.of());
  }

  /**
   * A capability is one skill of an agent or one tool of a server, group or service.
   *
   * @param name the skill id or tool name
   * @param description what it does (examples of requests it handles may be added here)
   */
  public record Capability(String name, String description) {
    public Capability {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(description, "description");
    }
  }

  /** This service with another summary. */
  public KnownService withSummary(String summary) {
    return new KnownService(id, kind, summary, capabilities, tags);
  }

  /** This service with the capability added, or put in place of the one of the same name. */
  public KnownService withCapability(Capability capability) {
    List<Capability> changed = new ArrayList<>(capabilities.size() + 1);
    boolean replaced = false;
    for (Capability existing : capabilities) {
      if (existing.name().equals(capability.name())) {
        changed.add(capability);
        replaced = true;
      } else {
        changed.add(existing);
      }
    }
    if (!replaced) {
      changed.add(capability);
    }
    return new KnownService(id, kind, summary, changed, tags);
  }

  /** This service without the capability of that name. */
  public KnownService withoutCapability(String name) {
    return new KnownService(
        id,
        kind,
        summary,
        capabilities.stream().filter(c -> !c.name().equals(name)).toList(),
        tags);
  }

  /** The text the index searches. */
  String searchText() {
    StringBuilder text = new StringBuilder(id).append('\n').append(summary);
    for (String tag : tags) {
      text.append('\n').append(tag);
    }
    for (Capability capability : capabilities) {
      text.append('\n').append(capability.name()).append(": ").append(capability.description());
    }
    return text.toString();
  }
}
