package dev.toolhost.agent;

import dev.toolhost.core.ToolSpec;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import tools.jackson.databind.node.ObjectNode;

/**
 * Tool aliases are the names tools are offered to an OpenAI-compatible model under, and the way
 * back from those names to the tools.
 *
 * <p>OpenAI accepts function names of at most 64 characters of {@code [A-Za-z0-9_-]}, narrower than
 * the MCP rule tool names follow (1 to 128 of {@code [A-Za-z0-9_.-]}). A name that fits is offered
 * as is; one that does not is offered under a stable alias: its disallowed characters replaced by
 * {@code _}, cut to 55 characters, then {@code _} and eight hex digits of the SHA-256 of the whole
 * name. The same name always gets the same alias, so the prompt prefix stays stable; an alias that
 * would clash with another offered name takes more digits. Immutable.
 */
public final class ToolAliases {

  private static final Pattern OPENAI_NAME = Pattern.compile("[A-Za-z0-9_-]{1,64}");

  private final List<ObjectNode> wireTools;
  private final Map<String, String> toolByAlias;

  private ToolAliases(List<ObjectNode> wireTools, Map<String, String> toolByAlias) {
    this.wireTools = List.copyOf(wireTools);
    this.toolByAlias = Map.copyOf(toolByAlias);
  }

  /** The aliases for the given specs, in their order. */
  public static ToolAliases of(List<ToolSpec> specs) {
    Set<String> taken = new HashSet<>();
    for (ToolSpec spec : specs) {
      if (fits(spec.name())) {
        taken.add(spec.name());
      }
    }
    List<ObjectNode> wire = new ArrayList<>(specs.size());
    Map<String, String> byAlias = new HashMap<>();
    for (ToolSpec spec : specs) {
      ObjectNode tool = spec.toOpenAiFunction();
      if (!fits(spec.name())) {
        String alias = alias(spec.name(), 8);
        for (int digits = 9; !taken.add(alias) && digits <= 64; digits++) {
          alias = alias(spec.name(), digits);
        }
        ((ObjectNode) tool.get("function")).put("name", alias);
        byAlias.put(alias, spec.name());
      }
      wire.add(tool);
    }
    return new ToolAliases(wire, byAlias);
  }

  /** Whether OpenAI accepts the name as a function name. */
  public static boolean fits(String name) {
    return OPENAI_NAME.matcher(name).matches();
  }

  /** The tools in OpenAI function form, each under the name it is offered by. */
  public List<ObjectNode> wireTools() {
    return wireTools;
  }

  /** The tool a name the model called refers to: the aliased tool, or the name itself. */
  public String toolName(String offered) {
    return toolByAlias.getOrDefault(offered, offered);
  }

  private static String alias(String name, int digits) {
    String hash = HexFormat.of().formatHex(sha256(name));
    String hashPart = hash.substring(0, Math.min(digits, hash.length()));
    String safe = name.replaceAll("[^A-Za-z0-9_-]", "_");
    int room = 64 - 1 - hashPart.length();
    return (safe.length() > room ? safe.substring(0, room) : safe) + "_" + hashPart;
  }

  private static byte[] sha256(String text) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("Every JDK has SHA-256", e);
    }
  }
}
