package dev.toolhost.server;

import java.util.List;
import java.util.function.Function;
import tools.jackson.databind.JsonNode;

/**
 * Config problems are the problems found while reading one config file, each message placed at the
 * line and column of the value or key it is about.
 *
 * <p>Section readers add to it, so that one reading reports every problem of the file at once; a
 * file the config names (a tool descriptor file, say) adds its problems to the same list through
 * {@link #in}, placed in that file. Not thread-safe: one reading, one thread.
 */
final class ConfigProblems {

  private final List<String> messages;
  private final Function<String, String> valuePlace;
  private final Function<String, String> keyPlace;

  /**
   * Problems added to the given list, placed by the given functions from the JSON pointer of a
   * value or key to where it is: the file's name and, when known, the line and column ({@code
   * config.yaml line 3, column 5}).
   */
  ConfigProblems(
      List<String> messages,
      Function<String, String> valuePlace,
      Function<String, String> keyPlace) {
    this.messages = messages;
    this.valuePlace = valuePlace;
    this.keyPlace = keyPlace;
  }

  /**
   * Problems of another file the config names, placed in that file by the given functions and added
   * to the same list.
   */
  ConfigProblems in(Function<String, String> valuePlace, Function<String, String> keyPlace) {
    return new ConfigProblems(messages, valuePlace, keyPlace);
  }

  /** Adds a problem with the value at the pointer. */
  void atValue(String pointer, String problem) {
    messages.add(valuePlace.apply(pointer) + ": " + problem);
  }

  /** Adds a problem with the key at the pointer (an unknown or repeated name, say). */
  void atKey(String pointer, String problem) {
    messages.add(keyPlace.apply(pointer) + ": " + problem);
  }

  /** Where the value at the pointer is, for a message that names a second place ("listed at"). */
  String whereValue(String pointer) {
    return valuePlace.apply(pointer);
  }

  /** Where the key at the pointer is, for a message that names a second place ("first at"). */
  String whereKey(String pointer) {
    return keyPlace.apply(pointer);
  }

  /** How many problems were found so far. */
  int count() {
    return messages.size();
  }

  /** A value read from the file as messages show it after "got": {@code 'text'}, a list, ... */
  static String describe(JsonNode value) {
    if (value == null || value.isMissingNode() || value.isNull()) {
      return "nothing";
    }
    if (value.isObject()) {
      return "a mapping";
    }
    if (value.isArray()) {
      return "a list";
    }
    if (value.isString()) {
      return "'" + value.asString() + "'";
    }
    if (value.isNumber()) {
      return "the number " + value.asString();
    }
    if (value.isBoolean()) {
      return String.valueOf(value.asBoolean());
    }
    return "something else";
  }
}
