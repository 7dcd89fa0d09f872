package dev.toolhost.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.toolhost.memory.ContentChunker.Chunk;
import dev.toolhost.memory.ContentChunker.Section;
import java.util.List;
import java.util.Random;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class ContentChunkerTest {

  /** The input less its blank lines: what the chunks, concatenated, must give back. */
  static String withoutBlankLines(String text) {
    return text.lines()
        .filter(line -> !line.isBlank())
        .map(line -> line + "\n")
        .reduce("", String::concat);
  }

  /**
   * Asserts that the chunks are exact, ordered slices of the input covering all but blank lines.
   */
  static void assertNothingLost(String input, List<Chunk> chunks, int maxLength) {
    int at = 0;
    for (Chunk chunk : chunks) {
      assertThat(chunk.content().length()).isLessThanOrEqualTo(maxLength);
      // Never empty; whitespace only is possible, when a line longer than a chunk is cut inside a
      // run of spaces.
      assertThat(chunk.content()).isNotEmpty();
      int found = input.indexOf(chunk.content(), at);
      assertThat(found).as("chunk found in order").isGreaterThanOrEqualTo(at);
      assertThat(input.substring(at, found)).as("only blank lines between chunks").isBlank();
      at = found + chunk.content().length();
    }
    assertThat(input.substring(at)).isBlank();
    String joined = String.join("", chunks.stream().map(Chunk::content).toList());
    assertThat(withoutBlankLines(joined)).isEqualTo(withoutBlankLines(input));
  }

  /** A document with headings of three levels, an H4 and a hashtag, which are no headings. */
  private static final String HEADINGS =
      """
      Intro text.

      # Models
      All models.
      ## Pricing
      Per token.
      #### Fine print
      Still pricing.
      #hashtag is not a heading
      ### Token limits
      128k.
      """;

  @Test
  void sectionsStartAtH1H2AndH3ButNotAtH4OrHashtags() {
    String doc = HEADINGS;

    List<Chunk> chunks = new ContentChunker(1000).chunk(doc);

    assertThat(chunks).hasSize(1);
    assertThat(chunks.getFirst().sections())
        .containsExactly(
            new Section("", 0),
            new Section("Models", 1),
            new Section("Pricing", 2),
            new Section("Token limits", 3));
    assertNothingLost(doc, chunks, 1000);
  }

  @Test
  void aChunkStartsAtASectionWhenTheNextSectionDoesNotFit() {
    String doc = HEADINGS;

    List<Chunk> chunks = new ContentChunker(80).chunk(doc);

    assertThat(chunks)
        .containsExactly(
            new Chunk(
                "",
                0,
                "Intro text.\n\n# Models\nAll models.\n",
                List.of(new Section("", 0), new Section("Models", 1))),
            new Chunk(
                "Pricing",
                2,
                "## Pricing\nPer token.\n#### Fine print\nStill pricing.\n#hashtag is not a heading\n"),
            new Chunk("Token limits", 3, "### Token limits\n128k.\n"));
    assertNothingLost(doc, chunks, 80);
  }

  @Test
  void manySmallSectionsArePackedIntoFewChunksUpToTheMaximum() {
    StringBuilder doc = new StringBuilder();
    for (int i = 0; i < 100; i++) {
      doc.append("## Section ").append(i).append("\n\n").append("text ".repeat(20)).append("\n\n");
    }

    List<Chunk> chunks = new ContentChunker(1000).chunk(doc.toString());

    // Each section is 115 characters and 2 blank-line characters apart: 8 fit in 1,000.
    assertThat(chunks).hasSize(13);
    assertThat(chunks).allSatisfy(c -> assertThat(c.content()).startsWith("## Section "));
    assertThat(chunks.get(1).heading()).isEqualTo("Section 8");
    assertThat(chunks.get(1).sections()).hasSize(8);
    assertThat(chunks.stream().mapToInt(c -> c.sections().size()).sum()).isEqualTo(100);
    assertNothingLost(doc.toString(), chunks, 1000);
  }

  @Test
  void theLastPieceOfASplitSectionIsPackedWithTheSectionsAfterIt() {
    String doc = "# Big\n" + "a".repeat(20) + "\n\n" + "b".repeat(20) + "\n# Small\nc\n";

    List<Chunk> chunks = new ContentChunker(31).chunk(doc);

    assertThat(chunks)
        .containsExactly(
            new Chunk("Big", 1, "# Big\n" + "a".repeat(20) + "\n"),
            new Chunk(
                "Big (continued 1)",
                1,
                "b".repeat(20) + "\n# Small\nc\n",
                List.of(new Section("Big (continued 1)", 1), new Section("Small", 1))));
    assertNothingLost(doc, chunks, 31);
  }

  @Test
  void headingsInsideFencedCodeDoNotStartASection() {
    String doc =
        """
        # Script
        ```bash
        # install
        apt-get install redis
        ```
        ~~~
        ## not a heading either
        ```
        ~~~
        ## Real heading
        done
        """;

    List<Chunk> chunks = new ContentChunker(1000).chunk(doc);

    assertThat(chunks).hasSize(1);
    assertThat(chunks.getFirst().sections())
        .containsExactly(new Section("Script", 1), new Section("Real heading", 2));
    assertNothingLost(doc, chunks, 1000);
  }

  @Test
  void anOversizedSectionIsPackedByParagraphsAndKeepsItsHeading() {
    String doc =
        """
        ## Pricing
        aaaaaaaaaa

        bbbbbbbbbb

        cccccccccc
        dddddddddd
        """;

    // 11 (heading) + 11 (a) = 22; with the blank line and b: 34 > 30.
    List<Chunk> chunks = new ContentChunker(30).chunk(doc);

    assertThat(chunks)
        .containsExactly(
            new Chunk("Pricing", 2, "## Pricing\naaaaaaaaaa\n"),
            new Chunk("Pricing (continued 1)", 2, "bbbbbbbbbb\n"),
            new Chunk("Pricing (continued 2)", 2, "cccccccccc\ndddddddddd\n"));
    assertNothingLost(doc, chunks, 30);
  }

  @Test
  void paragraphsThatFitTogetherShareAChunkWithTheirBlankLine() {
    String doc = "one\n\ntwo\n\n\nthree\n\nfour\n";

    List<Chunk> chunks = new ContentChunker(12).chunk(doc);

    assertThat(chunks)
        .extracting(Chunk::content)
        .containsExactly("one\n\ntwo\n", "three\n\nfour\n");
    assertThat(chunks).extracting(c -> c.label(0)).containsOnly("Part 0");
    assertNothingLost(doc, chunks, 12);
  }

  @Test
  void anOversizedParagraphIsHardSplitAtLineBreaksWhenItCan() {
    String lines =
        IntStream.range(0, 10).mapToObj(i -> "line " + i + "\n").reduce("", String::concat);

    List<Chunk> chunks = new ContentChunker(20).chunk(lines);

    // Each line is 7 characters: two whole lines (14) fit, a third (21) does not.
    assertThat(chunks).extracting(Chunk::content).first().isEqualTo("line 0\nline 1\n");
    assertNothingLost(lines, chunks, 20);
  }

  @Test
  void aLineLongerThanAChunkIsCutAtTheMaximumButNeverInsideASurrogatePair() {
    String line = "x".repeat(9) + "😀".repeat(10) + "y".repeat(25);

    List<Chunk> chunks = new ContentChunker(10).chunk(line);

    assertThat(chunks.get(0).content()).isEqualTo("x".repeat(9));
    assertThat(chunks)
        .allSatisfy(c -> assertThat(Character.isLowSurrogate(c.content().charAt(0))).isFalse());
    assertThat(String.join("", chunks.stream().map(Chunk::content).toList())).isEqualTo(line);
    assertNothingLost(line, chunks, 10);
  }

  @Test
  void jsonWithoutHeadingsOrBlankLinesIsStillChunkedWhole() {
    StringBuilder json = new StringBuilder("[");
    for (int i = 0; i < 2000; i++) {
      json.append("{\"id\": ").append(i).append(", \"name\": \"model-").append(i).append("\"},\n");
    }
    json.append("]");

    List<Chunk> chunks = new ContentChunker(5000).chunk(json.toString());

    assertThat(chunks).hasSizeGreaterThan(1);
    assertThat(String.join("", chunks.stream().map(Chunk::content).toList()))
        .isEqualTo(json.toString());
  }

  @Test
  void blankInputHasNoChunksAndTextWithoutAFinalNewlineKeepsItsEnd() {
    assertThat(new ContentChunker(10).chunk("")).isEmpty();
    assertThat(new ContentChunker(10).chunk("\n  \n\t\n")).isEmpty();
    assertThat(new ContentChunker(10).chunk("\n\nend")).containsExactly(new Chunk("", 0, "end"));
    assertThatThrownBy(() -> new ContentChunker(1)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void randomDocumentsLoseNothing() {
    Random random = new Random(42);
    String[] pieces = {
      "# Title\n",
      "## Sub\n",
      "### Deep\n",
      "text line\n",
      "\n",
      "\n\n",
      "```\n",
      "word ",
      "😀",
      "long".repeat(30),
      "\r\n",
      "   \n"
    };
    for (int round = 0; round < 300; round++) {
      StringBuilder doc = new StringBuilder();
      int parts = random.nextInt(200);
      for (int i = 0; i < parts; i++) {
        doc.append(pieces[random.nextInt(pieces.length)]);
      }
      int maxLength = 2 + random.nextInt(300);

      List<Chunk> chunks = new ContentChunker(maxLength).chunk(doc.toString());

      assertNothingLost(doc.toString(), chunks, maxLength);
    }
  }

  @Test
  void theOutlineNestsHeadingsByLevelAndPointsAtEachChunk() {
    List<Chunk> chunks =
        List.of(
            new Chunk("", 0, "intro"),
            new Chunk("Models Overview", 1, "x"),
            new Chunk("Pricing", 2, "x"),
            new Chunk("Context Windows", 2, "x"),
            new Chunk("Token Limits", 3, "x"),
            new Chunk("Token Limits (continued 1)", 3, "x"),
            new Chunk("Appendix", 1, "x"),
            new Chunk("Notes", 3, "x"));
    List<String> keys = IntStream.range(0, chunks.size()).mapToObj(i -> "s/k-chunk" + i).toList();

    assertThat(ContentChunker.outline(chunks, keys))
        .isEqualTo(
            """
            ## Document Outline

            - **Part 0** → `s/k-chunk0`
            - **Models Overview** → `s/k-chunk1`
              - **Pricing** → `s/k-chunk2`
              - **Context Windows** → `s/k-chunk3`
                - **Token Limits** → `s/k-chunk4`
                - **Token Limits (continued 1)** → `s/k-chunk5`
            - **Appendix** → `s/k-chunk6`
              - **Notes** → `s/k-chunk7`
            """);
    assertThatThrownBy(() -> ContentChunker.outline(chunks, List.of("one")))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void theOutlinePointsEveryHeadingOfAPackedChunkAtThatChunk() {
    List<Chunk> chunks =
        List.of(
            new Chunk(
                "",
                0,
                "x",
                List.of(
                    new Section("", 0),
                    new Section("Models Overview", 1),
                    new Section("Pricing", 2))),
            new Chunk(
                "Token Limits",
                3,
                "x",
                List.of(new Section("Token Limits", 3), new Section("Appendix", 1))));

    assertThat(ContentChunker.outline(chunks, List.of("k0", "k1")))
        .isEqualTo(
            """
            ## Document Outline

            - **Part 0** → `k0`
            - **Models Overview** → `k0`
              - **Pricing** → `k0`
                - **Token Limits** → `k1`
            - **Appendix** → `k1`
            """);
    assertThatThrownBy(() -> new Chunk("A", 1, "x", List.of(new Section("B", 1))))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void aDocumentThatStartsBelowH1IsNotIndented() {
    List<Chunk> chunks =
        List.of(new Chunk("A", 3, "x"), new Chunk("B", 2, "x"), new Chunk("C", 3, "x"));

    assertThat(ContentChunker.outline(chunks, List.of("k0", "k1", "k2")))
        .isEqualTo("## Document Outline\n\n- **A** → `k0`\n- **B** → `k1`\n  - **C** → `k2`\n");
  }
}
