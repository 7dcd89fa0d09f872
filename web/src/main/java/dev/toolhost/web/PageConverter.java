package dev.toolhost.web;

import com.vladsch.flexmark.html2md.converter.FlexmarkHtmlConverter;
import com.vladsch.flexmark.util.data.MutableDataSet;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.Charset;
import java.util.Optional;
import org.jsoup.Jsoup;
import org.jsoup.nodes.Document;
import org.jsoup.nodes.Element;

/**
 * The page converter turns a web page into the markdown a model reads: the page's title as {@code #
 * Title}, then its content with the noise removed (scripts, styles, navigation, headers, footers,
 * asides, forms, embedded frames and media, hidden elements, and the landmark roles that mark
 * them), every link and image made absolute against the page's URL, headings in ATX style ({@code
 * ## Heading}, which the content chunker splits on; the converter's default underlined style would
 * defeat it), and tables as GFM tables.
 *
 * <p>jsoup parses (it finds the charset from the bytes when the server does not name one) and
 * flexmark writes the markdown from jsoup's tree, without parsing the page a second time.
 * Thread-safe.
 */
public final class PageConverter {

  /** What is removed before conversion. */
  static final String NOISE =
      "script, style, noscript, template, svg, canvas, iframe, frame, object, embed, video, audio,"
          + " nav, header, footer, aside, figure, picture, form, button, select, dialog,"
          + " [role=navigation], [role=banner], [role=contentinfo], [role=complementary],"
          + " [role=search], [hidden], [aria-hidden=true]";

  private final FlexmarkHtmlConverter converter;

  /** A converter with the options above. */
  public PageConverter() {
    MutableDataSet options = new MutableDataSet();
    options.set(FlexmarkHtmlConverter.SETEXT_HEADINGS, false);
    options.set(FlexmarkHtmlConverter.OUTPUT_UNKNOWN_TAGS, false);
    options.set(FlexmarkHtmlConverter.MAX_BLANK_LINES, 1);
    options.set(FlexmarkHtmlConverter.MAX_TRAILING_BLANK_LINES, 0);
    options.set(FlexmarkHtmlConverter.RENDER_COMMENTS, false);
    this.converter = FlexmarkHtmlConverter.builder(options).build();
  }

  /**
   * A converted page.
   *
   * @param title the page's title, empty when it has none
   * @param markdown the page as markdown, starting with {@code # title} when it has one
   */
  public record Page(String title, String markdown) {}

  /**
   * Converts the page's bytes.
   *
   * @param body the page's bytes
   * @param charset the charset the server named, if any; else jsoup finds it in the page
   * @param url the page's URL, which relative links are resolved against
   */
  public Page convert(byte[] body, Optional<Charset> charset, URI url) {
    Document document;
    try {
      document =
          Jsoup.parse(
              new ByteArrayInputStream(body),
              charset.map(Charset::name).orElse(null),
              url.toString());
    } catch (IOException e) {
      // Reading a byte array does not fail; a charset jsoup cannot use ends here.
      throw new UncheckedIOException(e);
    }
    return convert(document);
  }

  /** Converts a parsed page. */
  public Page convert(Document document) {
    String title = document.title().strip();
    Element body = document.body();
    body.select(NOISE).remove();
    for (Element link : body.select("a[href]")) {
      String absolute = link.absUrl("href");
      if (absolute.isEmpty() || absolute.regionMatches(true, 0, "javascript:", 0, 11)) {
        link.removeAttr("href");
      } else {
        link.attr("href", absolute);
      }
    }
    for (Element image : body.select("img[src]")) {
      String absolute = image.absUrl("src");
      if (absolute.isEmpty() || absolute.regionMatches(true, 0, "data:", 0, 5)) {
        // An inline image is bytes, not something a model can read or follow.
        image.remove();
      } else {
        image.attr("src", absolute);
      }
    }
    String content = converter.convert(body).strip();
    String markdown =
        title.isEmpty()
            ? content
            : content.isEmpty() ? "# " + title : "# " + title + "\n\n" + content;
    return new Page(title, markdown);
  }
}
