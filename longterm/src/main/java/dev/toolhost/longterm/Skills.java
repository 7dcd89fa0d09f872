package dev.toolhost.longterm;

import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.MethodTools;
import dev.toolhost.core.Param;
import dev.toolhost.core.SavedGuides;
import dev.toolhost.core.Tool;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolException;
import dev.toolhost.core.ToolGuide;
import dev.toolhost.core.ToolGuides;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSpec;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantLock;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Skills are the procedures a model worked out and saved for later sessions ("follow the guide,
 * then save_skill to cache the pattern"): {@code save_skill}, {@code list_skills}, {@code
 * get_skill} and {@code delete_skill}, source {@code builtin:skills}, kept in the long-term memory
 * store so that they survive restarts. As {@link SavedGuides} they are listed by {@code
 * list_tool_guides} beside the published guides, marked as saved, and read by {@code
 * get_tool_guide} too.
 *
 * <p>Whose skills a call sees is the config's choice: each user's own (the call's user, or the
 * default user when the call names none, whichever of the user's agents made the call: a procedure
 * is worth as much to each of them), or one set {@linkplain #SHARED shared} by every user. A skill
 * never takes the name of a published guide; its name follows the tool-name rule; its description
 * is one line; its content is capped, and so is how many one owner keeps (checked under a lock per
 * owner, so within one host concurrent saves never pass the cap). Thread-safe; a failure of the
 * store is an unchecked exception, which the dispatcher reports as {@code execution_failed}.
 */
public final class Skills implements SavedGuides {

  /** The source of the skill tools. */
  public static final String SOURCE = "builtin:skills";

  /** The owner of every skill when skills are shared. */
  public static final String SHARED = "";

  /** The longest description: one line. */
  static final int MAX_DESCRIPTION = 200;

  private static final JsonMapper JSON = JsonMapper.builder().build();

  private final MemoryStore store;
  private final LongTermMemoryConfig config;
  private final Optional<ToolGuides> guides;
  private final Clock clock;
  private final ReentrantLock[] locks = new ReentrantLock[64];

  /**
   * Skills in the store, under the config's scope and limits; a name the given guides publish is
   * refused.
   */
  public Skills(
      MemoryStore store, LongTermMemoryConfig config, Optional<ToolGuides> guides, Clock clock) {
    this.store = Objects.requireNonNull(store, "store");
    this.config = Objects.requireNonNull(config, "config");
    this.guides = Objects.requireNonNull(guides, "guides");
    this.clock = Objects.requireNonNull(clock, "clock");
    for (int i = 0; i < locks.length; i++) {
      locks[i] = new ReentrantLock();
    }
  }

  /** The four tools. */
  public List<ExecutableTool> tools() {
    return MethodTools.of(this, SOURCE);
  }

  @Override
  public List<ToolGuide> list(ToolCall call) {
    return store.skills(owner(call)).stream().map(Skills::guide).toList();
  }

  @Override
  public Optional<ToolGuide> find(ToolCall call, String name) {
    if (!ToolSpec.isValidName(name)) {
      return Optional.empty();
    }
    return store.skill(owner(call), name).map(Skills::guide);
  }

  private static ToolGuide guide(Skill skill) {
    return new ToolGuide(skill.name(), skill.description(), skill.content());
  }

  @Tool(
      name = "save_skill",
      description =
          "Saves a procedure you worked out as a skill, a markdown guide that later sessions find"
              + " in list_tool_guides and list_skills. Saving under an existing skill's name"
              + " replaces it.",
      readOnly = false,
      destructive = false,
      idempotent = true,
      openWorld = false)
  public ToolResult saveSkill(
      ToolCall call,
      @Param(description = "The skill's name: letters, digits, _ . or -, such as deploy-with-mcp.")
          String name,
      @Param(description = "One line on when to use it.") String description,
      @Param(description = "The procedure, in markdown: steps, tools to call, pitfalls.")
          String content) {
    String skillName = checkedName(name);
    if (guides.map(all -> all.published(skillName)).orElse(false)) {
      throw ToolException.invalidArguments(
          "'"
              + skillName
              + "' is the name of a built-in tool guide, which a skill cannot replace. Choose"
              + " another name.");
    }
    String line = description.strip();
    if (line.isEmpty()) {
      throw ToolException.invalidArguments("description is empty: say in one line what it is for.");
    }
    // Any line break or control character, not only \n: a \r or U+2028 would let a description
    // draw lines of its own in list_tool_guides, such as one that looks like a built-in guide.
    if (line.codePoints().anyMatch(Skills::breaksTheLine) || line.length() > MAX_DESCRIPTION) {
      throw ToolException.invalidArguments(
          "description must be one line of at most "
              + MAX_DESCRIPTION
              + " characters, with no line breaks or control characters; put the details in"
              + " content.");
    }
    if (content.isBlank()) {
      throw ToolException.invalidArguments("content is empty: write the procedure.");
    }
    int bytes = content.getBytes(StandardCharsets.UTF_8).length;
    int cap = config.skills().maxContentBytes();
    if (bytes > cap) {
      throw ToolException.invalidArguments(
          "content is "
              + bytes
              + " bytes; a skill holds at most "
              + cap
              + ". Keep the steps and leave out what the tool guides already say.");
    }
    String owner = owner(call);
    boolean replaced;
    // One save of an owner at a time in this host, so that two saves cannot both see room for one
    // more skill and together pass the cap.
    ReentrantLock lock = locks[Math.floorMod(owner.hashCode(), locks.length)];
    lock.lock();
    try {
      replaced = store.skill(owner, skillName).isPresent();
      if (!replaced && store.skills(owner).size() >= config.skills().maxSkills()) {
        throw ToolException.invalidArguments(
            "there are already "
                + config.skills().maxSkills()
                + " skills, the most kept. Replace or delete one first (see list_skills).");
      }
      store.saveSkill(
          new Skill(
              owner,
              skillName,
              line,
              content.strip(),
              clock.instant().truncatedTo(ChronoUnit.MILLIS)));
    } finally {
      lock.unlock();
    }
    ObjectNode answer = JSON.createObjectNode().put("saved", skillName).put("replaced", replaced);
    return ToolResult.success(answer.toString(), answer);
  }

  @Tool(
      name = "list_skills",
      description =
          "Lists the saved skills: name, one-line description and when each was saved. Read one"
              + " with get_skill.",
      readOnly = true,
      destructive = false,
      idempotent = true,
      openWorld = false)
  public ToolResult listSkills(ToolCall call) {
    ObjectNode answer = JSON.createObjectNode();
    ArrayNode skills = answer.putArray("skills");
    for (Skill skill : store.skills(owner(call))) {
      skills
          .addObject()
          .put("name", skill.name())
          .put("description", skill.description())
          .put("saved_at", skill.savedAt().truncatedTo(ChronoUnit.SECONDS).toString());
    }
    return ToolResult.success(answer.toString(), answer);
  }

  @Tool(
      name = "get_skill",
      description = "Returns a saved skill's procedure, in markdown.",
      readOnly = true,
      destructive = false,
      idempotent = true,
      openWorld = false)
  public String getSkill(
      ToolCall call,
      @Param(description = "The skill's name, as list_skills gives it.") String name) {
    String skillName = checkedName(name);
    return store
        .skill(owner(call), skillName)
        .map(Skill::content)
        .orElseThrow(() -> unknown(skillName));
  }

  @Tool(
      name = "delete_skill",
      description = "Deletes a saved skill, for good.",
      readOnly = false,
      destructive = true,
      idempotent = true,
      openWorld = false)
  public ToolResult deleteSkill(
      ToolCall call,
      @Param(description = "The skill's name, as list_skills gives it.") String name) {
    String skillName = checkedName(name);
    if (!store.deleteSkill(owner(call), skillName)) {
      throw unknown(skillName);
    }
    ObjectNode answer = JSON.createObjectNode().put("deleted", skillName);
    return ToolResult.success(answer.toString(), answer);
  }

  private static boolean breaksTheLine(int c) {
    return Character.isISOControl(c)
        || Character.getType(c) == Character.LINE_SEPARATOR
        || Character.getType(c) == Character.PARAGRAPH_SEPARATOR;
  }

  private static String checkedName(String name) {
    String stripped = name.strip();
    if (!ToolSpec.isValidName(stripped)) {
      throw ToolException.invalidArguments(
          "name '"
              + name
              + "' is not a valid skill name: use 1 to 128 letters, digits, '_', '.' or '-'.");
    }
    return stripped;
  }

  private static ToolException unknown(String name) {
    return ToolException.invalidArguments(
        "there is no skill named '" + name + "'; list_skills shows the saved ones.");
  }

  private String owner(ToolCall call) {
    if (config.skills().shared()) {
      return SHARED;
    }
    return call.user().filter(u -> !u.isBlank()).orElse(config.defaultUser());
  }
}
