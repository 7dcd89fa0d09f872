package dev.toolhost.search;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class Bm25IndexTest {

  /**
   * The small corpus the hand-computed scores below are for. Tokens (three or more characters):
   *
   * <pre>
   * calendar: reschedule meeting times the team calendar   (len 6; "on" is dropped)
   * billing:  audit cloud spend and billing                 (len 5)
   * rooms:    book meeting room meeting notes               (len 5; "a" is dropped)
   * </pre>
   *
   * N = 3, avgdl = 16 / 3 = 5.3333.
   */
  private static Bm25Index<String> corpus() {
    Bm25Index<String> index = new Bm25Index<>();
    index.put("calendar", "calendar", "Reschedule meeting times on the team calendar");
    index.put("billing", "billing", "Audit cloud spend and billing");
    index.put("rooms", "rooms", "Book a meeting room; meeting notes");
    return index;
  }

  @Test
  void tokensAreLowercaseRunsOfLettersAndDigitsOfThreeOrMore() {
    assertThat(Bm25Index.tokenize("Web-Search: find PDFs on s3, v2 or AWS_cost2024 in Zürich!"))
        .containsExactly("web", "search", "find", "pdfs", "aws", "cost2024", "zürich");
  }

  @Test
  void scoresMatchTheHandComputedOkapiBm25WithPhraseBonus() {
    // Query "reschedule meeting": terms reschedule (n = 1) and meeting (n = 2); the phrase
    // "reschedule meeting" is held by calendar only (n = 1).
    //
    // idf(n=1) = ln((3 - 1 + 0.5) / (1 + 0.5) + 1) = ln(2.6667) = 0.980829
    // idf(n=2) = ln((3 - 2 + 0.5) / (2 + 0.5) + 1) = ln(1.6)    = 0.470004
    //
    // calendar, len 6: k1 * (1 - b + b * len / avgdl) = 1.5 * (0.25 + 0.75 * 6 / 5.3333) = 1.640625
    //   tf(f=1) = 1 * 2.5 / (1 + 1.640625) = 0.946746
    //   reschedule  0.980829 * 0.946746           = 0.928596
    //   meeting     0.470004 * 0.946746           = 0.444974
    //   phrase  2 * 0.980829 * 0.946746           = 1.857191
    //   score                                     = 3.230761 (relevance 1.0)
    // rooms, len 5: 1.5 * (0.25 + 0.75 * 5 / 5.3333) = 1.4296875
    //   meeting, f=2: tf = 2 * 2.5 / (2 + 1.4296875) = 1.457859
    //   score = 0.470004 * 1.457859               = 0.685199 (relevance 0.685199 / 3.230761 = 0.21)
    // billing holds neither term: score 0, not a result.
    List<Bm25Index.Hit<String>> hits = corpus().search("reschedule meeting", 10);

    assertThat(hits).extracting(Bm25Index.Hit::key).containsExactly("calendar", "rooms");
    assertThat(hits.get(0).score()).isCloseTo(3.230761, within(1e-6));
    assertThat(hits.get(0).relevance()).isEqualTo(1.0);
    assertThat(hits.get(1).score()).isCloseTo(0.685199, within(1e-6));
    assertThat(hits.get(1).relevance()).isEqualTo(0.21);
  }

  @Test
  void aQueryOfOneTermHasNoPhraseBonus() {
    // meeting alone: calendar 0.470004 * 0.946746 = 0.444974; rooms 0.685199 (f = 2, shorter).
    // calendar relevance: 0.444974 / 0.685199 = 0.6494, rounded 0.65.
    List<Bm25Index.Hit<String>> hits = corpus().search("Meeting!", 10);

    assertThat(hits).extracting(Bm25Index.Hit::key).containsExactly("rooms", "calendar");
    assertThat(hits.get(0).score()).isCloseTo(0.685199, within(1e-6));
    assertThat(hits.get(1).score()).isCloseTo(0.444974, within(1e-6));
    assertThat(hits.get(1).relevance()).isEqualTo(0.65);
  }

  @Test
  void thePhraseBonusIsTwiceThePhrasesOwnTermScore() {
    Bm25Index<String> index = new Bm25Index<>();
    index.put("adjacent", "adjacent", "web search tool");
    index.put("apart", "apart", "search the web tool");
    index.put("other", "other", "calendar tool");
    // N = 3, avgdl = (3 + 4 + 2) / 3 = 3. Terms web, search: n = 2 each, idf = ln(1.6) = 0.470004.
    // adjacent, len 3: norm = 1.5 * (0.25 + 0.75 * 3 / 3) = 1.5; tf = 2.5 / 2.5 = 1
    //   web + search = 2 * 0.470004 = 0.940007
    //   phrase "web search", n = 1: 2 * ln(2.6667) * 1 = 2 * 0.980829 = 1.961659
    //   score = 2.901666
    // apart, len 4: norm = 1.5 * (0.25 + 0.75 * 4 / 3) = 1.875; tf = 2.5 / 2.875 = 0.869565
    //   score = 2 * 0.470004 * 0.869565 = 0.817398 (no phrase: "search the web" is not "web
    // search")
    List<Bm25Index.Hit<String>> hits = index.search("web search", 10);

    assertThat(hits).extracting(Bm25Index.Hit::key).containsExactly("adjacent", "apart");
    assertThat(hits.get(0).score()).isCloseTo(2.901666, within(1e-6));
    assertThat(hits.get(1).score()).isCloseTo(0.817398, within(1e-6));
  }

  @Test
  void punctuationAndShortWordsDoNotBreakAPhrase() {
    Bm25Index<String> index = new Bm25Index<>();
    index.put("hyphen", "hyphen", "web-search");
    index.put("spaced", "spaced", "web search");

    List<Bm25Index.Hit<String>> hits = index.search("web search", 10);

    assertThat(hits.get(0).score()).isEqualTo(hits.get(1).score());
  }

  @Test
  void aQueryWithoutLongEnoughWordsFindsNothing() {
    assertThat(corpus().search("a an to of", 10)).isEmpty();
    assertThat(corpus().search("", 10)).isEmpty();
    assertThat(corpus().search("unrelated", 10)).isEmpty();
  }

  @Test
  void limitKeepsTheBestAndTiesGoByKey() {
    Bm25Index<String> index = new Bm25Index<>();
    for (String key : List.of("d", "b", "e", "a", "c")) {
      index.put(key, key, "same words here");
    }
    index.put("z", "z", "nothing in common");

    assertThat(index.search("words", 3))
        .extracting(Bm25Index.Hit::key)
        .containsExactly("a", "b", "c");
    assertThat(index.search("words", 0)).isEmpty();
  }

  @Test
  void removingADocumentChangesTheStatisticsOfEveryOther() {
    Bm25Index<String> index = corpus();

    assertThat(index.remove("billing")).isTrue();
    assertThat(index.remove("billing")).isFalse();

    // N = 2, avgdl = 11 / 2 = 5.5; meeting: n = 2, idf = ln(0.5 / 2.5 + 1) = ln(1.2) = 0.182322
    // rooms, len 5: norm = 1.5 * (0.25 + 0.75 * 5 / 5.5) = 1.397727; tf = 5 / 3.397727 = 1.471572
    //   score = 0.182322 * 1.471572 = 0.268299
    List<Bm25Index.Hit<String>> hits = index.search("meeting", 10);
    assertThat(hits.get(0).key()).isEqualTo("rooms");
    assertThat(hits.get(0).score()).isCloseTo(0.268299, within(1e-6));
    assertThat(index.size()).isEqualTo(2);
  }

  @Test
  void puttingAnExistingKeyReplacesItsDocument() {
    Bm25Index<String> index = corpus();

    index.put("billing", "billing v2", "Reschedule invoices");

    assertThat(index.size()).isEqualTo(3);
    assertThat(index.search("audit", 10)).isEmpty();
    assertThat(index.search("reschedule", 10))
        .extracting(Bm25Index.Hit::item)
        .containsExactlyInAnyOrder("calendar", "billing v2");
    assertThat(index.get("billing")).contains("billing v2");
  }

  @Test
  void filterNarrowsResultsWithoutChangingScores() {
    Bm25Index<String> index = corpus();

    List<Bm25Index.Hit<String>> hits = index.search("reschedule meeting", 10, "rooms"::equals);

    assertThat(hits).hasSize(1);
    assertThat(hits.get(0).score()).isCloseTo(0.685199, within(1e-6));
    assertThat(hits.get(0).relevance()).isEqualTo(1.0);
  }

  @Test
  void rankOrdersItemsOnceWithoutAnIndexAndDropsZeroScores() {
    List<Bm25Index.Hit<String>> hits =
        Bm25Index.rank(
            List.of("Audit cloud spend and billing", "Book a meeting room; meeting notes", "x"),
            text -> text,
            "meeting notes",
            5);

    assertThat(hits)
        .extracting(Bm25Index.Hit::item)
        .containsExactly("Book a meeting room; meeting notes");
  }

  /** BM25 with the phrase bonus, the plain way: every document, every query term, every time. */
  private static double naiveScore(List<List<String>> corpus, List<String> doc, String query) {
    List<String> tokens = Bm25Index.tokenize(query);
    int n = corpus.size();
    double avgdl = corpus.stream().mapToInt(List::size).average().orElse(0);
    double score = 0;
    List<List<String>> units = new ArrayList<>();
    List<Double> factors = new ArrayList<>();
    for (String term : new java.util.LinkedHashSet<>(tokens)) {
      units.add(List.of(term));
      factors.add(1.0);
    }
    java.util.Set<List<String>> pairs = new java.util.LinkedHashSet<>();
    for (int i = 1; i < tokens.size(); i++) {
      pairs.add(List.of(tokens.get(i - 1), tokens.get(i)));
    }
    for (List<String> pair : pairs) {
      units.add(pair);
      factors.add(2.0);
    }
    for (int u = 0; u < units.size(); u++) {
      List<String> unit = units.get(u);
      long holding = corpus.stream().filter(d -> count(d, unit) > 0).count();
      int f = count(doc, unit);
      if (f == 0) {
        continue;
      }
      double idf = Math.log((n - holding + 0.5) / (holding + 0.5) + 1);
      score += factors.get(u) * idf * f * 2.5 / (f + 1.5 * (0.25 + 0.75 * doc.size() / avgdl));
    }
    return score;
  }

  private static int count(List<String> doc, List<String> unit) {
    int count = 0;
    for (int i = 0; i + unit.size() <= doc.size(); i++) {
      if (doc.subList(i, i + unit.size()).equals(unit)) {
        count++;
      }
    }
    return count;
  }

  @Test
  void scoresEqualAPlainFullScanForRareAndCommonTerms() {
    java.util.Random random = new java.util.Random(7);
    String[] words = new String[60];
    for (int i = 0; i < words.length; i++) {
      words[i] = "word" + i;
    }
    Bm25Index<Integer> index = new Bm25Index<>();
    List<List<String>> corpus = new ArrayList<>();
    List<String> texts = new ArrayList<>();
    for (int d = 0; d < 600; d++) {
      StringBuilder text = new StringBuilder();
      int length = 3 + random.nextInt(30);
      for (int w = 0; w < length; w++) {
        // Skewed: word0 is in most documents, word59 in very few.
        int rank = (int) Math.floor(Math.pow(random.nextDouble(), 3) * words.length);
        text.append(words[rank]).append(random.nextBoolean() ? " " : ", ");
      }
      index.put("d" + d, d, text.toString());
      corpus.add(Bm25Index.tokenize(text.toString()));
      texts.add(text.toString());
    }
    for (String query : List.of("word0 word1", "word57 word58 word59", "word3 word40", "word59")) {
      List<Bm25Index.Hit<Integer>> hits = index.search(query, 1000);
      long expectedHits = corpus.stream().filter(doc -> naiveScore(corpus, doc, query) > 0).count();

      assertThat(hits).as(query).hasSize((int) expectedHits);
      List<Bm25Index.Hit<String>> ranked = Bm25Index.rank(texts, t -> t, query, 1000);
      assertThat(ranked).as("rank, without an index: " + query).hasSameSizeAs(hits);
      for (int i = 0; i < hits.size(); i++) {
        assertThat(ranked.get(i).score()).isCloseTo(hits.get(i).score(), within(1e-9));
      }
      for (Bm25Index.Hit<Integer> hit : hits) {
        assertThat(hit.score())
            .as(query + " " + hit.key())
            .isCloseTo(naiveScore(corpus, corpus.get(hit.item()), query), within(1e-9));
      }
    }
  }

  @Test
  void searchesStayCorrectWhileDocumentsComeAndGo() throws Exception {
    Bm25Index<String> index = new Bm25Index<>();
    for (int i = 0; i < 200; i++) {
      index.put("stable-" + i, "stable-" + i, "stable service number " + i + " handles invoices");
    }
    AtomicBoolean stop = new AtomicBoolean();
    CountDownLatch started = new CountDownLatch(2);
    List<String> problems = java.util.Collections.synchronizedList(new ArrayList<>());
    try (ExecutorService threads = Executors.newFixedThreadPool(3)) {
      Future<?> writer =
          threads.submit(
              () -> {
                started.countDown();
                for (int round = 0; !stop.get(); round++) {
                  String key = "churn-" + (round % 50);
                  if (round % 3 == 0) {
                    index.remove(key);
                  } else {
                    index.put(key, key, "churning service " + round + " handles invoices quickly");
                  }
                }
              });
      Future<?> reader =
          threads.submit(
              () -> {
                started.countDown();
                for (int i = 0; i < 5_000; i++) {
                  List<Bm25Index.Hit<String>> hits = index.search("stable invoices", 500);
                  long stable = hits.stream().filter(h -> h.key().startsWith("stable-")).count();
                  if (stable != 200) {
                    problems.add("search saw " + stable + " stable documents");
                  }
                  for (int j = 1; j < hits.size(); j++) {
                    if (hits.get(j).score() > hits.get(j - 1).score()) {
                      problems.add("results out of order");
                    }
                  }
                  if (!hits.isEmpty() && hits.get(0).relevance() != 1.0) {
                    problems.add("best hit has relevance " + hits.get(0).relevance());
                  }
                }
              });
      started.await(10, TimeUnit.SECONDS);
      reader.get(20, TimeUnit.SECONDS);
      stop.set(true);
      writer.get(10, TimeUnit.SECONDS);
    }
    assertThat(problems).isEmpty();
    assertThat(index.size()).isBetween(200, 250);
  }
}
