package dev.toolhost.secrets;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.core.DispatchStage;
import dev.toolhost.core.Redactor;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import dev.toolhost.core.ToolSpec;
import dev.toolhost.secrets.SecretSamples.Family;
import io.opentelemetry.api.OpenTelemetry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import tools.jackson.databind.json.JsonMapper;

/**
 * The secrets issue 36 found passing now come out redacted, in every form of every provider the
 * rule set knows, on each path out of the host that has a scanner: a tool result (the dispatch
 * chain's output scan), a streamed result (the scanner's stream, in chunks), and a log line (the
 * redacting stream the server puts on standard error, with the scanner it makes). The MCP gateway
 * is shown end to end in the server's {@code HostSecretsTest}.
 *
 * <p>The three kinds of text that hid a token: one that ends where a value ends in a URL or markup
 * ({@code &}, {@code #}, {@code <}, a Markdown link's {@code )}, a table's {@code |}); one that has
 * invisible or look-alike characters inside it (zero-width, soft hyphen, bidirectional controls,
 * full-width forms); and the keys gitleaks had no rule for (OpenRouter, Brave Search, database and
 * broker URLs), which are families of {@link SecretSamples} and so in every form here.
 */
class LeakPathsTest {

  /** The scanner a host makes by default, as the server's log redaction makes it. */
  private static final SecretScanner SCANNER =
      SecretsExtension.scanner(SecretsConfig.defaults(), Map.of(), Map.of());

  /** The invisible characters a token may carry, one of them used in each text. */
  private static final String[] INVISIBLE = {
    "\u200B",
    "\u200C",
    "\u200D",
    "\u2060",
    "\uFEFF",
    "\u00AD",
    "\u202E",
    "\u2066",
    "\u200E",
    "\u180E",
    "\uFE0F",
    "\uDB40\uDC41"
  };

  /** How a secret is written into a text: the text, and what it must become. */
  enum Form {
    /** The value of a URL's query parameter, an '&' after it. */
    QUERY_THEN_AMPERSAND("GET https://api.example.test/v1/files?", "&page=2 HTTP/1.1"),
    /** The value of a fragment, in a Markdown link. */
    MARKDOWN_LINK("[Open the console](https://console.example.test/cb#", ") now."),
    /** In an HTML table cell and a Markdown table cell. */
    TABLE_CELL("", "") {
      @Override
      String text(Family family, Random random) {
        return "<td>" + family.snippet() + "</td>\n| key | " + family.snippet() + "|\n";
      }

      @Override
      String expected(Family family) {
        String redacted = family.before() + family.marker() + family.after();
        return "<td>" + redacted + "</td>\n| key | " + redacted + "|\n";
      }
    },
    /** Invisible characters inside the secret, one kind in each text, at random places. */
    INVISIBLE_INSIDE("", "") {
      @Override
      String text(Family family, Random random) {
        String secret = family.secret();
        String invisible = INVISIBLE[random.nextInt(INVISIBLE.length)];
        StringBuilder hidden = new StringBuilder(secret);
        for (int n = 0; n < 3; n++) {
          int at = 1 + random.nextInt(secret.length() - 1);
          hidden.insert(at, invisible);
        }
        // An invisible character before and after the secret stays: it is no part of the token.
        return "Found " + family.before() + hidden + family.after() + "\u200B in the log.";
      }

      @Override
      String expected(Family family) {
        return "Found " + family.before() + family.marker() + family.after() + "\u200B in the log.";
      }
    },
    /** The secret's characters in full-width forms, as a copy from a CJK document has them. */
    FULL_WIDTH("", "") {
      @Override
      String text(Family family, Random random) {
        return "鍵は「" + family.before() + fullWidth(family.secret()) + family.after() + "」です。";
      }

      @Override
      String expected(Family family) {
        return "鍵は「" + family.before() + family.marker() + family.after() + "」です。";
      }
    };

    private final String before;
    private final String after;

    /** A form that writes the secret as a query parameter ({@link #query}) between these. */
    Form(String before, String after) {
      this.before = before;
      this.after = after;
    }

    String text(Family family, Random random) {
      return before + query(family) + after;
    }

    String expected(Family family) {
      return before + query(family).replace(family.secret(), family.marker()) + after;
    }

    /** Whether the form applies to the family: the URL and markup forms need a one-line secret. */
    boolean fits(Family family) {
      boolean oneLine = !family.snippet().contains("\n");
      return switch (this) {
        case QUERY_THEN_AMPERSAND, MARKDOWN_LINK, TABLE_CELL -> oneLine;
        default -> true;
      };
    }
  }

  /**
   * The secret as a query parameter: a bare token as {@code key=...}; an assigned one by its name
   * ({@code api_key=...}, {@code password=...}); a URL's password inside its URL.
   */
  static String query(Family family) {
    if (family.rule().startsWith("generic")) {
      String name = family.before().contains("password") ? "password" : "api_key";
      return name + "=" + family.secret();
    }
    if (!family.before().isEmpty()) {
      return "dsn=" + family.snippet();
    }
    return "key=" + family.secret();
  }

  static String fullWidth(String text) {
    StringBuilder out = new StringBuilder();
    for (char c : text.toCharArray()) {
      out.append(c > ' ' && c < 0x7F ? (char) (c + 0xFEE0) : c);
    }
    return out.toString();
  }

  /** The path a text takes out of the host. */
  enum Path {
    TOOL_RESULT {
      @Override
      String out(String text) {
        ToolRegistry registry = new ToolRegistry();
        registry.register(
            new ToolSpec(
                "read_page",
                "Reads a page.",
                JsonMapper.shared().createObjectNode().put("type", "object"),
                "builtin:web"),
            (call, arguments) -> ToolResult.success(text));
        ToolDispatcher dispatcher =
            ToolDispatcher.builder()
                .interceptor(
                    DispatchStage.OUTPUT_SCAN,
                    new SecretScanInterceptor(SCANNER, SecretPolicy.redact(), OpenTelemetry.noop()))
                .build();
        String result =
            dispatcher
                .dispatch(ToolSet.of(registry, ToolProfiles.MAIN), ToolCall.of("read_page", "{}"))
                .text();
        int note = result.lastIndexOf("\n[toolhost: ");
        assertThat(note).as(result).isPositive();
        return result.substring(0, note);
      }
    },
    STREAMED_RESULT {
      @Override
      String out(String text) {
        // In chunks of seven characters: most secrets cross a chunk's end.
        Redactor.Stream stream = SCANNER.stream();
        StringBuilder out = new StringBuilder();
        for (int at = 0; at < text.length(); at += 7) {
          out.append(stream.push(text.substring(at, Math.min(text.length(), at + 7))));
        }
        return out.append(stream.finish()).toString();
      }
    },
    LOG_LINE {
      @Override
      String out(String text) {
        ByteArrayOutputStream target = new ByteArrayOutputStream();
        try (RedactingOutputStream log = new RedactingOutputStream(target, () -> SCANNER)) {
          for (String line : text.split("(?<=\n)")) {
            log.write(("12:00:01 WARN " + line).getBytes(StandardCharsets.UTF_8));
            if (!line.endsWith("\n")) {
              log.write('\n');
            }
          }
        } catch (IOException e) {
          throw new AssertionError(e);
        }
        StringBuilder out = new StringBuilder();
        for (String line : target.toString(StandardCharsets.UTF_8).split("\n")) {
          assertThat(line).startsWith("12:00:01 WARN ");
          out.append(line.substring("12:00:01 WARN ".length())).append('\n');
        }
        return text.endsWith("\n") ? out.toString() : out.substring(0, out.length() - 1);
      }
    };

    abstract String out(String text);

    /** Whether the path carries the text: a log redacts line by line, so not a multi-line PEM. */
    boolean carries(Family family) {
      return this != LOG_LINE || !family.secret().contains("\n");
    }
  }

  static Stream<Arguments> cases() {
    List<Arguments> cases = new ArrayList<>();
    for (Family family : SecretSamples.families()) {
      for (Form form : Form.values()) {
        for (Path path : Path.values()) {
          if (form.fits(family) && path.carries(family)) {
            cases.add(Arguments.of(family, form, path));
          }
        }
      }
    }
    return cases.stream();
  }

  @ParameterizedTest(name = "{0} {1} {2}")
  @MethodSource("cases")
  void eachFamilyIsRedactedInEachFormOnEachPath(Family family, Form form, Path path) {
    Random random = new Random(family.name().hashCode() * 31L + form.ordinal());
    String text = form.text(family, random);
    assertThat(SecretSamples.RULES.rule(family.rule())).isPresent();

    String out = path.out(text);

    assertThat(out).isEqualTo(form.expected(family));
  }
}
