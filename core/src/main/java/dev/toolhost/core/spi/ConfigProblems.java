package dev.toolhost.core.spi;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.function.Function;
import tools.jackson.core.JsonPointer;
import tools.jackson.core.JsonToken;
import tools.jackson.databind.JsonNode;

/**
 * Config problems are the problems found while reading one config file, each message placed at the
 * line and column of the value or key it is about.
 *
 * <p>Host extensions add to it while they check their sections ({@link HostExtension#read}), and
 * the host's own sections do too, so that one reading reports every problem of the file at once; a
 * file the config names (a tool descriptor file, say) adds its problems to the same list through
 * {@link #in}, placed in that file. Not thread-safe: one reading, one thread.
 */
public final class ConfigProblems {

  private final List<String> messages;
  private final Function<String, String> valuePlace;
  private final Function<String, String> keyPlace;

  /**
   * Problems added to the given list, placed by the given functions from the JSON pointer of a
   * value or key to where it is: the file's name and, when known, the line and column ({@code
   * config.yaml line 3, column 5}).
   */
  public ConfigProblems(
      List<String> messages,
      Function<String, String> valuePlace,
      Function<String, String> keyPlace) {
    this.messages = messages;
    this.valuePlace = valuePlace;
    this.keyPlace = keyPlace;
  }

  /**
   * Problems of a config that no file holds (a section made in code): placed at the config, each
   * message naming its key.
   */
  public static ConfigProblems unplaced() {
    return new ConfigProblems(new ArrayList<>(), pointer -> "config", pointer -> "config");
  }

  /**
   * Throws every problem found, if any, one per line.
   *
   * @throws ConfigException listing the problems
   */
  public void throwIfAny() {
    if (!messages.isEmpty()) {
      throw new ConfigException(String.join("\n", messages));
    }
  }

  /**
   * Problems of another file the config names, placed in that file by the given functions and added
   * to the same list.
   */
  public ConfigProblems in(Function<String, String> valuePlace, Function<String, String> keyPlace) {
    return new ConfigProblems(messages, valuePlace, keyPlace);
  }

  /** Adds a problem with the value at the pointer. */
  public void atValue(String pointer, String problem) {
    messages.add(valuePlace.apply(pointer) + ": " + problem);
  }

  /** Adds a problem with the key at the pointer (an unknown or repeated name, say). */
  public void atKey(String pointer, String problem) {
    messages.add(keyPlace.apply(pointer) + ": " + problem);
  }

  /** Where the value at the pointer is, for a message that names a second place ("listed at"). */
  public String whereValue(String pointer) {
    return valuePlace.apply(pointer);
  }

  /** Where the key at the pointer is, for a message that names a second place ("first at"). */
  public String whereKey(String pointer) {
    return keyPlace.apply(pointer);
  }

  /** How many problems were found so far. */
  public int count() {
    return messages.size();
  }

  /** The dotted path of a JSON pointer, as messages name keys ({@code tool_services.files[2]}). */
  public static String dotted(String pointer) {
    StringBuilder text = new StringBuilder();
    for (JsonPointer at = JsonPointer.compile(pointer); !at.matches(); at = at.tail()) {
      if (at.mayMatchElement()) {
        text.append('[').append(at.getMatchingIndex()).append(']');
      } else {
        text.append(text.isEmpty() ? "" : ".").append(at.getMatchingProperty());
      }
    }
    return text.toString();
  }

  /** A value read from the file as messages show it after "got": {@code 'text'}, a list, ... */
  public static String describe(JsonNode value) {
    if (value == null || value.isMissingNode()) {
      return "nothing";
    }
    return describe(value.asToken(), value.isValueNode() ? value.asString() : "");
  }

  /** A token of the file, with its text when it is a scalar, as messages show it after "got". */
  public static String describe(JsonToken token, String text) {
    return switch (token) {
      case START_OBJECT -> "a mapping";
      case START_ARRAY -> "a list";
      case VALUE_STRING -> "'" + text + "'";
      case VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT -> "the number " + text;
      case VALUE_TRUE -> "true";
      case VALUE_FALSE -> "false";
      case VALUE_NULL -> "nothing";
      default -> "something else";
    };
  }

  /**
   * What to say after an unknown key: {@code " (did you mean 'port'? expected one of: host,
   * port)"}, naming the nearest valid key when one is within two edits (a transposition counts
   * one), else only the valid keys, sorted.
   */
  public static String expectedKeys(String given, Collection<String> known) {
    List<String> sorted = known.stream().sorted().toList();
    String nearest = null;
    int best = Math.min(2, given.length() - 1);
    for (String key : sorted) {
      int distance = distance(given, key);
      if (distance <= best && (nearest == null || distance < distance(given, nearest))) {
        nearest = key;
      }
    }
    String keys = "expected one of: " + String.join(", ", sorted);
    return nearest == null ? " (" + keys + ")" : " (did you mean '" + nearest + "'? " + keys + ")";
  }

  // The optimal string alignment distance: Levenshtein with adjacent transpositions, so that
  // 'prot' is one edit from 'port'. A dozen lines; no library in the build has it.
  public static int distance(String a, String b) {
    int[][] d = new int[a.length() + 1][b.length() + 1];
    for (int i = 0; i <= a.length(); i++) {
      d[i][0] = i;
    }
    for (int j = 0; j <= b.length(); j++) {
      d[0][j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      for (int j = 1; j <= b.length(); j++) {
        int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
        d[i][j] = Math.min(Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1), d[i - 1][j - 1] + cost);
        if (i > 1
            && j > 1
            && a.charAt(i - 1) == b.charAt(j - 2)
            && a.charAt(i - 2) == b.charAt(j - 1)) {
          d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
        }
      }
    }
    return d[a.length()][b.length()];
  }
}
