package dev.toolhost.server;

import java.util.List;
import java.util.function.BiFunction;

/**
 * Config problems are the problems found while reading one config file, each message placed at the
 * line and column of the value or key it is about.
 *
 * <p>Section readers add to it, so that one reading reports every problem of the file at once. Not
 * thread-safe: one reading, one thread.
 */
final class ConfigProblems {

  private final List<String> messages;
  private final BiFunction<String, String, String> atValue;
  private final BiFunction<String, String, String> atKey;

  /**
   * Problems added to the given list, placed by the given functions from a JSON pointer and a
   * problem to a message naming the file, line and column.
   */
  ConfigProblems(
      List<String> messages,
      BiFunction<String, String, String> atValue,
      BiFunction<String, String, String> atKey) {
    this.messages = messages;
    this.atValue = atValue;
    this.atKey = atKey;
  }

  /** Adds a problem with the value at the pointer. */
  void atValue(String pointer, String problem) {
    messages.add(atValue.apply(pointer, problem));
  }

  /** Adds a problem with the key at the pointer (an unknown or repeated name, say). */
  void atKey(String pointer, String problem) {
    messages.add(atKey.apply(pointer, problem));
  }

  /** How many problems were found so far. */
  int count() {
    return messages.size();
  }
}
