package dev.toolhost.mcp;

import io.modelcontextprotocol.spec.McpSchema;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * Definition pins are the recorded hashes of MCP tool definitions (name, title, description,
 * schemas, annotations), kept in a JSON file so that a server that quietly changes a tool is
 * caught.
 *
 * <p>The first definition seen of a tool is pinned. A later, different definition is held as
 * pending and its tool quarantined until an operator approves it ({@link #approve}, {@code toolhost
 * mcp-approve SERVER TOOL}, or the config's approval list), which pins the pending definition.
 * Server names are compared ignoring case. The file is re-read on every check, so an approval made
 * by another process counts at the next listing. Thread-safe within a process; writes replace the
 * file atomically. Without a file, pins live in memory only.
 */
public final class DefinitionPins {

  private static final JsonMapper MAPPER = JsonMapper.shared();
  private static final String FILE_NAME = "mcp-pins.json";

  /** What a check found. */
  public enum Verdict {
    /** First seen: now pinned. */
    PINNED,
    /** Same as the pin. */
    UNCHANGED,
    /** Changed and approved (by the config's list): the new definition is now pinned. */
    APPROVED,
    /** Changed and not approved: the tool is quarantined. */
    QUARANTINED
  }

  private final Optional<Path> file;
  private final Set<String> approvedByConfig;
  private Map<String, String> pins = new TreeMap<>();
  private Map<String, String> pending = new TreeMap<>();

  private DefinitionPins(Optional<Path> file, Set<String> approvedByConfig) {
    this.file = file;
    this.approvedByConfig = Set.copyOf(approvedByConfig);
  }

  /**
   * Pins kept in {@code mcp-pins.json} under the state directory.
   *
   * @param approved {@code server/tool} entries whose changed definitions are approved
   */
  public static DefinitionPins inDirectory(Path stateDirectory, Set<String> approved) {
    return new DefinitionPins(
        Optional.of(stateDirectory.resolve(FILE_NAME)),
        approved.stream()
            .map(DefinitionPins::normalize)
            .collect(java.util.stream.Collectors.toSet()));
  }

  /** Pins kept in memory only. */
  public static DefinitionPins inMemory() {
    return new DefinitionPins(Optional.empty(), Set.of());
  }

  /** The file the pins live in, when they do. */
  public Optional<Path> file() {
    return file;
  }

  /** Checks a tool's definition against its pin, pinning or holding it as pending. */
  public synchronized Verdict check(String server, McpSchema.Tool tool) {
    String key = key(server, tool.name());
    String hash = hash(tool);
    load();
    String pin = pins.get(key);
    Verdict verdict;
    if (pin == null) {
      pins.put(key, hash);
      verdict = Verdict.PINNED;
    } else if (pin.equals(hash)) {
      if (pending.remove(key) == null) {
        return Verdict.UNCHANGED;
      }
      verdict = Verdict.UNCHANGED;
    } else if (approvedByConfig.contains(key)) {
      pins.put(key, hash);
      pending.remove(key);
      verdict = Verdict.APPROVED;
    } else {
      if (hash.equals(pending.put(key, hash))) {
        return Verdict.QUARANTINED;
      }
      verdict = Verdict.QUARANTINED;
    }
    save();
    return verdict;
  }

  /**
   * Approves the pending definition of a tool: it becomes the pin.
   *
   * @return whether a pending definition was approved
   */
  public synchronized boolean approve(String server, String tool) {
    String key = key(server, tool);
    load();
    String hash = pending.remove(key);
    if (hash == null) {
      return false;
    }
    pins.put(key, hash);
    save();
    return true;
  }

  /** The {@code server/tool} keys of every pending (quarantined) definition. */
  public synchronized Set<String> pending() {
    load();
    return Set.copyOf(pending.keySet());
  }

  /** The hash of a tool's definition: SHA-256 of its canonical JSON, without {@code _meta}. */
  public static String hash(McpSchema.Tool tool) {
    ObjectNode definition = MAPPER.createObjectNode();
    definition.put("name", tool.name());
    if (tool.title() != null) {
      definition.put("title", tool.title());
    }
    definition.put("description", tool.description() == null ? "" : tool.description());
    definition.set("inputSchema", MAPPER.valueToTree(tool.inputSchema()));
    if (tool.outputSchema() != null) {
      definition.set("outputSchema", MAPPER.valueToTree(tool.outputSchema()));
    }
    if (tool.annotations() != null) {
      definition.set("annotations", MAPPER.valueToTree(tool.annotations()));
    }
    String canonical = canonical(definition).toString();
    try {
      byte[] digest =
          MessageDigest.getInstance("SHA-256").digest(canonical.getBytes(StandardCharsets.UTF_8));
      return "sha256:" + HexFormat.of().formatHex(digest);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this JVM", e);
    }
  }

  private static JsonNode canonical(JsonNode node) {
    if (node.isObject()) {
      ObjectNode sorted = MAPPER.createObjectNode();
      TreeMap<String, JsonNode> fields = new TreeMap<>();
      for (Iterator<Map.Entry<String, JsonNode>> it = node.properties().iterator();
          it.hasNext(); ) {
        Map.Entry<String, JsonNode> field = it.next();
        if (!field.getValue().isNull()) {
          fields.put(field.getKey(), canonical(field.getValue()));
        }
      }
      fields.forEach(sorted::set);
      return sorted;
    }
    if (node.isArray()) {
      var array = MAPPER.createArrayNode();
      node.forEach(item -> array.add(canonical(item)));
      return array;
    }
    return node;
  }

  static String key(String server, String tool) {
    return server.toLowerCase(Locale.ROOT) + "/" + tool;
  }

  private static String normalize(String entry) {
    int slash = entry.indexOf('/');
    return slash < 0 ? entry : key(entry.substring(0, slash), entry.substring(slash + 1));
  }

  private void load() {
    if (file.isEmpty() || !Files.exists(file.get())) {
      return;
    }
    try {
      JsonNode root = MAPPER.readTree(Files.readString(file.get()));
      pins = strings(root.path("pins"));
      pending = strings(root.path("pending"));
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read the MCP pins file " + file.get(), e);
    } catch (RuntimeException e) {
      throw new IllegalStateException(
          "The MCP pins file " + file.get() + " is not valid JSON: " + e.getMessage(), e);
    }
  }

  private static Map<String, String> strings(JsonNode object) {
    Map<String, String> map = new TreeMap<>();
    object.properties().forEach(field -> map.put(field.getKey(), field.getValue().asString()));
    return map;
  }

  private void save() {
    if (file.isEmpty()) {
      return;
    }
    Path target = file.get();
    ObjectNode root = MAPPER.createObjectNode();
    ObjectNode pinsNode = root.putObject("pins");
    pins.forEach(pinsNode::put);
    ObjectNode pendingNode = root.putObject("pending");
    pending.forEach(pendingNode::put);
    try {
      Files.createDirectories(target.toAbsolutePath().getParent());
      Path temporary = target.resolveSibling(FILE_NAME + ".tmp");
      Files.writeString(
          temporary, MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(root) + "\n");
      try {
        Files.move(
            temporary, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
      } catch (AtomicMoveNotSupportedException e) {
        Files.move(temporary, target, StandardCopyOption.REPLACE_EXISTING);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot write the MCP pins file " + target, e);
    }
  }
}
