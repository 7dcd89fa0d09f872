package dev.toolhost.server;

import java.util.ArrayList;
import java.util.List;

/**
 * The host's own tools are the tools a host serves with no tool of its own configured: the guides,
 * working memory and the services search, in the order a tool list names them.
 */
final class HostTools {

  /** Their names, in the order a tool list names them. */
  static final List<String> NAMES =
      List.of(
          "get_from_working_memory",
          "get_tool_guide",
          "list_tool_guides",
          "list_working_memory",
          "search_known_services",
          "search_working_memory");

  private HostTools() {}

  /** The given names, then the host's own tools. */
  static List<String> after(String... first) {
    List<String> names = new ArrayList<>(List.of(first));
    names.addAll(NAMES);
    return names;
  }
}
