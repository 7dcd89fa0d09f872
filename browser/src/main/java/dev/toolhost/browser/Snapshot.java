package dev.toolhost.browser;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import tools.jackson.databind.JsonNode;

/**
 * A snapshot is a page's accessibility tree as a model reads it: its interactive elements (links,
 * buttons, text fields, checkboxes, selects and the like) numbered as refs {@code N-1}, {@code
 * N-2}, ... where N is the snapshot's number, so that a ref from an older snapshot is told from a
 * current one; each with its role, name and value (cut to a length) and its state; then the page's
 * text, capped. The refs point at DOM nodes by their backend id, which holds while the page does.
 *
 * @param number the snapshot's number within its browser
 * @param nodes each ref's backend DOM node id, ref {@code N-1} first
 * @param labels each ref's role and name, as the snapshot shows them
 * @param text what the model reads
 */
record Snapshot(int number, List<Long> nodes, List<String> labels, String text) {

  /** The roles that get a ref, as the seed's tool has them. */
  static final Set<String> INTERACTIVE =
      Set.of(
          "button",
          "checkbox",
          "combobox",
          "link",
          "listbox",
          "menuitem",
          "menuitemcheckbox",
          "menuitemradio",
          "option",
          "radio",
          "searchbox",
          "slider",
          "spinbutton",
          "switch",
          "tab",
          "textbox");

  private static final Set<String> STATES =
      Set.of("checked", "selected", "expanded", "pressed", "disabled", "required", "focused");

  Snapshot {
    nodes = List.copyOf(nodes);
    labels = List.copyOf(labels);
  }

  /**
   * Reads {@code Accessibility.getFullAXTree}'s answer.
   *
   * @param number the snapshot's number
   * @param tree the answer, with its {@code nodes}
   * @param header the lines before the elements (the tab's title and URL)
   * @param config the caps
   */
  static Snapshot of(int number, JsonNode tree, String header, BrowserConfig config) {
    Map<String, JsonNode> byId = new HashMap<>();
    JsonNode root = null;
    for (JsonNode node : tree.path("nodes")) {
      byId.put(node.path("nodeId").asString(), node);
      if (root == null && node.path("parentId").isMissingNode()) {
        root = node;
      }
    }
    List<Long> refs = new ArrayList<>();
    List<String> labels = new ArrayList<>();
    StringBuilder elements = new StringBuilder();
    StringBuilder text = new StringBuilder();
    int interactive = 0;
    boolean textCut = false;
    Deque<JsonNode> stack = new ArrayDeque<>();
    if (root != null) {
      stack.push(root);
    }
    // Depth first in document order, as the tree's child ids give it.
    while (!stack.isEmpty()) {
      JsonNode node = stack.pop();
      JsonNode children = node.path("childIds");
      for (int i = children.size() - 1; i >= 0; i--) {
        JsonNode child = byId.get(children.get(i).asString());
        if (child != null) {
          stack.push(child);
        }
      }
      if (node.path("ignored").asBoolean(false)) {
        continue;
      }
      String role = node.path("role").path("value").asString("");
      String name = clean(node.path("name").path("value").asString(""));
      if (INTERACTIVE.contains(role) && node.has("backendDOMNodeId")) {
        interactive++;
        if (refs.size() >= config.maxRefs()) {
          continue;
        }
        refs.add(node.path("backendDOMNodeId").asLong());
        elements.append('[').append(number).append('-').append(refs.size()).append("] ");
        String label =
            name.isEmpty() ? role : role + " \"" + cut(name, config.maxNameChars()) + "\"";
        labels.add(label);
        elements.append(label);
        String value = clean(node.path("value").path("value").asString(""));
        if (!value.isEmpty()) {
          elements.append(" value=\"").append(cut(value, config.maxValueChars())).append('"');
        }
        for (JsonNode property : node.path("properties")) {
          String key = property.path("name").asString();
          JsonNode v = property.path("value").path("value");
          if (STATES.contains(key) && !v.isMissingNode()) {
            String shown = v.asString();
            if (key.equals("checked") || key.equals("pressed")) {
              elements.append(' ').append(key).append('=').append(shown);
            } else if (shown.equals("true")) {
              elements.append(' ').append(key);
            }
          }
        }
        elements.append('\n');
      } else if (role.equals("StaticText") && !name.isEmpty() && !textCut) {
        if (text.length() + name.length() + 1 > config.maxTextChars()) {
          textCut = true;
        } else {
          text.append(name).append('\n');
        }
      }
    }
    StringBuilder out = new StringBuilder(header);
    out.append("Snapshot ")
        .append(number)
        .append(": ")
        .append(interactive)
        .append(interactive == 1 ? " interactive element" : " interactive elements");
    if (interactive > refs.size()) {
      out.append(", the first ")
          .append(refs.size())
          .append(" numbered; ")
          .append(interactive - refs.size())
          .append(" more left out (the cap is ")
          .append(config.maxRefs())
          .append("; scroll, or use content() to read the page)");
    }
    out.append(". Refs hold until the page changes; take a new snapshot after it does.\n");
    out.append(elements);
    if (config.maxTextChars() > 0 && !text.isEmpty()) {
      out.append("\nPage text:\n").append(text);
      if (textCut) {
        out.append("[page text cut at ")
            .append(config.maxTextChars())
            .append(" characters; use content() for the whole page]\n");
      }
    }
    return new Snapshot(number, refs, labels, out.toString());
  }

  private static String clean(String text) {
    return text.replaceAll("\\s+", " ").strip();
  }

  static String cut(String text, int max) {
    if (text.length() <= max) {
      return text;
    }
    int end = Character.isHighSurrogate(text.charAt(max - 1)) ? max - 1 : max;
    return text.substring(0, end) + "…";
  }
}
