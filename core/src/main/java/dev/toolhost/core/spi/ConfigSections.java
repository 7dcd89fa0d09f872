package dev.toolhost.core.spi;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import com.github.victools.jsonschema.generator.CustomDefinition;
import com.github.victools.jsonschema.generator.CustomPropertyDefinition;
import com.github.victools.jsonschema.generator.Option;
import com.github.victools.jsonschema.generator.OptionPreset;
import com.github.victools.jsonschema.generator.SchemaGenerator;
import com.github.victools.jsonschema.generator.SchemaGeneratorConfigBuilder;
import com.github.victools.jsonschema.generator.SchemaVersion;
import com.networknt.schema.Error;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SchemaRegistryConfig;
import com.networknt.schema.SpecificationVersion;
import com.networknt.schema.path.PathType;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonPointer;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.PropertyNamingStrategies;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * Config sections are the config file's sections that host extensions own, and the one way they are
 * read: a section's JSON Schema is generated from the record it binds to ({@link #schema}), so that
 * the record stays the one description of its shape; the section is checked against that schema
 * ({@link #check}), every violation placed at its line and column with the other problems of the
 * file; then it is bound to the record ({@link #bind}) for the extension's checks in Java. A
 * section whose one reading must report every problem of its entries at once (the agents, whose
 * refused key must not hide the agent's other problems) gives the host only its {@link #described}
 * shape and checks itself in {@code read}, taking the schema's problems as values ({@link
 * #problems}) to report them with its own in file order.
 *
 * <p>Generated schemas make every key optional, refuse unknown keys, spell keys in {@code
 * snake_case} as the file does, give a map's values as {@code additionalProperties}, and take a
 * {@link JsonPropertyDescription} as the key's description, phrased as what the value must be ("a
 * mapping of model names to thresholds"), since a type error shows it as what was expected. A field
 * of type {@link JsonNode} is an open shape (a descriptor, a parameter schema) that its extension
 * checks in Java; a field marked {@link DurationText} takes the one duration syntax of {@link
 * Durations}, as text or a bare number of seconds.
 *
 * <p>Checked with the networknt validator core uses for tool parameters, reading schemas without
 * {@code $schema} as draft 2020-12 and never fetching a remote schema (with JSON pointers for
 * paths, where tool parameters use JSON paths, hence a registry of its own).
 */
public final class ConfigSections {

  private static final JsonMapper MAPPER =
      JsonMapper.builder()
          .propertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
          .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
          .build();
  private static final SchemaGenerator GENERATOR = generator();
  private static final SchemaRegistry REGISTRY =
      SchemaRegistry.withDefaultDialect(
          SpecificationVersion.DRAFT_2020_12,
          builder ->
              builder
                  .schemaLoader(loader -> loader.fetchRemoteResources(false))
                  .schemaRegistryConfig(
                      SchemaRegistryConfig.builder().pathType(PathType.JSON_POINTER).build()));

  private ConfigSections() {}

  /** The JSON Schema (draft 2020-12, without {@code $schema}) of a section bound to the type. */
  public static ObjectNode schema(Class<?> type) {
    ObjectNode schema = GENERATOR.generateSchema(type);
    mergeAllOf(schema);
    dropCopiedDescriptions(schema);
    return schema;
  }

  // The generator gives a map of records an allOf of two parts, both with the records' shape; one
  // node says the same, and lets an unknown key's message list the keys a record has.
  private static void mergeAllOf(JsonNode node) {
    if (node instanceof ObjectNode object && object.path("allOf").isArray()) {
      ObjectNode merged = object.objectNode();
      boolean agree = true;
      for (JsonNode part : object.get("allOf")) {
        for (var property : part.properties()) {
          JsonNode before = merged.putIfAbsent(property.getKey(), property.getValue());
          agree &= before == null || before.equals(property.getValue());
        }
      }
      if (agree) {
        object.remove("allOf");
        merged
            .properties()
            .forEach(property -> object.putIfAbsent(property.getKey(), property.getValue()));
      }
    }
    node.values().forEach(ConfigSections::mergeAllOf);
  }

  // The generator gives a map's entries the map's own description ("a mapping of names to
  // strings"), which would describe an entry wrongly.
  private static void dropCopiedDescriptions(JsonNode node) {
    if (node instanceof ObjectNode object
        && object.path("additionalProperties") instanceof ObjectNode entries
        && entries.path("description").equals(object.path("description"))) {
      entries.remove("description");
    }
    node.values().forEach(ConfigSections::dropCopiedDescriptions);
  }

  /**
   * The schema's descriptions without its checks, but for the type of the section itself: the
   * schema the host checks a section against when its extension checks the section against the
   * whole schema in {@link HostExtension#read} ({@link #problems}), so that a refused key does not
   * hide the section's other problems from the one reading of the file.
   */
  public static ObjectNode described(ObjectNode schema) {
    ObjectNode described = descriptions(schema);
    if (schema.has("type")) {
      described.set("type", schema.get("type"));
    }
    return described;
  }

  private static ObjectNode descriptions(JsonNode schema) {
    ObjectNode described = JsonMapper.shared().createObjectNode();
    if (schema.path("description").isString()) {
      described.set("description", schema.get("description"));
    }
    if (schema.path("properties").isObject()) {
      ObjectNode properties = described.putObject("properties");
      schema
          .path("properties")
          .properties()
          .forEach(
              property -> properties.set(property.getKey(), descriptions(property.getValue())));
    }
    if (schema.path("additionalProperties").isObject()) {
      described.set("additionalProperties", descriptions(schema.get("additionalProperties")));
    }
    return described;
  }

  /** Marks a text field that holds a duration in the syntax of {@link Durations}. */
  @Retention(RetentionPolicy.RUNTIME)
  @Target({ElementType.FIELD, ElementType.METHOD, ElementType.RECORD_COMPONENT})
  public @interface DurationText {}

  /**
   * Binds a section that its schema accepts to the record the schema was made from.
   *
   * @throws ConfigException naming the section when it does not bind (a number too large for its
   *     field, say)
   */
  public static <T> T bind(String name, JsonNode section, Class<T> type) {
    try {
      return MAPPER.treeToValue(section, type);
    } catch (JacksonException e) {
      throw new ConfigException(
          "'" + name + "': " + e.getOriginalMessage().lines().findFirst().orElse("invalid"));
    }
  }

  /** Adds a problem for every way the section breaks its extension's schema. */
  public static void check(
      String name, JsonNode schema, JsonNode section, ConfigProblems problems) {
    problems(name, schema, section).forEach(problem -> problem.addTo(problems));
  }

  /**
   * A problem the schema found: where it is, whether it is about the key there (an unknown key)
   * rather than the value, and what to say.
   *
   * @param pointer the JSON pointer of the key or value from the file's root
   * @param atKey whether the problem is about the key at the pointer
   * @param message what to say, naming the key
   */
  public record Problem(String pointer, boolean atKey, String message) {

    /** Adds this problem to the given ones, placed at its key or value. */
    public void addTo(ConfigProblems problems) {
      if (atKey) {
        problems.atKey(pointer, message);
      } else {
        problems.atValue(pointer, message);
      }
    }
  }

  /**
   * Every way the section at the pointer {@code /name} breaks the schema, as values, for a reader
   * that reports them in file order with problems of its own (the agents, key by key); {@link
   * #check} adds them as they come.
   */
  public static List<Problem> problems(String name, JsonNode schema, JsonNode section) {
    Schema compiled = REGISTRY.getSchema(schema);
    List<Problem> found = new ArrayList<>();
    // One problem per place: a value may break the schema in several ways at once (each branch of
    // a nullable type, say), which would say the same thing twice.
    Set<String> placed = new HashSet<>();
    for (Error error : compiled.validate(section)) {
      String at = error.getInstanceLocation().toString();
      if (!placed.add(at + " " + error.getKeyword() + " " + error.getProperty())) {
        continue;
      }
      String pointer = "/" + name + (at.equals("/") ? "" : at);
      String where = ConfigProblems.dotted(pointer);
      if ("additionalProperties".equals(error.getKeyword()) && error.getProperty() != null) {
        found.add(
            new Problem(
                pointer + JsonPointer.empty().appendProperty(error.getProperty()),
                true,
                "unknown key '"
                    + error.getProperty()
                    + "' under '"
                    + where
                    + "'"
                    + expected(schema, at, error.getProperty())));
        continue;
      }
      if ("type".equals(error.getKeyword())) {
        found.add(
            new Problem(
                pointer,
                false,
                "wrong type for '"
                    + where
                    + "': expected "
                    + expectedValue(schema, error)
                    + ", got "
                    + ConfigProblems.describe(error.getInstanceNode())));
        continue;
      }
      String message = error.getMessage();
      // The validator's message opens with the place; ours names it as a dotted key.
      if (message.startsWith(at + ": ")) {
        message = message.substring(at.length() + 2);
      }
      found.add(new Problem(pointer, false, "'" + where + "': " + message));
    }
    return found;
  }

  /**
   * The sections of the given tree that the named extensions own, in the file's order, each removed
   * from the tree.
   */
  public static Map<String, JsonNode> take(ObjectNode tree, Collection<String> names) {
    Map<String, JsonNode> sections = new LinkedHashMap<>();
    for (String name : List.copyOf(tree.propertyNames())) {
      if (!names.contains(name)) {
        continue;
      }
      JsonNode section = tree.remove(name);
      // A key with no value ("mcp:") is no section, as for the host's own sections.
      if (section != null && !section.isNull()) {
        sections.put(name, section);
      }
    }
    return sections;
  }

  /** What to say after an unknown key, from the schema's properties at the pointer, if any. */
  private static String expected(JsonNode schema, String at, String given) {
    JsonNode node = resolved(schema, schema);
    for (String segment : at.split("/")) {
      if (!segment.isEmpty()) {
        JsonNode property = node.path("properties").path(segment);
        node =
            resolved(
                schema, property.isMissingNode() ? node.path("additionalProperties") : property);
      }
    }
    List<String> keys = new ArrayList<>();
    for (String key : node.path("properties").propertyNames()) {
      keys.add(key);
    }
    return keys.isEmpty() ? "" : ConfigProblems.expectedKeys(given, keys);
  }

  /** The schema a {@code $ref} within the root names, or the node itself when it has none. */
  private static JsonNode resolved(JsonNode root, JsonNode node) {
    String ref = node.path("$ref").asString("");
    return ref.startsWith("#") ? root.at(ref.substring(1)) : node;
  }

  /**
   * What a value of the wrong type should have been: the schema's description where it has one,
   * else its type in words ("an integer", "a mapping with keys: a, b").
   */
  private static String expectedValue(JsonNode root, Error error) {
    // The evaluation path of the "type" keyword, through any $ref: the schema that holds it, and
    // the one that referred to it (which holds the key's description).
    JsonNode schema = root;
    JsonNode referring = root;
    String[] segments = error.getEvaluationPath().toString().split("/");
    for (int i = 0; i < segments.length - 1; i++) {
      String segment = segments[i].replace("~1", "/").replace("~0", "~");
      if (segment.isEmpty()) {
        continue;
      }
      if (segment.equals("$ref")) {
        referring = schema;
        schema = resolved(root, schema);
      } else {
        schema = schema.path(segment);
        referring = schema;
      }
    }
    List<String> types = new ArrayList<>();
    JsonNode type = schema.path("type");
    if (type.isArray()) {
      type.forEach(each -> types.add(each.asString()));
    } else {
      types.add(type.asString());
    }
    types.remove("null");
    // A map's description says what its entries are, a duration's what it may say; another key's
    // description is no answer to "expected".
    boolean describing =
        types.contains("object") || types.contains("string") && types.contains("integer");
    if (describing && referring.path("description").isString()) {
      return referring.path("description").asString();
    }
    if (types.contains("string") && types.contains("integer")) {
      return "a string";
    }
    return switch (types.isEmpty() ? "" : types.getFirst()) {
      case "integer" -> "an integer";
      case "number" -> "a number";
      case "boolean" -> "true or false";
      case "string" -> "a string";
      case "array" ->
          schema.path("items").path("type").toString().contains("string")
              ? "a list of strings"
              : "a list";
      case "object" -> {
        List<String> keys = new ArrayList<>();
        schema.path("properties").propertyNames().forEach(keys::add);
        keys.sort(null);
        yield keys.isEmpty() ? "a mapping" : "a mapping with keys: " + String.join(", ", keys);
      }
      default -> "another type";
    };
  }

  private static SchemaGenerator generator() {
    SchemaGeneratorConfigBuilder config =
        new SchemaGeneratorConfigBuilder(
            JsonMapper.shared(), SchemaVersion.DRAFT_2020_12, OptionPreset.PLAIN_JSON);
    config.with(
        Option.FORBIDDEN_ADDITIONAL_PROPERTIES_BY_DEFAULT,
        Option.MAP_VALUES_AS_ADDITIONAL_PROPERTIES,
        Option.NULLABLE_FIELDS_BY_DEFAULT,
        // Self-contained, so that a section's schema can sit inside the whole file's.
        Option.INLINE_ALL_SCHEMAS);
    config.without(Option.SCHEMA_VERSION_INDICATOR);
    config
        .forTypesInGeneral()
        .withCustomDefinitionProvider(
            (type, context) ->
                JsonNode.class.isAssignableFrom(type.getErasedType())
                    ? new CustomDefinition(
                        JsonMapper.shared().createObjectNode(),
                        CustomDefinition.DefinitionType.INLINE,
                        CustomDefinition.AttributeInclusion.NO)
                    : null);
    config
        .forFields()
        .withPropertyNameOverrideResolver(
            field -> {
              JsonProperty named = field.getAnnotationConsideringFieldAndGetter(JsonProperty.class);
              if (named != null && !named.value().isEmpty()) {
                return named.value();
              }
              // The readers' SNAKE_CASE naming, for the plain camel-case names the records use
              // (Jackson's translate is not public).
              return field
                  .getName()
                  .replaceAll("([a-z0-9])([A-Z])", "$1_$2")
                  .toLowerCase(Locale.ROOT);
            })
        .withDescriptionResolver(
            field -> {
              JsonPropertyDescription description =
                  field.getAnnotationConsideringFieldAndGetter(JsonPropertyDescription.class);
              return description == null ? null : description.value();
            })
        .withCustomDefinitionProvider(
            (field, context) -> {
              if (field.getAnnotationConsideringFieldAndGetter(DurationText.class) == null) {
                return null;
              }
              ObjectNode duration = JsonMapper.shared().createObjectNode();
              duration.putArray("type").add("string").add("integer").add("null");
              duration.put(
                  "description",
                  "a positive duration: 500ms, 30s, 2m, 1h, PT1M, or a whole number of seconds");
              return new CustomPropertyDefinition(duration, CustomDefinition.AttributeInclusion.NO);
            });
    return new SchemaGenerator(config.build());
  }
}
