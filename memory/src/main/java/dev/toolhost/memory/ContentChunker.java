package dev.toolhost.memory;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Objects;

/**
 * The content chunker splits text (markdown, JSON, plain text) into chunks no longer than a maximum
 * length, along the document's own structure where it has one, in as few chunks as it can.
 *
 * <p>A document's sections start at its H1, H2 and H3 heading lines ({@code # }, {@code ## },
 * {@code ### } at the start of a line, outside fenced code blocks); text before the first heading
 * is a section of its own. Consecutive sections are packed into one chunk as long as they fit
 * together, so that a document with many small sections makes few chunks, and a chunk always starts
 * at the start of a section (or of a piece of a split one). A section is split only when it alone
 * is longer than the maximum: paragraph by paragraph (paragraphs are separated by blank lines) into
 * as few pieces as fit, and a paragraph longer than the maximum is hard-split, at the last line
 * break in the second half of the window when there is one, else at the maximum (never inside a
 * surrogate pair). The pieces of a split section keep its heading, the second one as "Heading
 * (continued 1)" and so on; the last piece is packed with the sections after it when they fit.
 *
 * <p>Each chunk lists the sections (and pieces) that start in it, in order ({@link
 * Chunk#sections}), so that the {@link #outline} maps every heading to the chunk that holds it; a
 * chunk's own heading is the first of them.
 *
 * <p>No content is lost: each chunk is an exact slice of the input, its heading lines included, and
 * the chunks in order, concatenated, give back the input less the blank lines that lay between them
 * (and any blank lines it starts or ends with). Blank input gives no chunks; a chunk is never
 * empty, but it can be only whitespace when a line longer than a chunk is cut inside a long run of
 * spaces. Stateless and thread-safe.
 */
public final class ContentChunker {

  private final int maxLength;

  /**
   * A chunker of chunks at most {@code maxLength} characters long.
   *
   * @throws IllegalArgumentException when {@code maxLength} is less than 2
   */
  public ContentChunker(int maxLength) {
    if (maxLength < 2) {
      throw new IllegalArgumentException("maxLength must be at least 2, not " + maxLength + ".");
    }
    this.maxLength = maxLength;
  }

  /** The longest chunk this chunker makes. */
  public int maxLength() {
    return maxLength;
  }

  /**
   * A chunk is one piece of a chunked document.
   *
   * @param heading the heading of its first section, without its {@code #} marks and with
   *     "(continued n)" after it when the chunk starts with the n-th further piece of a split
   *     section; empty for text before the first heading
   * @param level the heading's level, 1 to 3, or 0 for text before the first heading
   * @param content the exact text of the chunk
   * @param sections the sections, and pieces of split sections, that start in the chunk, in order;
   *     the first is its own heading and level
   */
  public record Chunk(String heading, int level, String content, List<Section> sections) {
    public Chunk {
      Objects.requireNonNull(heading, "heading");
      Objects.requireNonNull(content, "content");
      sections = List.copyOf(sections);
      if (sections.isEmpty()
          || !sections.getFirst().heading().equals(heading)
          || sections.getFirst().level() != level) {
        throw new IllegalArgumentException(
            "A chunk's first section must be its own heading and level.");
      }
    }

    /** A chunk that holds one section, or one piece of one. */
    public Chunk(String heading, int level, String content) {
      this(heading, level, content, List.of(new Section(heading, level)));
    }

    /** The heading, or "Part {index}" when there is none. */
    public String label(int index) {
      return heading.isEmpty() ? "Part " + index : heading;
    }
  }

  /**
   * A section is one heading of a chunk, as the outline lists it.
   *
   * @param heading the heading without its {@code #} marks, with "(continued n)" for a further
   *     piece of a split section; empty for text before the first heading
   * @param level the heading's level, 1 to 3, or 0 for text before the first heading
   */
  public record Section(String heading, int level) {
    public Section {
      Objects.requireNonNull(heading, "heading");
    }
  }

  /** Splits the content into chunks; see the class comment for how. */
  public List<Chunk> chunk(String content) {
    Objects.requireNonNull(content, "content");
    Packer packer = new Packer(content);
    String heading = "";
    int level = 0;
    int sectionStart = 0;
    boolean inFence = false;
    char fence = 0;
    for (int lineStart = 0; lineStart < content.length(); ) {
      int lineEnd = lineEnd(content, lineStart);
      int marks = headingLevel(content, lineStart, lineEnd);
      if (!inFence && marks > 0 && lineStart > sectionStart) {
        section(content, sectionStart, lineStart, heading, level, packer);
      }
      if (!inFence && marks > 0) {
        sectionStart = lineStart;
        heading = headingText(content, lineStart + marks, lineEnd);
        level = marks;
      }
      char opened = fenceMark(content, lineStart, lineEnd);
      if (opened != 0 && (!inFence || opened == fence)) {
        inFence = !inFence;
        fence = opened;
      }
      lineStart = lineEnd;
    }
    section(content, sectionStart, content.length(), heading, level, packer);
    return packer.finish();
  }

  /**
   * Renders the outline of a chunked document: every section's heading as a nested markdown list,
   * each deeper level of heading indented under the one before it, each pointing at the key of the
   * chunk that holds it.
   *
   * <pre>
   * ## Document Outline
   *
   * - **Models Overview** → `session/abc123/tool-list_models-a1b2c3-chunk0`
   *   - **Pricing** → `session/abc123/tool-list_models-a1b2c3-chunk0`
   *     - **Token Limits** → `session/abc123/tool-list_models-a1b2c3-chunk1`
   * </pre>
   *
   * @param chunks the chunks, in order
   * @param keys the key of each chunk, in the same order
   * @throws IllegalArgumentException when there is not one key per chunk
   */
  public static String outline(List<Chunk> chunks, List<String> keys) {
    if (chunks.size() != keys.size()) {
      throw new IllegalArgumentException(
          chunks.size() + " chunks need as many keys, not " + keys.size() + ".");
    }
    StringBuilder outline = new StringBuilder("## Document Outline\n\n");
    Deque<Integer> open = new ArrayDeque<>();
    for (int i = 0; i < chunks.size(); i++) {
      for (Section section : chunks.get(i).sections()) {
        int depth = 0;
        if (section.level() > 0) {
          while (!open.isEmpty() && open.peek() >= section.level()) {
            open.pop();
          }
          depth = open.size();
          open.push(section.level());
        }
        outline
            .append("  ".repeat(depth))
            .append("- **")
            .append(section.heading().isEmpty() ? "Part " + i : section.heading())
            .append("** → `")
            .append(keys.get(i))
            .append("`\n");
      }
    }
    return outline.toString();
  }

  /**
   * The packer gathers sections and pieces into chunks: {@code [open, openEnd)} is the chunk being
   * filled and {@code sections} what starts in it.
   */
  private final class Packer {
    private final String content;
    private final List<Chunk> chunks = new ArrayList<>();
    private final List<Section> sections = new ArrayList<>();
    private int open;
    private int openEnd;

    Packer(String content) {
      this.content = content;
    }

    /** Adds a section or piece at {@code [start, end)}, to the open chunk when it fits there. */
    void add(int start, int end, Section section) {
      if (!sections.isEmpty() && end - open > maxLength) {
        flush();
      }
      if (sections.isEmpty()) {
        open = start;
      }
      openEnd = end;
      sections.add(section);
    }

    /** Closes the open chunk, if any. */
    void flush() {
      if (sections.isEmpty()) {
        return;
      }
      Section first = sections.getFirst();
      chunks.add(
          new Chunk(first.heading(), first.level(), content.substring(open, openEnd), sections));
      sections.clear();
    }

    List<Chunk> finish() {
      flush();
      return chunks;
    }
  }

  /** Adds one section, its text between {@code start} and {@code end}, split when too long. */
  private void section(
      String content, int start, int end, String heading, int level, Packer packer) {
    start = skipBlankLines(content, start, end);
    end = trimBlankLines(content, start, end);
    if (start >= end) {
      return;
    }
    if (end - start <= maxLength) {
      packer.add(start, end, new Section(heading, level));
      return;
    }
    // A section longer than a chunk starts one of its own; its pieces, all but the last, are
    // chunks of their own too.
    packer.flush();
    int piece = 0;
    // Pack paragraphs: [open, openEnd) is the piece being filled.
    int open = start;
    int openEnd = start;
    int at = start;
    while (at < end) {
      int paragraphEnd = paragraphEnd(content, at, end);
      if (paragraphEnd - open <= maxLength) {
        openEnd = paragraphEnd;
      } else {
        if (openEnd > open) {
          piece(packer, open, openEnd, heading, level, piece++);
        }
        open = at;
        // A paragraph longer than a chunk: cut it until what is left fits.
        while (paragraphEnd - open > maxLength) {
          int cut = hardCut(content, open);
          piece(packer, open, cut, heading, level, piece++);
          open = cut;
        }
        openEnd = paragraphEnd;
      }
      at = skipBlankLines(content, paragraphEnd, end);
    }
    if (openEnd > open) {
      // The last piece stays open: the sections after it may fit with it.
      packer.add(open, openEnd, pieceSection(heading, level, piece));
    }
  }

  private static void piece(
      Packer packer, int start, int end, String heading, int level, int piece) {
    packer.add(start, end, pieceSection(heading, level, piece));
    packer.flush();
  }

  private static Section pieceSection(String heading, int level, int piece) {
    String label =
        piece == 0 || heading.isEmpty() ? heading : heading + " (continued " + piece + ")";
    return new Section(label, level);
  }

  /** Where to cut a run of text that starts at {@code start} and is longer than a chunk. */
  private int hardCut(String content, int start) {
    int limit = start + maxLength;
    int lastBreak = content.lastIndexOf('\n', limit - 1);
    if (lastBreak >= start + maxLength / 2) {
      return lastBreak + 1;
    }
    if (Character.isHighSurrogate(content.charAt(limit - 1))
        && Character.isLowSurrogate(content.charAt(limit))) {
      return limit - 1;
    }
    return limit;
  }

  /** The end of the paragraph starting at {@code start}: past its last non-blank line. */
  private static int paragraphEnd(String content, int start, int end) {
    int at = start;
    while (at < end) {
      int next = lineEnd(content, at);
      if (isBlank(content, at, next)) {
        return at;
      }
      at = Math.min(next, end);
    }
    return end;
  }

  private static int skipBlankLines(String content, int start, int end) {
    int at = start;
    while (at < end) {
      int next = lineEnd(content, at);
      if (!isBlank(content, at, next)) {
        return at;
      }
      at = next;
    }
    return end;
  }

  /** The end of the section without the blank lines it ends with. */
  private static int trimBlankLines(String content, int start, int end) {
    int trimmed = end;
    int at = end;
    while (at > start) {
      int lineStart = content.lastIndexOf('\n', at - 2) + 1;
      lineStart = Math.max(lineStart, start);
      if (!isBlank(content, lineStart, at)) {
        return trimmed;
      }
      trimmed = lineStart;
      at = lineStart;
    }
    return start;
  }

  /** The start of the next line: just past the line break, or the end of the content. */
  private static int lineEnd(String content, int lineStart) {
    int newline = content.indexOf('\n', lineStart);
    return newline < 0 ? content.length() : newline + 1;
  }

  private static boolean isBlank(String content, int start, int end) {
    for (int i = start; i < end; i++) {
      if (!Character.isWhitespace(content.charAt(i))) {
        return false;
      }
    }
    return true;
  }

  /** 1 to 3 for a line that starts with {@code # }, {@code ## } or {@code ### }; else 0. */
  private static int headingLevel(String content, int start, int end) {
    int marks = 0;
    while (marks < 4 && start + marks < end && content.charAt(start + marks) == '#') {
      marks++;
    }
    if (marks == 0 || marks > 3 || start + marks >= end) {
      return 0;
    }
    char after = content.charAt(start + marks);
    return after == ' ' || after == '\t' ? marks : 0;
  }

  private static String headingText(String content, int start, int end) {
    return content.substring(start, end).strip();
  }

  /** The fence character of a line that opens or closes a fenced code block, or 0. */
  private static char fenceMark(String content, int start, int end) {
    int at = start;
    while (at < end && at - start < 3 && content.charAt(at) == ' ') {
      at++;
    }
    if (at + 3 > end) {
      return 0;
    }
    char c = content.charAt(at);
    if ((c == '`' || c == '~') && content.charAt(at + 1) == c && content.charAt(at + 2) == c) {
      return c;
    }
    return 0;
  }
}
