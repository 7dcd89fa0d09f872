package dev.toolhost.longterm;

import com.fasterxml.jackson.annotation.JsonProperty;
import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.MethodTools;
import dev.toolhost.core.Param;
import dev.toolhost.core.Tool;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolException;
import dev.toolhost.core.ToolGuide;
import dev.toolhost.core.ToolResult;
import java.nio.charset.StandardCharsets;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Long-term memory tools let a model remember across conversations: {@code memory_save}, {@code
 * memory_recall} and {@code memory_delete}, source {@code builtin:long_term_memory}.
 *
 * <p>Every call acts for the call's user, or the configured default user when the call names none,
 * and, when memories are kept per agent, for the agent whose run made it ({@link Owner}); no call
 * sees or changes another user's memories, or another agent's, and such a memory is answered as one
 * that does not exist.
 */
public final class LongTermMemoryTools {

  /** The source of the long-term memory tools. */
  public static final String SOURCE = "builtin:long_term_memory";

  /** The guide to the long-term memory tools. */
  public static final ToolGuide GUIDE =
      ToolGuide.fromResource(
          "long-term-memory",
          "When to save a memory, which type to give it, and how to recall and update memories.",
          LongTermMemoryTools.class,
          "guides/long-term-memory.md");

  private static final JsonMapper JSON = JsonMapper.builder().build();

  /**
   * An association asked for by {@code memory_save} (bound by Jackson, hence the snake-case names
   * twice: for the schema and for the binding).
   *
   * @param targetId the earlier memory's id
   * @param relationType how the new memory relates to it
   * @param weight how strongly, 0 to 1
   */
  public record AssociationArgument(
      @JsonProperty("target_id")
          @Param(name = "target_id", description = "The id of an earlier memory.")
          String targetId,
      @JsonProperty("relation_type")
          @Param(
              name = "relation_type",
              description =
                  "related_to, updates (the new memory replaces the earlier one), contradicts,"
                      + " caused_by, result_of or part_of. Default: related_to.",
              required = false)
          String relationType,
      @Param(description = "How strongly, 0 to 1. Default: 0.5.", required = false)
          Double weight) {}

  private final LongTermMemory memory;
  private final LongTermMemoryConfig config;

  /** The tools over the given memory, under the config's limits and default user. */
  public LongTermMemoryTools(LongTermMemory memory, LongTermMemoryConfig config) {
    this.memory = Objects.requireNonNull(memory, "memory");
    this.config = Objects.requireNonNull(config, "config");
  }

  /** The three tools. */
  public List<ExecutableTool> tools() {
    return MethodTools.of(this, SOURCE);
  }

  @Tool(
      name = "memory_save",
      description =
          "Saves a memory that lasts across conversations: a fact, preference, decision, goal,"
              + " event, identity, observation or todo about the user or the work. Answers the new"
              + " memory's id. Link it to earlier memories with associations; use 'updates' when"
              + " it replaces one.",
      readOnly = false,
      destructive = false,
      idempotent = false,
      openWorld = false)
  public ToolResult memorySave(
      ToolCall call,
      @Param(description = "What to remember, in a sentence or a few, self-contained.")
          String content,
      @Param(
              name = "memory_type",
              description =
                  "identity, goal, decision, preference, fact, event, observation or todo."
                      + " Default: fact.")
          Optional<String> memoryType,
      @Param(
              description =
                  "0 to 1; default by type (identity 1.0, goal 0.9, decision and todo 0.8,"
                      + " preference 0.7, fact 0.6, event 0.4, observation 0.3).")
          Optional<Double> importance,
      @Param(description = "Where it came from (a conversation, a document, a tool).")
          Optional<String> source,
      @Param(description = "Links to earlier memories.")
          Optional<List<AssociationArgument>> associations) {
    if (content.isBlank()) {
      throw ToolException.invalidArguments("content is empty: say what to remember.");
    }
    int bytes = content.getBytes(StandardCharsets.UTF_8).length;
    if (bytes > config.limits().maxContentBytes()) {
      throw ToolException.invalidArguments(
          "content is "
              + bytes
              + " bytes; a memory holds at most "
              + config.limits().maxContentBytes()
              + ". Save the part worth remembering, or several memories.");
    }
    MemoryType type = type(memoryType).orElse(MemoryType.FACT);
    double weight = importance.orElse(type.defaultImportance());
    if (!(weight >= 0 && weight <= 1)) {
      throw ToolException.invalidArguments("importance is " + weight + "; it must be 0 to 1.");
    }
    List<Association> links = new ArrayList<>();
    for (AssociationArgument argument : associations.orElse(List.of())) {
      if (argument == null || argument.targetId() == null || argument.targetId().isBlank()) {
        throw ToolException.invalidArguments("an association has no target_id.");
      }
      Relation relation =
          argument.relationType() == null
              ? Relation.RELATED_TO
              : Relation.of(argument.relationType())
                  .orElseThrow(
                      () ->
                          ToolException.invalidArguments(
                              "unknown relation_type \""
                                  + argument.relationType()
                                  + "\". Valid relation types: "
                                  + Relation.wireNames()));
      double strength = argument.weight() == null ? 0.5 : argument.weight();
      if (!(strength >= 0 && strength <= 1)) {
        throw ToolException.invalidArguments(
            "an association's weight is " + strength + "; it must be 0 to 1.");
      }
      links.add(new Association(argument.targetId().strip(), relation, strength));
    }
    LongTermMemory.Saved saved;
    try {
      saved =
          memory.save(owner(call), type, content.strip(), weight, source.map(String::strip), links);
    } catch (IllegalArgumentException e) {
      throw ToolException.invalidArguments(
          "cannot associate: " + e.getMessage() + ". Find the memory with memory_recall first.");
    }
    ObjectNode answer = JSON.createObjectNode().put("id", saved.id());
    answer.put("memory_type", type.wireName()).put("importance", weight);
    saved.notice().ifPresent(notice -> answer.put("notice", notice));
    return ToolResult.success(answer.toString(), answer);
  }

  @Tool(
      name = "memory_recall",
      description =
          "Recalls memories saved in earlier conversations. Mode hybrid (default) finds them by"
              + " meaning, exact words and links between memories; recent lists the newest;"
              + " important the most important; typed the newest of one memory_type. Answers each"
              + " memory's id, content, type, importance, date and score as JSON.",
      readOnly = false,
      destructive = false,
      idempotent = false,
      openWorld = false)
  public ToolResult memoryRecall(
      ToolCall call,
      @Param(description = "What to recall, in words (may be empty for recent, important, typed).")
          String query,
      @Param(name = "max_results", description = "1 to 50. Default: 10.")
          Optional<Integer> maxResults,
      @Param(name = "memory_type", description = "Only memories of this type.")
          Optional<String> memoryType,
      @Param(description = "hybrid (default), recent, important or typed.") Optional<String> mode) {
    LongTermMemory.Mode chosen =
        mode.filter(m -> !m.isBlank())
            .map(
                m ->
                    LongTermMemory.Mode.of(m)
                        .orElseThrow(
                            () ->
                                ToolException.invalidArguments(
                                    "unknown mode \""
                                        + m
                                        + "\". Valid modes: "
                                        + LongTermMemory.Mode.wireNames())))
            .orElse(LongTermMemory.Mode.HYBRID);
    Optional<MemoryType> type = type(memoryType);
    int max = maxResults.orElse(config.limits().defaultResults());
    if (max < 1) {
      throw ToolException.invalidArguments("max_results is " + max + "; it must be 1 to 50.");
    }
    max = Math.min(max, config.limits().maxResults());
    if (chosen == LongTermMemory.Mode.TYPED && type.isEmpty()) {
      throw ToolException.invalidArguments(
          "mode typed needs a memory_type (one of: " + MemoryType.wireNames() + ").");
    }
    if (chosen == LongTermMemory.Mode.HYBRID && query.isBlank()) {
      throw ToolException.invalidArguments(
          "query is empty: say what to recall, or use mode recent or important.");
    }
    LongTermMemory.Recall recall = memory.recall(owner(call), query.strip(), max, type, chosen);
    ObjectNode answer = JSON.createObjectNode();
    ArrayNode memories = answer.putArray("memories");
    for (LongTermMemory.Recalled recalled : recall.memories()) {
      Memory m = recalled.memory();
      memories
          .addObject()
          .put("id", m.id())
          .put("content", m.content())
          .put("memory_type", m.type().wireName())
          .put("importance", Math.round(m.importance() * 1000) / 1000.0)
          .put("created_at", m.createdAt().truncatedTo(ChronoUnit.SECONDS).toString())
          .put("score", Math.round(recalled.score() * 10_000) / 10_000.0);
    }
    answer.put("total_found", recall.totalFound());
    answer.put("mode", chosen.wireName());
    recall.notice().ifPresent(notice -> answer.put("notice", notice));
    return ToolResult.success(answer.toString(), answer);
  }

  @Tool(
      name = "memory_delete",
      description =
          "Deletes a memory by its id, for good. To correct a memory, prefer saving the new one"
              + " with an 'updates' association to it.",
      readOnly = false,
      destructive = true,
      idempotent = true,
      openWorld = false)
  public ToolResult memoryDelete(
      ToolCall call,
      @Param(description = "The memory's id, as memory_recall gives it.") String id) {
    if (!memory.delete(owner(call), id.strip())) {
      throw ToolException.invalidArguments("no memory has the id '" + id.strip() + "'.");
    }
    ObjectNode answer = JSON.createObjectNode().put("deleted", id.strip());
    return ToolResult.success(answer.toString(), answer);
  }

  private Owner owner(ToolCall call) {
    String user = call.user().filter(u -> !u.isBlank()).orElse(config.defaultUser());
    Optional<String> agent = call.agent().filter(a -> config.perAgent() && !a.isBlank());
    return new Owner(user, agent);
  }

  private static Optional<MemoryType> type(Optional<String> memoryType) {
    return memoryType
        .filter(t -> !t.isBlank())
        .map(
            t ->
                MemoryType.of(t)
                    .orElseThrow(
                        () ->
                            ToolException.invalidArguments(
                                "unknown memory_type \""
                                    + t
                                    + "\". Valid types: "
                                    + MemoryType.wireNames())));
  }
}
