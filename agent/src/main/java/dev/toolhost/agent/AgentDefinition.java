package dev.toolhost.agent;

import dev.toolhost.core.ToolSpec;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;
import tools.jackson.databind.node.ObjectNode;

/**
 * An agent definition is everything that makes one agent: its name, what it is for, its
 * instructions, its model, the tool profile that scopes its tools, whether it is enabled, the
 * parameters it takes when called as a tool, its run limits, its context budget, and whether it
 * reads tool calls its model writes as text.
 *
 * <p>The name is also the name of the tool other agents call it by, so it follows the tool-name
 * rule. Immutable.
 *
 * @param name the agent's name, and its tool's
 * @param description what it does, for a model choosing whether to call it
 * @param instructions its system prompt
 * @param endpoint its model
 * @param profile the name of the tool profile its tools are scoped by
 * @param enabled whether it is offered as a tool; a disabled agent answers calls saying so
 * @param parameters the JSON Schema of its tool's arguments; {@code {message}} when empty
 * @param limits the guards on each of its runs
 * @param toolSearch when present, the agent starts with the host's own tools and {@code
 *     search_tools}, which adds up to this many of the other tools its profile allows per call;
 *     when empty, it sees every tool its profile allows from the start
 * @param context how much of its model's context window its requests may fill (see {@link
 *     ContextBudget})
 * @param textToolCalls whether tool calls its model writes in its text ({@code <tool_call>} blocks,
 *     a bare {@code {"name", "arguments"}} object, Llama's {@code <|python_tag|>}, Mistral's {@code
 *     [TOOL_CALLS]}) are run as tool calls (see {@link TextToolCalls})
 */
public record AgentDefinition(
    String name,
    String description,
    String instructions,
    ModelEndpoint endpoint,
    String profile,
    boolean enabled,
    Optional<ObjectNode> parameters,
    RunLimits limits,
    Optional<Integer> toolSearch,
    ContextBudget context,
    boolean textToolCalls) {

  /** The most tools one {@code search_tools} call may add. */
  public static final int MAX_TOOL_SEARCH_PICKS = 20;

  public AgentDefinition {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(description, "description");
    Objects.requireNonNull(instructions, "instructions");
    Objects.requireNonNull(endpoint, "endpoint");
    Objects.requireNonNull(profile, "profile");
    Objects.requireNonNull(parameters, "parameters");
    Objects.requireNonNull(limits, "limits");
    Objects.requireNonNull(toolSearch, "toolSearch");
    Objects.requireNonNull(context, "context");
    if (toolSearch.filter(picks -> picks < 1 || picks > MAX_TOOL_SEARCH_PICKS).isPresent()) {
      throw new IllegalArgumentException(
          "Agent '"
              + name
              + "' adds "
              + toolSearch.get()
              + " tools per search; it must be 1 to "
              + MAX_TOOL_SEARCH_PICKS
              + ".");
    }
    if (!ToolSpec.isValidName(name)) {
      throw new IllegalArgumentException(
          "Agent name '"
              + name
              + "' is invalid: agents are called as tools, so a name is 1 to 128 characters of"
              + " letters, digits, '_', '-' and '.'.");
    }
    parameters = parameters.map(ObjectNode::deepCopy);
  }

  /** An enabled agent with the {@code main} profile, no instructions and the default limits. */
  public static AgentDefinition of(String name, ModelEndpoint endpoint) {
    return new AgentDefinition(
        name,
        "Agent " + name + ".",
        "",
        endpoint,
        "main",
        true,
        Optional.empty(),
        RunLimits.DEFAULT,
        Optional.empty(),
        ContextBudget.DEFAULT,
        false);
  }

  /** This agent with another description. */
  public AgentDefinition withDescription(String description) {
    return changed(copy -> copy.description = description);
  }

  /** This agent with other instructions. */
  public AgentDefinition withInstructions(String instructions) {
    return changed(copy -> copy.instructions = instructions);
  }

  /** This agent scoped by another profile. */
  public AgentDefinition withProfile(String profile) {
    return changed(copy -> copy.profile = profile);
  }

  /** This agent enabled or disabled. */
  public AgentDefinition withEnabled(boolean enabled) {
    return changed(copy -> copy.enabled = enabled);
  }

  /** This agent taking the given arguments schema as a tool. */
  public AgentDefinition withParameters(ObjectNode parameters) {
    return changed(copy -> copy.parameters = Optional.of(parameters));
  }

  /** This agent with other limits. */
  public AgentDefinition withLimits(RunLimits limits) {
    return changed(copy -> copy.limits = limits);
  }

  /**
   * This agent starting with the host's own tools and {@code search_tools}, which adds up to {@code
   * picks} of the other tools its profile allows per call.
   *
   * @throws IllegalArgumentException when picks is not 1 to {@link #MAX_TOOL_SEARCH_PICKS}
   */
  public AgentDefinition withToolSearch(int picks) {
    return changed(copy -> copy.toolSearch = Optional.of(picks));
  }

  /** This agent with another context budget. */
  public AgentDefinition withContext(ContextBudget context) {
    return changed(copy -> copy.context = context);
  }

  /** This agent reading, or not, the tool calls its model writes as text. */
  public AgentDefinition withTextToolCalls(boolean on) {
    return changed(copy -> copy.textToolCalls = on);
  }

  /** This agent with the change made to a copy of its components, checked as any new one. */
  private AgentDefinition changed(Consumer<Copy> change) {
    Copy copy = new Copy(this);
    change.accept(copy);
    return new AgentDefinition(
        name,
        copy.description,
        copy.instructions,
        endpoint,
        copy.profile,
        copy.enabled,
        copy.parameters,
        copy.limits,
        copy.toolSearch,
        copy.context,
        copy.textToolCalls);
  }

  /** The components a wither may change, as the agent has them. */
  private static final class Copy {
    String description;
    String instructions;
    String profile;
    boolean enabled;
    Optional<ObjectNode> parameters;
    RunLimits limits;
    Optional<Integer> toolSearch;
    ContextBudget context;
    boolean textToolCalls;

    Copy(AgentDefinition agent) {
      description = agent.description;
      instructions = agent.instructions;
      profile = agent.profile;
      enabled = agent.enabled;
      parameters = agent.parameters;
      limits = agent.limits;
      toolSearch = agent.toolSearch;
      context = agent.context;
      textToolCalls = agent.textToolCalls;
    }
  }
}
