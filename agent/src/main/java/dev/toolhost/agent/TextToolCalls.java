package dev.toolhost.agent;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Text tool calls are the tool calls a model wrote in the text of its answer instead of the API's
 * {@code tool_calls} field, as many open models do when served without a tool-call parser. These
 * forms are read:
 *
 * <ul>
 *   <li>Qwen's and Hermes' {@code <tool_call>{"name": ..., "arguments": {...}}</tool_call>} blocks,
 *       any number, the closing tag optional at the end;
 *   <li>Llama 3.x's {@code <|python_tag|>} followed by {@code {"name": ..., "parameters": {...}}}
 *       objects, several separated by {@code ;};
 *   <li>Mistral's {@code [TOOL_CALLS]} followed by an array of {@code {"name", "arguments"}}
 *       objects, or by {@code name[ARGS]{...}};
 *   <li>an answer that is nothing but a JSON object (or an array of them, in a code fence or not)
 *       with a {@code name} and {@code arguments} or {@code parameters} (Llama 3.x's form without
 *       the tag): only when every name is one of the tools offered, so that an answer that is JSON
 *       data stays an answer.
 * </ul>
 *
 * <p>Arguments may be an object or a string of JSON, as the API sends them. A call inside a marker
 * that cannot be read (not JSON, no name) is still a call, with a {@code problem} the loop sends
 * back to the model as the call's error result, as it does for a native call's bad arguments.
 * Stateless.
 */
final class TextToolCalls {

  private static final Pattern TOOL_CALL_BLOCK =
      Pattern.compile("<tool_call>(.*?)(?:</tool_call>|\\z)", Pattern.DOTALL);
  private static final String PYTHON_TAG = "<|python_tag|>";
  private static final String MISTRAL = "[TOOL_CALLS]";
  private static final Pattern MISTRAL_ARGS = Pattern.compile("\\s*([A-Za-z0-9_.\\-]+)\\[ARGS\\]");
  private static final Pattern NAME = Pattern.compile("\"name\"\\s*:\\s*\"([^\"]+)\"");
  private static final Pattern FENCE =
      Pattern.compile("\\A```(?:json)?\\s*(.*?)\\s*```\\z", Pattern.DOTALL);

  private TextToolCalls() {}

  /**
   * One call read from text.
   *
   * @param call the call as the history keeps it (its id made up, as the model gave none)
   * @param problem why it could not be read, when it could not
   */
  record Found(ModelToolCall call, Optional<String> problem) {
    Found {
      Objects.requireNonNull(call, "call");
      Objects.requireNonNull(problem, "problem");
    }
  }

  /**
   * What an answer's text holds.
   *
   * @param text the text left once the calls are taken out, when there is any
   * @param calls the calls, in the order written
   */
  record Parsed(Optional<String> text, List<Found> calls) {
    Parsed {
      Objects.requireNonNull(text, "text");
      calls = List.copyOf(calls);
    }
  }

  /**
   * The calls written in the text, when it holds any.
   *
   * @param offered the names of the tools offered, as the model sees them
   */
  static Optional<Parsed> parse(String content, Set<String> offered) {
    Matcher blocks = TOOL_CALL_BLOCK.matcher(content);
    if (blocks.find()) {
      List<Found> calls = new ArrayList<>();
      StringBuilder rest = new StringBuilder();
      int last = 0;
      do {
        rest.append(content, last, blocks.start());
        calls.add(one(unfenced(blocks.group(1).strip())));
        last = blocks.end();
      } while (blocks.find());
      rest.append(content.substring(last));
      return Optional.of(new Parsed(text(rest.toString()), calls));
    }
    int tag = content.indexOf(PYTHON_TAG);
    if (tag >= 0) {
      String body =
          content
              .substring(tag + PYTHON_TAG.length())
              .replace("<|eom_id|>", "")
              .replace("<|eot_id|>", "");
      return Optional.of(new Parsed(text(content.substring(0, tag)), sequence(body, ';')));
    }
    int mistral = content.indexOf(MISTRAL);
    if (mistral >= 0) {
      String body = content.substring(mistral + MISTRAL.length()).strip();
      return Optional.of(new Parsed(text(content.substring(0, mistral)), mistral(body)));
    }
    return bare(content, offered);
  }

  private static List<Found> mistral(String body) {
    List<Found> calls = new ArrayList<>();
    if (body.startsWith("[")) {
      JsonNode array;
      try {
        array = JsonMapper.shared().readTree(body.substring(0, end(body, 0)));
      } catch (JacksonException | IllegalArgumentException e) {
        return List.of(malformed(body, "the list after [TOOL_CALLS] is not JSON: " + reason(e)));
      }
      for (JsonNode element : array) {
        calls.add(one(element, element.toString()));
      }
      return calls;
    }
    // The newer form: name[ARGS]{...}, repeated.
    int at = 0;
    Matcher name = MISTRAL_ARGS.matcher(body);
    while (at < body.length() && name.find(at) && name.start() == at) {
      int from = name.end();
      int to;
      try {
        to = end(body, from);
      } catch (IllegalArgumentException e) {
        calls.add(malformed(body, "the arguments of " + name.group(1) + " are not JSON"));
        return calls;
      }
      String arguments = body.substring(from, to).strip();
      calls.add(checked(name.group(1), arguments));
      at = to;
      while (at < body.length() && Character.isWhitespace(body.charAt(at))) {
        at++;
      }
      if (body.startsWith(MISTRAL, at)) {
        at += MISTRAL.length();
      }
    }
    if (calls.isEmpty()) {
      calls.add(malformed(body, "no call follows [TOOL_CALLS]"));
    }
    return calls;
  }

  // JSON objects one after another, with the separator between them.
  private static List<Found> sequence(String body, char separator) {
    List<Found> calls = new ArrayList<>();
    int at = 0;
    String text = body.strip();
    while (at < text.length()) {
      int to;
      try {
        to = end(text, at);
      } catch (IllegalArgumentException e) {
        calls.add(one(text.substring(at)));
        return calls;
      }
      calls.add(one(text.substring(at, to)));
      at = to;
      while (at < text.length()
          && (Character.isWhitespace(text.charAt(at)) || text.charAt(at) == separator)) {
        at++;
      }
    }
    if (calls.isEmpty()) {
      calls.add(malformed(body, "nothing follows " + PYTHON_TAG));
    }
    return calls;
  }

  private static Optional<Parsed> bare(String content, Set<String> offered) {
    String text = unfenced(content.strip());
    if (!text.startsWith("{") && !text.startsWith("[")) {
      return Optional.empty();
    }
    JsonNode json;
    try {
      json = JsonMapper.shared().readTree(text);
    } catch (JacksonException e) {
      return Optional.empty();
    }
    List<JsonNode> objects = new ArrayList<>();
    if (json.isArray()) {
      json.forEach(objects::add);
    } else {
      objects.add(json);
    }
    if (objects.isEmpty()) {
      return Optional.empty();
    }
    for (JsonNode object : objects) {
      if (!object.isObject()
          || !object.path("name").isString()
          || !offered.contains(object.get("name").asString())
          || !(object.has("arguments") || object.has("parameters"))
          || object.size() > 3) {
        return Optional.empty();
      }
    }
    return Optional.of(
        new Parsed(
            Optional.empty(),
            objects.stream().map(object -> one(object, object.toString())).toList()));
  }

  private static Found one(String json) {
    JsonNode node;
    try {
      node = JsonMapper.shared().readTree(json);
    } catch (JacksonException e) {
      return malformed(json, "it is not JSON: " + reason(e));
    }
    return one(node, json);
  }

  private static Found one(JsonNode node, String written) {
    if (!node.isObject()) {
      return malformed(written, "it is not a JSON object with a name and arguments");
    }
    JsonNode name = node.path("name");
    if (!name.isString() || name.asString().isBlank()) {
      return malformed(written, "it has no \"name\"");
    }
    JsonNode arguments = node.has("arguments") ? node.get("arguments") : node.get("parameters");
    if (arguments == null || arguments.isNull()) {
      return found(name.asString(), "{}", Optional.empty());
    }
    if (arguments.isString()) {
      return checked(name.asString(), arguments.asString());
    }
    return found(name.asString(), arguments.toString(), Optional.empty());
  }

  // Arguments as text are passed on as they are: the dispatch path's validation answers text that
  // is not a JSON object, as it does for a native call.
  private static Found checked(String name, String arguments) {
    return found(name, arguments, Optional.empty());
  }

  private static Found malformed(String written, String problem) {
    Matcher name = NAME.matcher(written);
    return found(
        name.find() ? name.group(1) : "unreadable_tool_call",
        written.strip(),
        Optional.of(
            "The tool call written in your answer could not be read: "
                + problem
                + ". Write one call as <tool_call>{\"name\": \"tool_name\", \"arguments\":"
                + " {...}}</tool_call>."));
  }

  private static Found found(String name, String arguments, Optional<String> problem) {
    String id = "call_text_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    return new Found(new ModelToolCall(id, name, arguments), problem);
  }

  // The end of the JSON object or array that starts at (or after spaces from) the index.
  private static int end(String text, int from) {
    int i = from;
    while (i < text.length() && Character.isWhitespace(text.charAt(i))) {
      i++;
    }
    if (i >= text.length() || (text.charAt(i) != '{' && text.charAt(i) != '[')) {
      throw new IllegalArgumentException("no JSON object here");
    }
    int depth = 0;
    boolean string = false;
    for (; i < text.length(); i++) {
      char c = text.charAt(i);
      if (string) {
        if (c == '\\') {
          i++;
        } else if (c == '"') {
          string = false;
        }
      } else if (c == '"') {
        string = true;
      } else if (c == '{' || c == '[') {
        depth++;
      } else if (c == '}' || c == ']') {
        depth--;
        if (depth == 0) {
          return i + 1;
        }
      }
    }
    throw new IllegalArgumentException("the JSON never closes");
  }

  private static String unfenced(String text) {
    Matcher fence = FENCE.matcher(text);
    return fence.matches() ? fence.group(1) : text;
  }

  private static Optional<String> text(String rest) {
    String stripped = rest.strip();
    return stripped.isEmpty() ? Optional.empty() : Optional.of(stripped);
  }

  private static String reason(Exception e) {
    return e instanceof JacksonException jackson ? jackson.getOriginalMessage() : e.getMessage();
  }
}
