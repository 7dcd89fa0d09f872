package dev.toolhost.langchain4j;

import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.agent.tool.ToolSpecification;
import dev.langchain4j.invocation.InvocationContext;
import dev.langchain4j.model.chat.request.json.JsonObjectSchema;
import dev.langchain4j.model.chat.request.json.JsonRawSchema;
import dev.langchain4j.model.chat.request.json.JsonSchemaElement;
import dev.langchain4j.service.tool.ToolExecutionResult;
import dev.langchain4j.service.tool.ToolExecutor;
import dev.langchain4j.service.tool.ToolProvider;
import dev.langchain4j.service.tool.ToolProviderRequest;
import dev.langchain4j.service.tool.ToolProviderResult;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import dev.toolhost.core.ToolSpec;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * A tool set provider is a LangChain4j {@link ToolProvider} that offers a Toolhost {@link ToolSet}
 * (the tools of one profile) to an {@code AiServices} agent, and runs every call the agent's model
 * makes through a Toolhost {@link ToolDispatcher}.
 *
 * <p>Each tool the set shows becomes a {@link ToolSpecification} whose parameters keep the tool's
 * JSON Schema: each property and each {@code $defs} entry is a {@link JsonRawSchema} holding that
 * part of the schema as is, the {@code required} list and a top-level {@code description} are
 * copied. LangChain4j's OpenAI model sends these parts unchanged. A {@link JsonObjectSchema} cannot
 * hold other top-level keywords, and LangChain4j's OpenAI model sends a top-level {@code
 * additionalProperties} only in strict mode; the dispatcher still enforces the whole schema, so an
 * argument it forbids answers {@code invalid_arguments}. Each specification says {@code strict:
 * false}, so that a model built with {@code strictTools(true)} does not rewrite the schema (strict
 * mode makes every property required).
 *
 * <p>A call takes the one dispatch path every Toolhost call takes: lookup in the set, validation,
 * the tool's deadline ({@link ToolSet#defaultTimeout}), telemetry, and whatever interceptors the
 * dispatcher was built with (secret scanning, result chunking). The call keeps the model's tool
 * call id, and the LangChain4j chat memory id (the {@code @MemoryId} argument, or {@code "default"}
 * for a service without one) is its session id.
 *
 * <p>Never throws at the agent: a failed call comes back as a {@link ToolExecutionResult} marked as
 * an error whose text is the {@link dev.toolhost.core.ToolError} message, which the model reads and
 * acts on; the {@link ToolResult} itself is the execution's {@link ToolExecutionResult#result()}.
 * The provider is dynamic: the set is read again before each model request, so a tool registered or
 * removed during a run shows, or is gone, from the next request on. Thread-safe.
 */
public final class ToolSetProvider implements ToolProvider {

  private final ToolSet tools;
  private final ToolDispatcher dispatcher;
  private final ToolExecutor executor = new DispatchingExecutor();

  private ToolSetProvider(ToolSet tools, ToolDispatcher dispatcher) {
    this.tools = Objects.requireNonNull(tools, "tools");
    this.dispatcher = Objects.requireNonNull(dispatcher, "dispatcher");
  }

  /** A provider of the set's tools, whose calls run through the dispatcher. */
  public static ToolSetProvider of(ToolSet tools, ToolDispatcher dispatcher) {
    return new ToolSetProvider(tools, dispatcher);
  }

  @Override
  public ToolProviderResult provideTools(ToolProviderRequest request) {
    ToolProviderResult.Builder result = ToolProviderResult.builder();
    for (ToolSpec spec : tools.specs()) {
      result.add(specification(spec), executor);
    }
    return result.build();
  }

  @Override
  public boolean isDynamic() {
    return true;
  }

  /** The LangChain4j specification of a Toolhost tool: its name, description and schema. */
  public static ToolSpecification specification(ToolSpec spec) {
    return ToolSpecification.builder()
        .name(spec.name())
        .description(spec.description())
        .parameters(parameters(spec.parameters()))
        .strict(false)
        .build();
  }

  private static JsonObjectSchema parameters(ObjectNode schema) {
    JsonObjectSchema.Builder parameters = JsonObjectSchema.builder();
    JsonNode description = schema.get("description");
    if (description != null && description.isString()) {
      parameters.description(description.asString());
    }
    parameters.addProperties(raw(schema.get("properties")));
    List<String> required = new ArrayList<>();
    JsonNode names = schema.get("required");
    if (names != null && names.isArray()) {
      names.forEach(name -> required.add(name.asString()));
    }
    parameters.required(required);
    JsonNode additional = schema.get("additionalProperties");
    if (additional != null && additional.isBoolean()) {
      parameters.additionalProperties(additional.asBoolean());
    }
    Map<String, JsonSchemaElement> definitions = raw(schema.get("$defs"));
    if (!definitions.isEmpty()) {
      parameters.definitions(definitions);
    }
    return parameters.build();
  }

  /**
   * Each member of a JSON object of schemas, as a raw schema holding its text unchanged; the
   * boolean schemas {@code true} and {@code false} as their object forms, {@code {}} and {@code
   * {"not": {}}}, since LangChain4j reads a raw schema as a JSON object.
   */
  private static Map<String, JsonSchemaElement> raw(JsonNode schemas) {
    Map<String, JsonSchemaElement> raw = new LinkedHashMap<>();
    if (schemas != null && schemas.isObject()) {
      schemas
          .properties()
          .forEach(member -> raw.put(member.getKey(), rawSchema(member.getValue())));
    }
    return raw;
  }

  private static JsonRawSchema rawSchema(JsonNode schema) {
    if (schema.isBoolean()) {
      return JsonRawSchema.from(schema.asBoolean() ? "{}" : "{\"not\": {}}");
    }
    return JsonRawSchema.from(schema.toString());
  }

  private ToolResult dispatch(ToolExecutionRequest request, Object memoryId) {
    String name = request.name();
    // A model sends no arguments for a tool without parameters; the dispatcher reads "" as {}.
    String arguments = request.arguments() == null ? "" : request.arguments();
    ToolCall call = ToolCall.of(name, arguments).withTimeout(tools.defaultTimeout(name));
    if (request.id() != null && !request.id().isBlank()) {
      call = call.withCallId(request.id());
    }
    if (memoryId != null) {
      call = call.withSessionId(memoryId.toString());
    }
    return dispatcher.dispatch(tools, call);
  }

  /** Runs a LangChain4j tool request as a Toolhost call; a failure is a result, not a throw. */
  private final class DispatchingExecutor implements ToolExecutor {

    @Override
    public String execute(ToolExecutionRequest request, Object memoryId) {
      return dispatch(request, memoryId).text();
    }

    @Override
    public ToolExecutionResult executeWithContext(
        ToolExecutionRequest request, InvocationContext context) {
      ToolResult result = dispatch(request, context == null ? null : context.chatMemoryId());
      return ToolExecutionResult.builder()
          .isError(result.isError())
          .result(result)
          .resultText(result.text())
          .build();
    }
  }
}
