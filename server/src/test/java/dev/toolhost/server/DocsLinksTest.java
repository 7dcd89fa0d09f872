package dev.toolhost.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The README and the pages of docs/ link only to files that exist, and to headings those files have
 * (anchors as GitHub makes them: lower case, punctuation dropped, spaces as hyphens).
 */
class DocsLinksTest {

  private static final Path ROOT = Path.of("..");
  private static final Pattern FENCE = Pattern.compile("(?ms)^```.*?^```");
  private static final Pattern CODE = Pattern.compile("`[^`\\n]*`");
  private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");
  private static final Pattern HEADING = Pattern.compile("(?m)^#{1,6} (.+)$");

  private static List<Path> documents() throws IOException {
    List<Path> documents = new ArrayList<>(List.of(ROOT.resolve("README.md")));
    try (Stream<Path> pages = Files.list(ROOT.resolve("docs"))) {
      pages.filter(page -> page.toString().endsWith(".md")).sorted().forEach(documents::add);
    }
    return documents;
  }

  /** The anchors of a markdown file's headings, as GitHub makes them. */
  static Set<String> anchors(Path file) throws IOException {
    String text = FENCE.matcher(Files.readString(file)).replaceAll("");
    Set<String> anchors = new HashSet<>();
    Matcher heading = HEADING.matcher(text);
    while (heading.find()) {
      anchors.add(
          heading
              .group(1)
              .strip()
              .toLowerCase(Locale.ROOT)
              .replaceAll("[^\\p{L}\\p{N}_\\- ]", "")
              .replace(' ', '-'));
    }
    return anchors;
  }

  @Test
  void everyLinkOfTheDocsNamesAFileThatExistsAndAHeadingItHas() throws IOException {
    List<String> broken = new ArrayList<>();
    for (Path document : documents()) {
      String text = FENCE.matcher(Files.readString(document)).replaceAll("");
      Matcher link = LINK.matcher(CODE.matcher(text).replaceAll(""));
      while (link.find()) {
        String target = link.group(1);
        if (target.matches("[a-z]+:.*")) {
          continue;
        }
        int hash = target.indexOf('#');
        String path = hash < 0 ? target : target.substring(0, hash);
        Path file = path.isEmpty() ? document : document.resolveSibling(path).normalize();
        if (!Files.exists(file)) {
          broken.add(document.getFileName() + ": " + target + " (no such file)");
        } else if (hash >= 0
            && file.toString().endsWith(".md")
            && !anchors(file).contains(target.substring(hash + 1))) {
          broken.add(document.getFileName() + ": " + target + " (no such heading)");
        }
      }
    }
    assertThat(broken).as("broken links").isEmpty();
  }

  @Test
  void theReadmeLinksEveryPageOfTheDocs() throws IOException {
    String readme = Files.readString(ROOT.resolve("README.md"));
    try (Stream<Path> pages = Files.list(ROOT.resolve("docs"))) {
      assertThat(pages.filter(page -> page.toString().endsWith(".md")))
          .allSatisfy(page -> assertThat(readme).contains("](docs/" + page.getFileName() + ")"));
    }
  }

  @Test
  void theReadmeStaysShort() throws IOException {
    assertThat(Files.readAllLines(ROOT.resolve("README.md"))).hasSizeLessThanOrEqualTo(250);
  }
}
