package dev.toolhost.benchmarks;

import com.google.re2j.Matcher;
import dev.toolhost.secrets.RuleSet;
import dev.toolhost.secrets.SecretRule;
import dev.toolhost.secrets.SecretScanner;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Scanning 1 MB of tool output for secrets: ordinary output (markdown, JSON and log lines, with the
 * words "token", "key" and "password" about as often as real output has them), and output full of
 * near misses (short tokens after real prefixes, placeholders in assignments, certificates, hashes,
 * base64 blobs), each with the host's scanner (known values, the keyword prefilter, gitleaks' 221
 * and Toolhost's 4 rules, encoded forms to depth 2) beside the raw baseline: the same rules'
 * expressions run over the whole text with no prefilter and no decoding.
 *
 * <p>Throughput in operations per second; one operation is one megabyte (10^6 characters, one byte
 * each in UTF-8), so the score is the rate in MB/s.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(
    value = 1,
    jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class SecretScanBenchmark {

  static final int LENGTH = 1_000_000;

  private String ordinary;
  private String nearMisses;
  private SecretScanner scanner;
  private List<SecretRule> rules;

  @Setup(Level.Trial)
  public void setUp() {
    RuleSet ruleSet = RuleSet.defaults();
    scanner =
        SecretScanner.builder(ruleSet)
            .known("TOOLHOST_TOKEN", "th-Zq8VmR2xL5nT9wK3pB7cY4dF6gH1jS0a")
            .known("OPENAI_API_KEY", "sk-proj-3kQ9vXw2Lm7Rt5Yp8Zb1Nc4Hd6Jf0Gs")
            .build();
    rules = List.copyOf(ruleSet.rules().values());
    ordinary = ordinary(LENGTH);
    nearMisses = nearMisses(LENGTH);
    if (!scanner.scan(ordinary).isEmpty()) {
      throw new IllegalStateException("Ordinary output holds findings: " + scanner.scan(ordinary));
    }
  }

  @Benchmark
  public int scanOrdinary() {
    return scanner.scan(ordinary).size();
  }

  @Benchmark
  public int scanNearMisses() {
    return scanner.scan(nearMisses).size();
  }

  /** The raw baseline: every rule's expression over the whole text, no prefilter, no decoding. */
  @Benchmark
  public int rawRulesOrdinary() {
    return rawRules(ordinary);
  }

  @Benchmark
  public int rawRulesNearMisses() {
    return rawRules(nearMisses);
  }

  private int rawRules(String text) {
    int matches = 0;
    for (SecretRule rule : rules) {
      Matcher matcher = rule.regex().matcher(text);
      while (matcher.find()) {
        matches++;
      }
    }
    return matches;
  }

  // Prose as tools return it: common words, and now and then one that is a rule's keyword.
  private static final String[] WORDS = {
    "the",
    "of",
    "and",
    "to",
    "in",
    "is",
    "for",
    "that",
    "with",
    "on",
    "as",
    "it",
    "by",
    "this",
    "from",
    "are",
    "be",
    "or",
    "an",
    "was",
    "at",
    "which",
    "can",
    "have",
    "has",
    "not",
    "more",
    "service",
    "request",
    "response",
    "results",
    "page",
    "search",
    "model",
    "agent",
    "tool",
    "returns",
    "list",
    "value",
    "values",
    "field",
    "fields",
    "order",
    "customer",
    "invoice",
    "report",
    "meeting",
    "schedule",
    "weather",
    "forecast",
    "city",
    "temperature",
    "update",
    "version",
    "release",
    "build",
    "test",
    "tests",
    "passed",
    "failed",
    "error",
    "warning",
    "document",
    "section",
    "table",
    "figure",
    "example",
    "data",
    "query",
    "index",
    "cache",
    "server",
    "client",
    "network",
    "latency",
    "throughput",
    "memory",
    "thread",
    "process",
    "user",
    "users",
    "account",
    "project",
    "team",
    "issue",
    "comment",
    "review",
    "merge"
  };

  private static final String[] RARE = {"token", "key", "password", "secret", "api"};

  /** Markdown, JSON and log lines, as tools answer them. */
  static String ordinary(int length) {
    Random random = new Random(42);
    StringBuilder text = new StringBuilder(length + 256);
    int line = 0;
    while (text.length() < length) {
      switch (line++ % 4) {
        case 0 -> {
          text.append("## ").append(sentence(random, 4)).append("\n\n");
          text.append(sentence(random, 40))
              .append(". See [the ")
              .append(WORDS[random.nextInt(WORDS.length)])
              .append(" page](https://docs.example.org/")
              .append(WORDS[random.nextInt(WORDS.length)])
              .append("/")
              .append(random.nextInt(1000))
              .append(").\n\n");
          text.append("- ").append(sentence(random, 8)).append('\n');
          text.append("- ").append(sentence(random, 6)).append("\n\n");
        }
        case 1 ->
            text.append("{\"id\": ")
                .append(random.nextInt(100_000))
                .append(", \"name\": \"")
                .append(sentence(random, 3))
                .append("\", \"status\": \"")
                .append(random.nextBoolean() ? "open" : "closed")
                .append("\", \"price\": ")
                .append(random.nextInt(10_000) / 100.0)
                .append(", \"created_at\": \"2026-11-")
                .append(10 + random.nextInt(18))
                .append("T10:")
                .append(10 + random.nextInt(50))
                .append(":00Z\", \"tags\": [\"")
                .append(WORDS[random.nextInt(WORDS.length)])
                .append("\", \"")
                .append(WORDS[random.nextInt(WORDS.length)])
                .append("\"]}\n");
        case 2 ->
            text.append("2026-11-25 10:")
                .append(10 + random.nextInt(50))
                .append(":07.")
                .append(100 + random.nextInt(900))
                .append(" INFO [worker-")
                .append(random.nextInt(8))
                .append("] dev.example.OrderService - ")
                .append(sentence(random, 10))
                .append(" in ")
                .append(random.nextInt(900))
                .append(" ms (request ")
                .append(new java.util.UUID(random.nextLong(), random.nextLong()))
                .append(")\n");
        default ->
            text.append("```\n$ make test\nok  \texample.org/")
                .append(WORDS[random.nextInt(WORDS.length)])
                .append("\t0.")
                .append(random.nextInt(999))
                .append("s\n```\n");
      }
    }
    return text.substring(0, length);
  }

  /** Lines that come close to secrets without being any. */
  static String nearMisses(int length) {
    Random random = new Random(7);
    String[] lines = {
      "api_key = \"changeme\"\n",
      "token: ${GITHUB_TOKEN}\n",
      "password: ********\n",
      "export AWS_ACCESS_KEY_ID=AKIA...\n",
      "ghp_short and gho_ and sk-test and sk-ant- prefixes\n",
      "Authorization: Bearer <token>\n",
      "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----\n",
      "commit 4b825dc642cb6eb9a060e54bf8d69288fbee4904 (HEAD -> main)\n",
      "id 123e4567-e89b-12d3-a456-426614174000 checksum sha256:"
          + "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08\n",
      "image data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
          + "YPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==\n",
      "secret_name: my-app-secret, key_id: primary\n",
    };
    StringBuilder text = new StringBuilder(length + 256);
    while (text.length() < length) {
      text.append(lines[random.nextInt(lines.length)]);
      text.append(sentence(random, 6)).append('\n');
    }
    return text.substring(0, length);
  }

  private static String sentence(Random random, int words) {
    StringBuilder sentence = new StringBuilder();
    for (int i = 0; i < words; i++) {
      if (i > 0) {
        sentence.append(' ');
      }
      // About one word in 400 is a rule's keyword, as in real output.
      sentence.append(
          random.nextInt(400) == 0
              ? RARE[random.nextInt(RARE.length)]
              : WORDS[random.nextInt(WORDS.length)]);
    }
    return sentence.toString();
  }
}
