package dev.toolhost.core.spi;

/**
 * The built-ins are the config's {@code builtins:} switches: the tool sets a host registers unless
 * the operator turns them off. Only these three have a switch; every other capability is on when
 * its own section is present.
 *
 * @param guides whether to register {@code list_tool_guides} and {@code get_tool_guide}
 * @param memory whether to register the working memory tools ({@code get_from_working_memory},
 *     {@code list_working_memory}, {@code search_working_memory}) and chunk large tool results into
 *     working memory
 * @param search whether to register {@code search_known_services}
 */
public record Builtins(boolean guides, boolean memory, boolean search) {

  /** The guides as given, memory and search on. */
  public Builtins(boolean guides) {
    this(guides, true, true);
  }

  /** Every built-in on. */
  public static Builtins defaults() {
    return new Builtins(true, true, true);
  }
}
