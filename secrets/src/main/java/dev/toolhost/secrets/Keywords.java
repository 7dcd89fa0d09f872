package dev.toolhost.secrets;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.List;
import java.util.Locale;

/**
 * Keywords are a set of words found in a text in one pass: an Aho-Corasick automaton compiled to a
 * table of transitions over ASCII (a state's next state is one array read), so the pass runs at the
 * speed of reading the text. Characters outside ASCII lead back to the start, since no keyword
 * holds one ({@link #of} refuses those that do).
 *
 * <p>Written here rather than taken from {@code org.ahocorasick}: that library keeps each state's
 * transitions in a map of boxed characters and makes an object per hit, which scans about 15 MB/s;
 * the table does several hundred. Immutable and thread-safe.
 */
final class Keywords {

  private static final int ALPHABET = 128;
  private static final int OUTPUT = 1 << 31;

  private final List<String> words;
  private final boolean ignoreCase;
  // The class of each ASCII character: its own for those some keyword holds, 0 for the rest
  // (which all lead where any character no keyword holds leads). It keeps the table small enough
  // for the processor's cache.
  private final byte[] classes;
  private final int width;
  // next[state * width + class]: the state after reading a character of that class, failure
  // links folded in.
  private final int[] next;
  // out[state]: the words that end in the state, as indexes into words (and those of its suffixes).
  private final int[][] out;

  private Keywords(
      List<String> words, boolean ignoreCase, byte[] classes, int width, int[] next, int[][] out) {
    this.words = words;
    this.ignoreCase = ignoreCase;
    this.classes = classes;
    this.width = width;
    this.next = next;
    this.out = out;
  }

  /** What is told of each keyword found: which, and where. */
  @FunctionalInterface
  interface Hit {
    /**
     * One keyword found.
     *
     * @param word the keyword's index in the list the keywords were made from
     * @param start where it starts in the text
     * @param end where it ends, exclusive
     */
    void found(int word, int start, int end);
  }

  /**
   * The keywords, matched ignoring ASCII case when {@code ignoreCase}.
   *
   * @throws IllegalArgumentException when a keyword is empty or holds a character outside ASCII
   */
  static Keywords of(List<String> keywords, boolean ignoreCase) {
    List<String> words = List.copyOf(keywords);
    List<int[]> gotos = new ArrayList<>();
    List<List<Integer>> outputs = new ArrayList<>();
    gotos.add(newState());
    outputs.add(new ArrayList<>());
    for (int w = 0; w < words.size(); w++) {
      String word = ignoreCase ? words.get(w).toLowerCase(Locale.ROOT) : words.get(w);
      if (word.isEmpty() || !word.chars().allMatch(c -> c < ALPHABET)) {
        throw new IllegalArgumentException("A keyword must be ASCII and not empty: " + word);
      }
      int state = 0;
      for (char c : word.toCharArray()) {
        if (gotos.get(state)[c] < 0) {
          gotos.add(newState());
          outputs.add(new ArrayList<>());
          gotos.get(state)[c] = gotos.size() - 1;
        }
        state = gotos.get(state)[c];
      }
      outputs.get(state).add(w);
    }
    int states = gotos.size();
    int[] fail = new int[states];
    int[] next = new int[states * ALPHABET];
    Deque<Integer> queue = new ArrayDeque<>();
    for (int c = 0; c < ALPHABET; c++) {
      int to = gotos.get(0)[c];
      next[c] = Math.max(to, 0);
      if (to > 0) {
        queue.add(to);
      }
    }
    // Breadth first: a state's failure state is known before its children are.
    while (!queue.isEmpty()) {
      int state = queue.poll();
      outputs.get(state).addAll(outputs.get(fail[state]));
      for (int c = 0; c < ALPHABET; c++) {
        int to = gotos.get(state)[c];
        if (to > 0) {
          fail[to] = next[fail[state] * ALPHABET + c];
          next[state * ALPHABET + c] = to;
          queue.add(to);
        } else {
          next[state * ALPHABET + c] = next[fail[state] * ALPHABET + c];
        }
      }
    }
    int[][] out = new int[states][];
    for (int s = 0; s < states; s++) {
      out[s] = outputs.get(s).stream().mapToInt(Integer::intValue).toArray();
    }
    // The full table over ASCII, folded onto the classes of the characters keywords hold.
    byte[] classes = new byte[ALPHABET];
    int width = 1;
    for (int c = 0; c < ALPHABET; c++) {
      if (gotos.get(0)[c] >= 0 || used(gotos, c)) {
        classes[c] = (byte) width++;
      }
    }
    // A state some word ends in is marked by the sign bit of every transition into it, so that
    // the pass reads the output table only there.
    int[] folded = new int[states * width];
    for (int state = 0; state < states; state++) {
      for (int c = 0; c < ALPHABET; c++) {
        int to = next[state * ALPHABET + c];
        folded[state * width + classes[c]] = out[to].length > 0 ? to | OUTPUT : to;
      }
    }
    if (ignoreCase) {
      for (int c = 'A'; c <= 'Z'; c++) {
        classes[c] = classes[c + ('a' - 'A')];
      }
    }
    return new Keywords(words, ignoreCase, classes, width, folded, out);
  }

  /** Whether some state has a transition on the character. */
  private static boolean used(List<int[]> gotos, int c) {
    for (int[] state : gotos) {
      if (state[c] >= 0) {
        return true;
      }
    }
    return false;
  }

  private static int[] newState() {
    int[] gotos = new int[ALPHABET];
    Arrays.fill(gotos, -1);
    return gotos;
  }

  /** The keyword of that index. */
  String word(int index) {
    return words.get(index);
  }

  /**
   * Tells the hit of every keyword found in the text, overlapping ones included, in order; says
   * whether the text holds a character outside ASCII (which the pass reads anyway, so that a caller
   * need not read the text again to know).
   */
  boolean find(String text, Hit hit) {
    int state = 0;
    int length = text.length();
    boolean wide = false;
    for (int i = 0; i < length; i++) {
      char c = text.charAt(i);
      if (c >= ALPHABET) {
        state = 0;
        wide = true;
        continue;
      }
      state = next[state * width + classes[c]];
      if (state < 0) {
        state &= ~OUTPUT;
        for (int word : out[state]) {
          hit.found(word, i + 1 - words.get(word).length(), i + 1);
        }
      }
    }
    return wide;
  }
}
