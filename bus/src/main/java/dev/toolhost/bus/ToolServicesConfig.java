package dev.toolhost.bus;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import dev.toolhost.core.spi.ConfigException;
import dev.toolhost.core.spi.ConfigProblems;
import dev.toolhost.core.spi.ConfigSections;
import dev.toolhost.core.spi.SectionReading;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonPointer;
import tools.jackson.core.JsonToken;
import tools.jackson.core.TokenStreamLocation;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.NullNode;
import tools.jackson.databind.node.ObjectNode;

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
 * the config file's directory.
 *
 * <p>The section is read by {@link ToolServicesExtension} in the host's one reading of the file, so
 * every problem of the file, in this section, the files it lists or any other, is reported at once
 * in a {@link ConfigException} naming the file, line and column. The tools are registered apart,
 * once a bus is attached: {@link #applyTo} changes nothing when they cannot all be registered, so a
 * bad reload keeps the tools of the last good one.
 *
 * @param services the service descriptors, in file order
 * @param tools the tool descriptors, in file order
 */
public record ToolServicesConfig(List<ToolServiceDescriptor> services, List<ToolDescriptor> tools) {

  /** The key of the section in the host's config. */
  public static final String KEY = "tool_services";

  /** The section's schema, generated from its raw shape; descriptors are open shapes. */
  static final ObjectNode SCHEMA = ConfigSections.schema(Raw.class);

  public ToolServicesConfig {
    services = List.copyOf(services);
    tools = List.copyOf(tools);
  }

  /** No tool services. */
  public static ToolServicesConfig none() {
    return new ToolServicesConfig(List.of(), List.of());
  }

  /**
   * Reads the section, adding its problems, and those of the files it lists, to the reading's; the
   * result is only meaningful when none was added. Relative {@code files} are resolved against the
   * reading's directory.
   *
   * @param section the section, or null when the file has none
   */
  public static ToolServicesConfig read(JsonNode section, SectionReading reading) {
    if (section == null || section.isMissingNode() || section.isNull()) {
      return none();
    }
    // Checked here rather than by the host, so that an unknown key does not hide the problems of
    // the descriptors and their files.
    ConfigSections.check(KEY, SCHEMA, section, reading.problems());
    if (!section.isObject()) {
      return none();
    }
    Reader reader = new Reader(reading.problems());
    reader.section(ConfigSections.bind(KEY, section, Raw.class), reading.directory());
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

  /** A descriptor file: its tree, and where each value starts, by JSON pointer. */
  private record DescriptorFile(Path path, JsonNode tree, Map<String, TokenStreamLocation> starts) {

    /**
     * Reads the file, or adds why it cannot be read (at its place in the file, when it is not JSON)
     * to the problems, saying where in the config it is listed.
     */
    static Optional<DescriptorFile> read(Path path, ConfigProblems listing, String pointer) {
      String text;
      try {
        text = Files.readString(path);
      } catch (IOException e) {
        listing.atValue(pointer, "cannot read the descriptor file " + path + " (" + e + ")");
        return Optional.empty();
      }
      Map<String, TokenStreamLocation> starts = new LinkedHashMap<>();
      JsonNode tree;
      ObjectMapper mapper = JsonMapper.shared();
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
        String place =
            path + (at == null ? "" : " line " + at.getLineNr() + ", column " + at.getColumnNr());
        // Placed in the descriptor file, as any problem inside it is; the listing says why it was
        // read.
        listing
            .in(any -> place, any -> place)
            .atValue(
                "",
                "not valid JSON ("
                    + e.getOriginalMessage().lines().findFirst().orElse("")
                    + ") (listed at "
                    + listing.whereValue(pointer)
                    + ")");
        return Optional.empty();
      }
      return Optional.of(
          new DescriptorFile(
              path, tree == null ? JsonMapper.shared().nullNode() : tree, Map.copyOf(starts)));
    }

    /** The problems of this file, added to those of the reading. */
    ConfigProblems problems(ConfigProblems reading) {
      return reading.in(this::at, this::at);
    }

    private String at(String pointer) {
      // The nearest enclosing value that has a location, up to the document itself.
      for (String at = pointer; ; at = at.substring(0, Math.max(0, at.lastIndexOf('/')))) {
        TokenStreamLocation location = starts.get(at);
        if (location != null) {
          return path + " line " + location.getLineNr() + ", column " + location.getColumnNr();
        }
        if (at.isEmpty()) {
          return path.toString();
        }
      }
    }
  }

  /** Where a descriptor was read: the problems of its file, and its pointer there. */
  private record Place(ConfigProblems problems, String pointer) {}

  /** Collects descriptors over the section and its files, adding problems to the reading's. */
  private static final class Reader {
    private final ConfigProblems problems;
    private final Map<String, ToolServiceDescriptor> services = new LinkedHashMap<>();
    private final Map<String, String> serviceAt = new LinkedHashMap<>();
    private final List<ToolDescriptor> tools = new ArrayList<>();
    private final List<Place> toolAt = new ArrayList<>();

    Reader(ConfigProblems problems) {
      this.problems = problems;
    }

    void section(Raw section, Path directory) {
      String pointer = "/" + KEY;
      descriptors(problems, section.services(), pointer + "/services", "id", false);
      descriptors(problems, section.tools(), pointer + "/tools", "name", true);
      JsonNode files = section.files() == null ? NullNode.getInstance() : section.files();
      if (files.isString()) {
        file(pointer + "/files", KEY + ".files", files, directory);
      } else if (files.isArray()) {
        for (int i = 0; i < files.size(); i++) {
          file(pointer + "/files/" + i, KEY + ".files[" + i + "]", files.get(i), directory);
        }
      } else if (!files.isNull()) {
        problems.atValue(
            pointer + "/files",
            "wrong type for '"
                + KEY
                + ".files': expected a list of paths to JSON files or directories, got "
                + ConfigProblems.describe(files));
      }
    }

    private void file(String pointer, String dotted, JsonNode value, Path directory) {
      if (!value.isString()) {
        problems.atValue(
            pointer,
            "wrong type for '"
                + dotted
                + "': expected a path to a JSON file or a directory, got "
                + ConfigProblems.describe(value));
        return;
      }
      String name = value.asString();
      if (name.isBlank()) {
        problems.atValue(
            pointer, "'" + dotted + "' is empty (expected a path to a JSON file or a directory)");
        return;
      }
      Path path = directory.resolve(name);
      if (Files.isDirectory(path)) {
        try (Stream<Path> listed = Files.list(path)) {
          listed
              .filter(each -> each.getFileName().toString().endsWith(".json"))
              .sorted()
              .forEach(each -> jsonFile(pointer, each));
        } catch (IOException e) {
          problems.atValue(
              pointer,
              "'" + dotted + "' is '" + name + "', a directory that cannot be listed (" + e + ")");
        }
      } else if (Files.isRegularFile(path)) {
        jsonFile(pointer, path);
      } else {
        problems.atValue(
            pointer,
            "'"
                + dotted
                + "' is '"
                + name
                + "' (expected a JSON file or a directory of them; there is none at "
                + path
                + ")");
      }
    }

    private void jsonFile(String pointer, Path path) {
      Optional<DescriptorFile> read = DescriptorFile.read(path, problems, pointer);
      if (read.isEmpty()) {
        return;
      }
      ConfigProblems in = read.get().problems(problems);
      JsonNode tree = read.get().tree();
      boolean sections =
          tree.isObject()
              && (tree.has("tool-service")
                  || tree.has("tool")
                  || tree.has("services")
                  || tree.has("tools"));
      if (sections) {
        for (Map.Entry<String, JsonNode> entry : tree.properties()) {
          String at = JsonPointer.empty().appendProperty(entry.getKey()).toString();
          switch (entry.getKey()) {
            case "tool-service", "services" -> descriptors(in, entry.getValue(), at, "id", false);
            case "tool", "tools" -> descriptors(in, entry.getValue(), at, "name", true);
            default ->
                in.atKey(
                    at,
                    "unknown key '"
                        + entry.getKey()
                        + "' (expected tool-service, tool, services or tools)");
          }
        }
      } else if (tree.isArray()) {
        for (int i = 0; i < tree.size(); i++) {
          JsonNode each = tree.get(i);
          descriptor(in, each, "/" + i, isTool(each));
        }
      } else {
        descriptor(in, tree, "", isTool(tree));
      }
    }

    private static boolean isTool(JsonNode descriptor) {
      return descriptor.has("service") || descriptor.has("type");
    }

    /** A descriptor, a list of them, or a mapping of keys to them. */
    private void descriptors(
        ConfigProblems in, JsonNode node, String pointer, String key, boolean tool) {
      if (node == null || node.isMissingNode() || node.isNull()) {
        return;
      }
      if (node.isArray()) {
        for (int i = 0; i < node.size(); i++) {
          descriptor(in, node.get(i), pointer + "/" + i, tool);
        }
      } else if (node.isObject() && node.has(key)) {
        descriptor(in, node, pointer, tool);
      } else if (node.isObject()) {
        for (Map.Entry<String, JsonNode> entry : node.properties()) {
          JsonNode value = entry.getValue();
          if (value.isObject() && !value.has(key)) {
            value = ((ObjectNode) value.deepCopy()).put(key, entry.getKey());
          }
          descriptor(
              in,
              value,
              JsonPointer.compile(pointer).appendProperty(entry.getKey()).toString(),
              tool);
        }
      } else {
        in.atValue(
            pointer,
            "wrong type for '"
                + ConfigProblems.dotted(pointer)
                + "': expected a mapping of "
                + (tool ? "tool names to tool" : "service ids to service")
                + " descriptors, or a list of them, got "
                + ConfigProblems.describe(node));
      }
    }

    private void descriptor(ConfigProblems in, JsonNode node, String pointer, boolean tool) {
      try {
        if (tool) {
          ToolDescriptor descriptor = ToolDescriptor.fromJson(node);
          tools.add(descriptor);
          toolAt.add(new Place(in, pointer));
        } else {
          ToolServiceDescriptor descriptor = ToolServiceDescriptor.fromJson(node);
          String where = in.whereKey(pointer);
          String before = serviceAt.putIfAbsent(descriptor.id(), where);
          if (before != null) {
            in.atKey(
                pointer,
                "tool service '"
                    + descriptor.id()
                    + "' is described twice (first at "
                    + before
                    + ")");
          } else {
            services.put(descriptor.id(), descriptor);
          }
        }
      } catch (IllegalArgumentException e) {
        in.atKey(pointer, e.getMessage());
      }
    }

    ToolServicesConfig result() {
      List<ToolServiceDescriptor> known = List.copyOf(services.values());
      Set<String> names = new HashSet<>();
      for (int i = 0; i < tools.size(); i++) {
        ToolDescriptor tool = tools.get(i);
        Place at = toolAt.get(i);
        if (!names.add(tool.name())) {
          at.problems().atKey(at.pointer(), "tool '" + tool.name() + "' is described twice");
          continue;
        }
        for (String problem : ToolServices.problems(known, List.of(tool))) {
          at.problems().atKey(at.pointer(), problem);
        }
      }
      return new ToolServicesConfig(known, tools);
    }
  }

  // ---- the section's raw shape: every key optional; descriptors are the document's shapes ----

  record Raw(
      @JsonPropertyDescription("a mapping of ids to tool service descriptors, or a list of them")
          JsonNode services,
      @JsonPropertyDescription("a mapping of names to tool descriptors, or a list of them")
          JsonNode tools,
      @JsonPropertyDescription("JSON files of descriptors, or directories of them")
          JsonNode files) {}
}
