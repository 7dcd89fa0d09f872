package dev.toolhost.benchmarks;

import com.networknt.schema.Error;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolExecutor;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import dev.toolhost.core.ToolSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * The add tool is the trivial tool every benchmark calls, {@code add(a: integer, b: integer) ->
 * sum}, in both forms: registered with Toolhost, and held by hand for the raw baseline.
 */
public final class AddTool {

  static final String NAME = "add";
  public static final String ARGUMENTS = "{\"a\": 2, \"b\": 3}";
  static final String PARAMETERS =
      """
      {"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},\
      "required":["a","b"],"additionalProperties":false}""";

  private static final JsonMapper MAPPER = JsonMapper.shared();

  private AddTool() {}

  /** The tool's body, shared by both forms. */
  static int add(int a, int b) {
    return a + b;
  }

  /** The name of the same tool registered to run inline, on the caller's thread. */
  public static final String INLINE_NAME = "add_inline";

  /**
   * Registers the tool with Toolhost twice: isolated (the default: it runs on a virtual thread of
   * its own) as {@link #NAME}, and inline (it never blocks, so it runs on the caller's thread) as
   * {@link #INLINE_NAME}.
   */
  public static void register(ToolRegistry registry) {
    ObjectNode parameters = (ObjectNode) MAPPER.readTree(PARAMETERS);
    ToolExecutor executor =
        (call, arguments) ->
            ToolResult.success(
                Integer.toString(add(arguments.get("a").asInt(), arguments.get("b").asInt())));
    registry.register(
        new ToolSpec(NAME, "Adds two integers.", parameters, "builtin:benchmark"), executor);
    registry.register(
        ExecutableTool.of(
                new ToolSpec(INLINE_NAME, "Adds two integers.", parameters, "builtin:benchmark"),
                executor)
            .runInline());
  }

  /**
   * A call as it comes off the wire: its id and arguments are the model's. The deadline is far
   * enough that no run reaches it; the dispatcher checks it on every call all the same.
   */
  static ToolCall call() {
    return new ToolCall(
        "call_0",
        NAME,
        ARGUMENTS,
        Optional.empty(),
        Optional.empty(),
        Optional.empty(),
        Optional.empty(),
        Optional.empty(),
        Instant.now().plus(Duration.ofDays(1)));
  }

  /** A tool set of the main profile over a registry holding both forms of the tool. */
  static ToolSet toolSet() {
    ToolRegistry registry = new ToolRegistry();
    register(registry);
    return ToolSet.of(registry, ToolProfiles.MAIN);
  }

  /** {@link #call()} addressed to the inline form of the tool, {@link #INLINE_NAME}. */
  static ToolCall inlineCall() {
    ToolCall call = call();
    return new ToolCall(
        call.callId(),
        INLINE_NAME,
        call.arguments(),
        call.sessionId(),
        call.user(),
        call.principal(),
        call.agent(),
        call.model(),
        call.deadline());
  }

  /** The tools of the raw baseline by name: the schema compiled directly, and the function. */
  static Map<String, Raw> rawTools() {
    Schema schema =
        SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12)
            .getSchema(MAPPER.readTree(PARAMETERS));
    schema.initializeValidators();
    Map<String, Raw> tools = new HashMap<>();
    tools.put(NAME, new Raw(schema, AddTool::add));
    return tools;
  }

  /**
   * The raw baseline: look the tool up, parse the arguments, validate them, call the function.
   *
   * @throws IllegalStateException when the arguments break the schema
   */
  static int callRaw(Map<String, Raw> tools, String name, String arguments) {
    Raw tool = tools.get(name);
    JsonNode parsed = MAPPER.readTree(arguments);
    List<Error> errors = tool.schema().validate(parsed);
    if (!errors.isEmpty()) {
      throw new IllegalStateException("Invalid arguments: " + errors);
    }
    return tool.function().apply(parsed.get("a").asInt(), parsed.get("b").asInt());
  }

  /** A tool of the raw baseline: its schema, compiled once, and its function. */
  record Raw(Schema schema, Function function) {}

  /** The raw baseline's tool function. */
  @FunctionalInterface
  interface Function {
    int apply(int a, int b);
  }
}
