package dev.toolhost.server;

import dev.toolhost.bus.ToolDescriptor;
import dev.toolhost.bus.ToolServiceDescriptor;
import dev.toolhost.bus.ToolServices;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.core.TokenStreamLocation;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.dataformat.yaml.YAMLMapper;

/**
 * A tool services config is the {@code tool_services} section of a host's YAML config: the tool
 * service descriptors and tool descriptors (in the shapes of the tool services document) that the
 * host registers, with source {@code service:{id}}, and calls over its bus.
 *
 * <pre>{@code
 * tool_services:
 *   services:            # a mapping of ids to service descriptors, or a list of them
 *     custom-rag: {topic: custom-rag-request, config-params: [{name: collection, required: true}]}
 *   tools:               # a mapping of names to tool descriptors, or a list of them
 *     query-customers: {type: tool-service, service: custom-rag, collection: customers,
 *                       description: ..., arguments: [{name: question, type: string}]}
 *   files: [descriptors/rag.json, descriptors/more]   # JSON files, or directories of *.json
 * }</pre>
 *
 * <p>A JSON file holds one descriptor, a list of them, or an object with {@code tool-service} and
 * {@code tool} sections (or {@code services} and {@code tools}); a descriptor with a {@code
 * service} or a {@code type} is a tool, any other a service. Relative paths are resolved against
 * the config file's directory. Reading is all-or-nothing: every problem is reported at once, in a
 * {@link ConfigException} naming the file, line and column; and {@link #applyTo} changes nothing
 * when the tools cannot all be registered, so a bad reload keeps the tools of the last good one.
 *
 * @param services the service descriptors, in file order
 * @param tools the tool descriptors, in file order
 */
public record ToolServicesConfig(List<ToolServiceDescriptor> services, List<ToolDescriptor> tools) {

  /** The key of the section in the host's config. */
  static final String KEY = "tool_services";

  private static final YAMLMapper YAML = YAMLMapper.builder().build();
  private static final Set<String> SECTION_KEYS = Set.of("services", "tools", "files");

  public ToolServicesConfig {
    services = List.copyOf(services);
    tools = List.copyOf(tools);
  }

  /** No tool services. */
  public static ToolServicesConfig none() {
    return new ToolServicesConfig(List.of(), List.of());
  }

  /**
   * Reads the section from a host config file.
   *
   * @throws ConfigException naming the file, line and column of every problem
   */
  public static ToolServicesConfig load(Path configFile) {
    String text = readText(configFile, "config file");
    Path directory = configFile.toAbsolutePath().getParent();
    return parse(text, configFile.toString(), directory);
  }

  /**
   * Reads the section from YAML text of a host config.
   *
   * @param fileName what messages call the text
   * @param directory the directory relative {@code files} are resolved against
   * @throws ConfigException naming the file, line and column of every problem
   */
  public static ToolServicesConfig parse(String yaml, String fileName, Path directory) {
    Reader reader = new Reader();
    Source config = Source.read(YAML, yaml, fileName);
    JsonNode section = config.tree().path(KEY);
    if (!section.isMissingNode() && !section.isNull()) {
      reader.section(config, section, "/" + KEY, directory);
    }
    return reader.result();
  }

  /**
   * Registers these tools in place of those applied before.
   *
   * @throws ConfigException when a tool's name is taken by another source; nothing changes then
   */
  public void applyTo(ToolServices toolServices) {
    try {
      toolServices.apply(services, tools);
    } catch (IllegalArgumentException e) {
      throw new ConfigException(KEY + ": " + e.getMessage());
    }
  }

  private static String readText(Path file, String what) {
    try {
      return Files.readString(file);
    } catch (NoSuchFileException e) {
      throw new ConfigException(file + ": no such " + what);
    } catch (IOException e) {
      throw new ConfigException(file + ": cannot read the " + what + " (" + e + ")");
    }
  }

  /** A parsed text with where each value starts, by JSON pointer. */
  private record Source(String name, JsonNode tree, Map<String, TokenStreamLocation> starts) {

    static Source read(ObjectMapper mapper, String text, String name) {
      Map<String, TokenStreamLocation> starts = new LinkedHashMap<>();
      JsonNode tree;
      try {
        tree = mapper.readTree(text);
        try (JsonParser parser = mapper.createParser(text)) {
          JsonToken token;
          while ((token = parser.nextToken()) != null) {
            // A key comes before its value: a mapping's entry is located at its key.
            if (token != JsonToken.END_OBJECT && token != JsonToken.END_ARRAY) {
              starts.putIfAbsent(
                  parser.streamReadContext().pathAsPointer().toString(),
                  parser.currentTokenLocation());
            }
          }
        }
      } catch (JacksonException e) {
        TokenStreamLocation at = e.getLocation();
        throw new ConfigException(
            name
                + (at == null ? "" : " line " + at.getLineNr() + ", column " + at.getColumnNr())
                + ": not valid "
                + (mapper instanceof YAMLMapper ? "YAML" : "JSON")
                + " ("
                + e.getOriginalMessage().lines().findFirst().orElse("")
                + ")");
      }
      return new Source(name, tree == null ? JsonMapper.shared().nullNode() : tree, starts);
    }

    String at(String pointer) {
      // The nearest enclosing value that has a location, up to the document itself.
      for (String at = pointer; ; at = at.substring(0, Math.max(0, at.lastIndexOf('/')))) {
        TokenStreamLocation location = starts.get(at);
        if (location != null) {
          return name + " line " + location.getLineNr() + ", column " + location.getColumnNr();
        }
        if (at.isEmpty()) {
          return name;
        }
      }
    }
  }

  /** Collects descriptors and problems over the section and its files. */
  private static final class Reader {
    private final List<String> problems = new ArrayList<>();
    private final Map<String, ToolServiceDescriptor> services = new LinkedHashMap<>();
    private final Map<String, String> serviceAt = new LinkedHashMap<>();
    private final List<ToolDescriptor> tools = new ArrayList<>();
    private final List<String> toolAt = new ArrayList<>();

    void section(Source source, JsonNode section, String pointer, Path directory) {
      if (!section.isObject()) {
        problems.add(
            source.at(pointer)
                + ": '"
                + KEY
                + "' must be a mapping with keys: files, services, tools");
        return;
      }
      for (Map.Entry<String, JsonNode> entry : section.properties()) {
        if (!SECTION_KEYS.contains(entry.getKey())) {
          problems.add(
              source.at(pointer + "/" + entry.getKey())
                  + ": unknown key '"
                  + entry.getKey()
                  + "' under '"
                  + KEY
                  + "' (expected one of: files, services, tools)");
        }
      }
      descriptors(source, section.path("services"), pointer + "/services", "id", false);
      descriptors(source, section.path("tools"), pointer + "/tools", "name", true);
      JsonNode files = section.path("files");
      if (files.isString()) {
        file(source, pointer + "/files", files.asString(), directory);
      } else if (files.isArray()) {
        for (int i = 0; i < files.size(); i++) {
          if (files.get(i).isString() && !files.get(i).asString().isBlank()) {
            file(source, pointer + "/files/" + i, files.get(i).asString(), directory);
          } else {
            problems.add(
                source.at(pointer + "/files/" + i)
                    + ": '"
                    + KEY
                    + ".files["
                    + i
                    + "]' must be a path to a JSON file or a directory");
          }
        }
      } else if (!files.isMissingNode() && !files.isNull()) {
        problems.add(
            source.at(pointer + "/files")
                + ": '"
                + KEY
                + ".files' must be a list of paths to JSON files or directories");
      }
    }

    private void file(Source from, String pointer, String name, Path directory) {
      Path path = directory == null ? Path.of(name) : directory.resolve(name);
      if (Files.isDirectory(path)) {
        try (Stream<Path> listed = Files.list(path)) {
          listed
              .filter(each -> each.getFileName().toString().endsWith(".json"))
              .sorted()
              .forEach(each -> jsonFile(from, pointer, each));
        } catch (IOException e) {
          problems.add(from.at(pointer) + ": cannot list directory " + path + " (" + e + ")");
        }
      } else if (Files.isRegularFile(path)) {
        jsonFile(from, pointer, path);
      } else {
        problems.add(from.at(pointer) + ": no such file or directory: " + path);
      }
    }

    private void jsonFile(Source from, String pointer, Path path) {
      Source source;
      try {
        source =
            Source.read(JsonMapper.shared(), readText(path, "descriptor file"), path.toString());
      } catch (ConfigException e) {
        problems.add(e.getMessage() + " (listed at " + from.at(pointer) + ")");
        return;
      }
      JsonNode tree = source.tree();
      boolean sections =
          tree.isObject()
              && (tree.has("tool-service")
                  || tree.has("tool")
                  || tree.has("services")
                  || tree.has("tools"));
      if (sections) {
        for (Map.Entry<String, JsonNode> entry : tree.properties()) {
          switch (entry.getKey()) {
            case "tool-service", "services" ->
                descriptors(source, entry.getValue(), "/" + entry.getKey(), "id", false);
            case "tool", "tools" ->
                descriptors(source, entry.getValue(), "/" + entry.getKey(), "name", true);
            default ->
                problems.add(
                    source.at("/" + entry.getKey())
                        + ": unknown key '"
                        + entry.getKey()
                        + "' (expected tool-service, tool, services or tools)");
          }
        }
      } else if (tree.isArray()) {
        for (int i = 0; i < tree.size(); i++) {
          JsonNode each = tree.get(i);
          descriptor(source, each, "/" + i, isTool(each));
        }
      } else {
        descriptor(source, tree, "", isTool(tree));
      }
    }

    private static boolean isTool(JsonNode descriptor) {
      return descriptor.has("service") || descriptor.has("type");
    }

    /** A descriptor, a list of them, or a mapping of keys to them. */
    private void descriptors(
        Source source, JsonNode node, String pointer, String key, boolean tool) {
      if (node.isMissingNode() || node.isNull()) {
        return;
      }
      if (node.isArray()) {
        for (int i = 0; i < node.size(); i++) {
          descriptor(source, node.get(i), pointer + "/" + i, tool);
        }
      } else if (node.isObject() && node.has(key)) {
        descriptor(source, node, pointer, tool);
      } else if (node.isObject()) {
        for (Map.Entry<String, JsonNode> entry : node.properties()) {
          JsonNode value = entry.getValue();
          if (value.isObject() && !value.has(key)) {
            value =
                ((tools.jackson.databind.node.ObjectNode) value.deepCopy())
                    .put(key, entry.getKey());
          }
          descriptor(source, value, pointer + "/" + escape(entry.getKey()), tool);
        }
      } else {
        problems.add(
            source.at(pointer)
                + ": expected a mapping of "
                + (tool ? "tool names to tool" : "service ids to service")
                + " descriptors, or a list of them");
      }
    }

    private void descriptor(Source source, JsonNode node, String pointer, boolean tool) {
      try {
        if (tool) {
          ToolDescriptor descriptor = ToolDescriptor.fromJson(node);
          tools.add(descriptor);
          toolAt.add(source.at(pointer));
        } else {
          ToolServiceDescriptor descriptor = ToolServiceDescriptor.fromJson(node);
          String where = source.at(pointer);
          String before = serviceAt.putIfAbsent(descriptor.id(), where);
          if (before != null) {
            problems.add(
                where
                    + ": tool service '"
                    + descriptor.id()
                    + "' is described twice (first at "
                    + before
                    + ")");
          } else {
            services.put(descriptor.id(), descriptor);
          }
        }
      } catch (IllegalArgumentException e) {
        problems.add(source.at(pointer) + ": " + e.getMessage());
      }
    }

    ToolServicesConfig result() {
      List<ToolServiceDescriptor> known = List.copyOf(services.values());
      Set<String> names = new HashSet<>();
      for (int i = 0; i < tools.size(); i++) {
        ToolDescriptor tool = tools.get(i);
        if (!names.add(tool.name())) {
          problems.add(toolAt.get(i) + ": tool '" + tool.name() + "' is described twice");
          continue;
        }
        for (String problem : ToolServices.problems(known, List.of(tool))) {
          problems.add(toolAt.get(i) + ": " + problem);
        }
      }
      if (!problems.isEmpty()) {
        throw new ConfigException(String.join("\n", problems));
      }
      return new ToolServicesConfig(known, tools);
    }

    private static String escape(String key) {
      return key.replace("~", "~0").replace("/", "~1");
    }
  }
}
