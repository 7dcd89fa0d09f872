package dev.toolhost.core;

import com.github.victools.jsonschema.generator.Option;
import com.github.victools.jsonschema.generator.OptionPreset;
import com.github.victools.jsonschema.generator.SchemaGenerator;
import com.github.victools.jsonschema.generator.SchemaGeneratorConfigBuilder;
import com.github.victools.jsonschema.generator.SchemaVersion;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Parameter;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import tools.jackson.databind.JavaType;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Method tools turn the {@link Tool} methods of an object into executable tools, with parameters
 * schemas generated from the methods' Java types.
 *
 * <p>Strings, numbers, booleans, enums (as {@code enum} of their names), lists and arrays, maps,
 * records and plain classes are described by the victools JSON Schema generator; an {@link
 * Optional} parameter is not required. Parameter names come from {@link Param#name()} or from the
 * compiled class, which must then be built with {@code -parameters}. Arguments are bound with
 * Jackson; an argument Jackson cannot convert is an {@code invalid_arguments} result. Exceptions a
 * method throws keep their type, so the dispatch path classifies them.
 */
public final class MethodTools {

  private static final ObjectMapper MAPPER = JsonMapper.shared();
  private static final SchemaGenerator GENERATOR = generator();

  private MethodTools() {}

  /**
   * Returns a tool for each {@link Tool} method of the target (public methods, its class's and
   * inherited), sorted by tool name.
   *
   * @param target the object whose methods run
   * @param source the source of the tools, such as {@code builtin:guides}
   * @throws IllegalArgumentException naming the method when one cannot be a tool
   */
  public static List<ExecutableTool> of(Object target, String source) {
    List<ExecutableTool> tools = new ArrayList<>();
    for (Method method : target.getClass().getMethods()) {
      Tool annotation = method.getAnnotation(Tool.class);
      if (annotation != null) {
        tools.add(toTool(target, method, annotation, source));
      }
    }
    if (tools.isEmpty()) {
      throw new IllegalArgumentException(
          target.getClass().getName() + " has no public method annotated with @Tool.");
    }
    tools.sort(Comparator.comparing(ExecutableTool::name));
    return List.copyOf(tools);
  }

  private static ExecutableTool toTool(
      Object target, Method method, Tool annotation, String source) {
    String toolName = annotation.name().isEmpty() ? method.getName() : annotation.name();
    String where = method.getDeclaringClass().getName() + "." + method.getName();
    if (Modifier.isStatic(method.getModifiers())) {
      throw new IllegalArgumentException("@Tool method " + where + " must not be static.");
    }
    Parameter[] parameters = method.getParameters();
    List<Binding> bindings = new ArrayList<>();
    ObjectNode schema = MAPPER.createObjectNode();
    schema.put("type", "object");
    ObjectNode properties = schema.putObject("properties");
    ArrayNode required = MAPPER.createArrayNode();
    ObjectNode definitions = MAPPER.createObjectNode();
    for (Parameter parameter : parameters) {
      if (parameter.getType() == ToolCall.class) {
        bindings.add(Binding.CALL);
        continue;
      }
      Param param = parameter.getAnnotation(Param.class);
      String name = param != null && !param.name().isEmpty() ? param.name() : parameter.getName();
      if (!parameter.isNamePresent() && (param == null || param.name().isEmpty())) {
        throw new IllegalArgumentException(
            "@Tool method "
                + where
                + " has a parameter without a name: compile with -parameters or name it in"
                + " @Param.");
      }
      boolean optional = parameter.getType() == Optional.class;
      Type valueType =
          optional ? optionalValueType(parameter, where) : parameter.getParameterizedType();
      ObjectNode property = GENERATOR.generateSchema(valueType);
      JsonNode defs = property.remove("$defs");
      if (defs != null) {
        definitions.setAll((ObjectNode) defs);
      }
      property.remove("$schema");
      if (param != null && !param.description().isEmpty()) {
        property.put("description", param.description());
      }
      properties.set(name, property);
      if (!optional && (param == null || param.required())) {
        required.add(name);
      }
      bindings.add(new Binding(name, MAPPER.constructType(valueType), optional));
    }
    if (!required.isEmpty()) {
      schema.set("required", required);
    }
    // A misspelt argument is reported to the model rather than silently ignored.
    schema.put("additionalProperties", false);
    if (!definitions.isEmpty()) {
      schema.set("$defs", definitions);
    }
    ToolAnnotations hints =
        new ToolAnnotations(
            annotation.readOnly(),
            annotation.destructive(),
            annotation.idempotent(),
            annotation.openWorld());
    ToolSpec spec = new ToolSpec(toolName, annotation.description(), schema, source, hints);
    method.setAccessible(true);
    List<Binding> frozen = List.copyOf(bindings);
    if (annotation.timeoutSeconds() < 0) {
      throw new IllegalArgumentException(
          "@Tool method "
              + where
              + " has timeoutSeconds = "
              + annotation.timeoutSeconds()
              + "; it must be positive, or 0 for the default.");
    }
    ExecutableTool tool =
        ExecutableTool.of(
            spec, (call, arguments) -> invoke(target, method, frozen, call, arguments));
    if (annotation.timeoutSeconds() > 0) {
      tool = tool.withTimeout(Duration.ofSeconds(annotation.timeoutSeconds()));
    }
    return annotation.inline() ? tool.runInline() : tool;
  }

  private static Type optionalValueType(Parameter parameter, String where) {
    if (parameter.getParameterizedType() instanceof ParameterizedType type) {
      return type.getActualTypeArguments()[0];
    }
    throw new IllegalArgumentException(
        "@Tool method " + where + " has a raw Optional parameter; give it a type argument.");
  }

  private static ToolResult invoke(
      Object target, Method method, List<Binding> bindings, ToolCall call, JsonNode arguments)
      throws Exception {
    Object[] values = new Object[bindings.size()];
    for (int i = 0; i < values.length; i++) {
      values[i] = bindings.get(i).bind(call, arguments);
    }
    Object returned;
    try {
      returned = method.invoke(target, values);
    } catch (InvocationTargetException e) {
      if (e.getCause() instanceof Exception cause) {
        throw cause;
      }
      if (e.getCause() instanceof Error error) {
        throw error;
      }
      throw e;
    }
    return switch (returned) {
      case null -> ToolResult.success("");
      case String text -> ToolResult.success(text);
      case ToolResult result -> result;
      default -> {
        JsonNode json = MAPPER.valueToTree(returned);
        yield ToolResult.success(MAPPER.writeValueAsString(json), json);
      }
    };
  }

  /** How one Java parameter gets its value from a call. */
  private record Binding(String name, JavaType type, boolean optional) {
    static final Binding CALL = new Binding("", null, false);

    Object bind(ToolCall call, JsonNode arguments) {
      if (this == CALL) {
        return call;
      }
      JsonNode value = arguments.get(name);
      if (value == null || value.isNull()) {
        return optional ? Optional.empty() : null;
      }
      Object converted;
      try {
        converted = MAPPER.treeToValue(value, type);
      } catch (RuntimeException e) {
        throw ToolException.invalidArguments(
            "argument '" + name + "' cannot be read as " + type.getTypeName() + ".");
      }
      return optional ? Optional.ofNullable(converted) : converted;
    }
  }

  private static SchemaGenerator generator() {
    SchemaGeneratorConfigBuilder config =
        new SchemaGeneratorConfigBuilder(
            MAPPER, SchemaVersion.DRAFT_2020_12, OptionPreset.PLAIN_JSON);
    config.with(
        Option.FORBIDDEN_ADDITIONAL_PROPERTIES_BY_DEFAULT,
        Option.FLATTENED_ENUMS,
        Option.FLATTENED_OPTIONALS,
        Option.MAP_VALUES_AS_ADDITIONAL_PROPERTIES);
    config.without(Option.SCHEMA_VERSION_INDICATOR);
    config
        .forFields()
        .withDescriptionResolver(
            field -> {
              Param param = field.getAnnotationConsideringFieldAndGetter(Param.class);
              return param == null || param.description().isEmpty() ? null : param.description();
            })
        .withPropertyNameOverrideResolver(
            field -> {
              Param param = field.getAnnotationConsideringFieldAndGetter(Param.class);
              return param == null || param.name().isEmpty() ? null : param.name();
            })
        .withRequiredCheck(
            field -> {
              Param param = field.getAnnotationConsideringFieldAndGetter(Param.class);
              return field.getType().getErasedType() != Optional.class
                  && (param == null || param.required());
            });
    return new SchemaGenerator(config.build());
  }
}
