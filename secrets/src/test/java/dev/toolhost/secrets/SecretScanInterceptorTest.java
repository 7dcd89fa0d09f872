package dev.toolhost.secrets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import dev.toolhost.core.DispatchStage;
import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolError;
import dev.toolhost.core.ToolExecutor;
import dev.toolhost.core.ToolProfile;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolProgress;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import dev.toolhost.core.ToolSpec;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.data.LongPointData;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * Every tool result passes the output scan on its way out of a real dispatcher: its text, its
 * structured JSON, an error's message and detail, and the progress the tool reports are redacted,
 * or the result is blocked or let through as the policy says for the caller's profile and the
 * tool's source; each finding is counted and logged, never with its value.
 */
class SecretScanInterceptorTest {

  private static final JsonMapper JSON = JsonMapper.shared();

  /** A secret the host holds, known by its value: thirty-two characters no rule recognises. */
  private static final String TOKEN_NAME = "TOOLHOST_TOKEN";

  private static final String TOKEN =
      SecretSamples.random(new Random(0x70CE11L), SecretSamples.ALNUM, 32);

  /** A secret a rule recognises. */
  private static final String PAT = SecretVectorsTest.family("github-pat").secret();

  private static final SecretScanner SCANNER =
      SecretScanner.builder(SecretSamples.RULES).known(TOKEN_NAME, TOKEN).build();

  private final InMemoryMetricReader metrics = InMemoryMetricReader.create();
  private final OpenTelemetrySdk otel =
      OpenTelemetrySdk.builder()
          .setMeterProvider(SdkMeterProvider.builder().registerMetricReader(metrics).build())
          .build();
  private final ToolRegistry registry = new ToolRegistry();

  @AfterEach
  void close() {
    otel.close();
  }

  private ToolDispatcher dispatcher(SecretPolicy policy) {
    return ToolDispatcher.builder()
        .openTelemetry(otel)
        .interceptor(DispatchStage.OUTPUT_SCAN, new SecretScanInterceptor(SCANNER, policy, otel))
        .build();
  }

  private void tool(String name, String source, ToolExecutor executor) {
    ObjectNode parameters = JSON.createObjectNode().put("type", "object");
    registry.register(new ToolSpec(name, "A tool of the test.", parameters, source), executor);
  }

  private ToolResult call(SecretPolicy policy, ToolProfile profile, String tool) {
    return dispatcher(policy).dispatch(ToolSet.of(registry, profile), ToolCall.of(tool, "{}"));
  }

  private ToolResult call(SecretPolicy policy, String tool) {
    return call(policy, ToolProfiles.MAIN, tool);
  }

  /** The points of the findings counter, as (rule, tool_name, action, count). */
  private List<List<Object>> findingsCounted() {
    return metrics.collectAllMetrics().stream()
        .filter(metric -> metric.getName().equals("toolhost.secrets.findings"))
        .map(MetricData::getLongSumData)
        .flatMap(sum -> sum.getPoints().stream())
        .map(SecretScanInterceptorTest::point)
        .toList();
  }

  private static List<Object> point(LongPointData point) {
    Attributes attributes = point.getAttributes();
    return List.of(
        attributes.get(AttributeKey.stringKey("rule")),
        attributes.get(AttributeKey.stringKey("tool_name")),
        attributes.get(AttributeKey.stringKey("action")),
        point.getValue());
  }

  @Test
  void aKnownValueAndARulesMatchInAResultAreRedactedAndTheResultSaysSecretsWereRemoved() {
    tool(
        "deploy_status",
        "builtin:deploy",
        (call, arguments) ->
            ToolResult.success("Deployed with " + TOKEN + ", pushed with " + PAT + "."));
    tool(
        "push_status",
        "builtin:deploy",
        (call, arguments) -> ToolResult.success("Pushed with " + PAT + "."));

    ToolResult both = call(SecretPolicy.redact(), "deploy_status");
    ToolResult one = call(SecretPolicy.redact(), "push_status");

    assertThat(both.isError()).isFalse();
    assertThat(both.text())
        .isEqualTo(
            "Deployed with [REDACTED:TOOLHOST_TOKEN], pushed with [REDACTED:github-pat].\n"
                + "[toolhost: 2 secrets were removed from this result]");
    assertThat(one.text())
        .isEqualTo(
            "Pushed with [REDACTED:github-pat].\n"
                + "[toolhost: 1 secret was removed from this result]");
  }

  @Test
  void aCleanResultPassesUnchanged() {
    ToolResult.Success clean =
        ToolResult.success(
            "Build 412 passed: 1,204 tests in 3 minutes.",
            JSON.readTree("{\"build\": 412, \"status\": \"passed\", \"tags\": [\"main\"]}"));
    tool("build_status", "builtin:ci", (call, arguments) -> clean);

    ToolResult result = call(SecretPolicy.redact(), "build_status");

    assertThat(result).isSameAs(clean);
    assertThat(findingsCounted()).isEmpty();
  }

  @Test
  void blockForAProfileTurnsTheResultIntoAnErrorNamingTheRuleNeverTheValue() {
    tool(
        "read_config",
        "builtin:files",
        (call, arguments) -> ToolResult.success("token: " + PAT + "\nowner: " + TOKEN + "\n"));
    SecretPolicy policy =
        new SecretPolicy(
            SecretPolicy.Action.REDACT, Map.of("subagent", SecretPolicy.Action.BLOCK), Map.of());

    ToolResult subagent =
        call(policy, ToolProfiles.SUBAGENT.withNames("read_config"), "read_config");
    ToolResult main = call(policy, ToolProfiles.MAIN, "read_config");

    assertThat(subagent).isInstanceOf(ToolResult.Failure.class);
    ToolError error = ((ToolResult.Failure) subagent).error();
    assertThat(error.code()).isEqualTo(ErrorCode.EXECUTION_FAILED);
    assertThat(error.code().wireName()).isEqualTo("execution_failed");
    assertThat(error.message())
        .contains("read_config", "github-pat", "TOOLHOST_TOKEN", "withheld")
        .doesNotContain(PAT)
        .doesNotContain(TOKEN);
    assertThat(error.detail()).doesNotContain(PAT).doesNotContain(TOKEN);
    assertThat(main.isError()).isFalse();
    assertThat(main.text())
        .startsWith("token: [REDACTED:github-pat]\nowner: [REDACTED:TOOLHOST_TOKEN]\n");
  }

  @Test
  void offForASourceLetsItsResultsThrough() {
    tool("docs_search", "mcp:docs", (call, arguments) -> ToolResult.success("Example: " + PAT));
    tool("notes_read", "builtin:notes", (call, arguments) -> ToolResult.success("Mine: " + PAT));
    SecretPolicy policy =
        new SecretPolicy(
            SecretPolicy.Action.REDACT, Map.of(), Map.of("mcp:docs", SecretPolicy.Action.OFF));

    ToolResult docs = call(policy, "docs_search");
    ToolResult notes = call(policy, "notes_read");

    assertThat(docs.text()).isEqualTo("Example: " + PAT);
    assertThat(notes.text()).startsWith("Mine: [REDACTED:github-pat]\n");
    // What is let through is not scanned, so not counted either.
    assertThat(findingsCounted())
        .containsExactly(List.of("github-pat", "notes_read", "redacted", 1L));
  }

  @Test
  void aSourcesPolicyWinsOverAProfiles() {
    tool("docs_search", "mcp:docs", (call, arguments) -> ToolResult.success("Example: " + PAT));
    tool("shell_run", "mcp:shell", (call, arguments) -> ToolResult.success("env: " + TOKEN));
    SecretPolicy policy =
        new SecretPolicy(
            SecretPolicy.Action.REDACT,
            Map.of("subagent", SecretPolicy.Action.BLOCK, "main", SecretPolicy.Action.OFF),
            Map.of("mcp:docs", SecretPolicy.Action.REDACT, "mcp:shell", SecretPolicy.Action.BLOCK));

    ToolResult docsForSubagent =
        call(policy, ToolProfiles.SUBAGENT.withNames("docs_search"), "docs_search");
    ToolResult shellForMain = call(policy, ToolProfiles.MAIN, "shell_run");

    assertThat(docsForSubagent.isError()).isFalse();
    assertThat(docsForSubagent.text()).startsWith("Example: [REDACTED:github-pat]\n");
    assertThat(shellForMain.isError()).isTrue();
    assertThat(shellForMain.text()).contains("TOOLHOST_TOKEN").doesNotContain(TOKEN);
  }

  @Test
  void aFailuresMessageAndDetailAreRedacted() {
    tool(
        "git_push",
        "builtin:git",
        (call, arguments) ->
            ToolResult.failure(
                ErrorCode.EXECUTION_FAILED,
                "Push refused for " + PAT + ".",
                "request sent with " + TOKEN + " at 10:42"));
    tool(
        "git_fetch",
        "builtin:git",
        (call, arguments) -> {
          throw new IllegalStateException("cannot fetch with " + PAT);
        });

    ToolResult refused = call(SecretPolicy.redact(), "git_push");
    ToolResult thrown = call(SecretPolicy.redact(), "git_fetch");

    assertThat(((ToolResult.Failure) refused).error())
        .isEqualTo(
            new ToolError(
                ErrorCode.EXECUTION_FAILED,
                "Push refused for [REDACTED:github-pat].",
                "request sent with [REDACTED:TOOLHOST_TOKEN] at 10:42"));
    // An exception's text reaches only the detail, and is redacted there too.
    ToolError error = ((ToolResult.Failure) thrown).error();
    assertThat(error.code()).isEqualTo(ErrorCode.EXECUTION_FAILED);
    assertThat(error.message()).doesNotContain(PAT);
    assertThat(error.detail())
        .isEqualTo("java.lang.IllegalStateException: cannot fetch with [REDACTED:github-pat]");
  }

  @Test
  void structuredJsonIsRedactedInItsStringValues() {
    ObjectNode structured = JSON.createObjectNode();
    structured.put("repo", "toolhost");
    structured.put("stars", 42);
    ObjectNode credentials = structured.putObject("credentials");
    credentials.put("pat", PAT);
    credentials.putArray("seen").add("plain").add("with " + TOKEN);
    // A key may hold a secret as well as a value.
    structured.putObject("by_token").put(TOKEN, "owner");
    tool(
        "repo_info",
        "builtin:git",
        (call, arguments) -> ToolResult.success("Repository toolhost, 42 stars.", structured));

    ToolResult.Success result = (ToolResult.Success) call(SecretPolicy.redact(), "repo_info");

    JsonNode expected =
        JSON.readTree(
            """
            {"repo": "toolhost", "stars": 42,
             "credentials": {"pat": "[REDACTED:github-pat]",
                             "seen": ["plain", "with [REDACTED:TOOLHOST_TOKEN]"]},
             "by_token": {"[REDACTED:TOOLHOST_TOKEN]": "owner"}}
            """);
    assertThat(result.structured()).contains(expected);
    assertThat(result.content())
        .isEqualTo(
            "Repository toolhost, 42 stars.\n"
                + "[toolhost: 3 secrets were removed from this result]");
    assertThat(result.structured().orElseThrow().toString())
        .doesNotContain(PAT)
        .doesNotContain(TOKEN);
  }

  @Test
  void aKeyAssignedInStructuredJsonIsRedactedThereAsInItsText() {
    // generic-api-key finds a value only after its assignment ("api_key": "..."): the structured
    // JSON of a result must not keep what its text, the same JSON written out, has redacted.
    SecretSamples.Family assigned = SecretVectorsTest.family("Generic API key assigned");
    ObjectNode structured = JSON.createObjectNode();
    structured.put("service", "billing");
    structured.put("api_key", assigned.secret());
    tool(
        "service_config",
        "builtin:config",
        (call, arguments) -> ToolResult.success(structured.toString(), structured));

    ToolResult.Success result = (ToolResult.Success) call(SecretPolicy.redact(), "service_config");

    assertThat(result.content())
        .startsWith("{\"service\":\"billing\",\"api_key\":\"[REDACTED:generic-api-key]\"}\n")
        .doesNotContain(assigned.secret());
    assertThat(result.structured().orElseThrow().toString())
        .isEqualTo("{\"service\":\"billing\",\"api_key\":\"[REDACTED:generic-api-key]\"}");
  }

  /** A progress report as the caller's listener heard it. */
  record Heard(double progress, Optional<Double> total, Optional<String> message) {}

  /** Lines of an ordinary build log, long enough that the stream passes some of it on early. */
  private static String log(int lines) {
    StringBuilder out = new StringBuilder();
    for (int i = 0; i < lines; i++) {
      out.append(String.format("step %d of 40: compiled %d sources in %d ms%n", i, i * 7, i * 13));
    }
    return out.toString();
  }

  @Test
  void progressMessagesReachTheListenerRedactedASplitSecretIncluded() {
    String log = log(20);
    int half = PAT.length() / 2;
    tool(
        "git_clone",
        "builtin:git",
        (call, arguments) -> {
          ToolProgress.report(1, Optional.of(4.0), Optional.of(log));
          ToolProgress.report(
              2, Optional.of(4.0), Optional.of("Cloning with " + PAT.substring(0, half)));
          ToolProgress.report(
              3, Optional.of(4.0), Optional.of(PAT.substring(half) + " as origin\n"));
          ToolProgress.report(4, Optional.of(4.0), Optional.of("Checked out main.\n"));
          return ToolResult.success("cloned");
        });
    List<Heard> heard = new CopyOnWriteArrayList<>();

    ToolResult result;
    try (Scope ignored =
        ToolProgress.listen(
            (progress, total, message) -> heard.add(new Heard(progress, total, message)))) {
      result = call(SecretPolicy.redact(), "git_clone");
    }

    assertThat(result.text()).isEqualTo("cloned");
    String told =
        heard.stream().flatMap(each -> each.message().stream()).collect(Collectors.joining());
    assertThat(told)
        .isEqualTo(log + "Cloning with [REDACTED:github-pat] as origin\nChecked out main.\n");
    assertThat(heard)
        .allSatisfy(
            each ->
                assertThat(each.message().orElse(""))
                    .doesNotContain(PAT.substring(0, half))
                    .doesNotContain(PAT.substring(half)));
    // Every report reached the listener, and what the stream held back followed when the call
    // ended, at the last progress the tool reported.
    assertThat(heard)
        .extracting(Heard::progress, Heard::total)
        .containsExactly(
            tuple(1.0, Optional.of(4.0)),
            tuple(2.0, Optional.of(4.0)),
            tuple(3.0, Optional.of(4.0)),
            tuple(4.0, Optional.of(4.0)),
            tuple(4.0, Optional.of(4.0)));
    assertThat(heard.getFirst().message())
        .hasValueSatisfying(text -> assertThat(log).startsWith(text));
    assertThat(heard.getLast().message())
        .hasValueSatisfying(text -> assertThat(text).endsWith("Checked out main.\n"));
  }

  @Test
  void eachFindingIsCountedByRuleToolAndActionAndLoggedWithoutItsValue() {
    tool(
        "deploy_status",
        "builtin:deploy",
        (call, arguments) -> ToolResult.success("Deployed with " + TOKEN + " and " + PAT));
    tool("shell_run", "mcp:shell", (call, arguments) -> ToolResult.success("env: " + TOKEN));
    SecretPolicy policy =
        new SecretPolicy(
            SecretPolicy.Action.REDACT, Map.of(), Map.of("mcp:shell", SecretPolicy.Action.BLOCK));

    PrintStream stderr = System.err;
    ByteArrayOutputStream log = new ByteArrayOutputStream();
    System.setErr(new PrintStream(log, true, StandardCharsets.UTF_8));
    try {
      call(policy, "deploy_status");
      call(policy, "deploy_status");
      call(policy, "shell_run");
    } finally {
      System.setErr(stderr);
    }

    assertThat(findingsCounted())
        .containsExactlyInAnyOrder(
            List.of("TOOLHOST_TOKEN", "deploy_status", "redacted", 2L),
            List.of("github-pat", "deploy_status", "redacted", 2L),
            List.of("TOOLHOST_TOKEN", "shell_run", "blocked", 1L));
    String logged = log.toString(StandardCharsets.UTF_8);
    assertThat(logged)
        .contains("A secret (github-pat, " + PAT.length() + " chars, plain)")
        .contains("in the result of tool 'deploy_status' was redacted")
        .contains("A secret (TOOLHOST_TOKEN, " + TOKEN.length() + " chars, plain)")
        .contains("in the result of tool 'shell_run' was blocked")
        .doesNotContain(PAT)
        .doesNotContain(TOKEN);
  }
}
