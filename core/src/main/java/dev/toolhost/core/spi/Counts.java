package dev.toolhost.core.spi;

/**
 * Counts are the config values that are whole numbers within bounds (a limit, a number of results,
 * a pool's size). Every extension checks its counts here, so that a count out of range is told the
 * same way in every section.
 */
public final class Counts {

  private Counts() {}

  /**
   * A config value read as a count: the fallback when absent; when it is outside the bounds, a
   * problem at the pointer that names the key as the file spells it ({@code 'web.search.count' is 0
   * (expected 1 to 20)}), and the fallback.
   *
   * @param pointer the value's JSON pointer from the file's root, such as {@code /web/search/count}
   */
  public static int read(
      Integer raw, int fallback, int min, int max, String pointer, ConfigProblems problems) {
    if (raw == null) {
      return fallback;
    }
    if (raw < min || raw > max) {
      problems.atValue(
          pointer,
          "'"
              + ConfigProblems.dotted(pointer)
              + "' is "
              + raw
              + " (expected "
              + min
              + " to "
              + max
              + ")");
      return fallback;
    }
    return raw;
  }
}
