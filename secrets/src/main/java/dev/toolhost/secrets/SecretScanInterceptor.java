package dev.toolhost.secrets;

import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.Redactor;
import dev.toolhost.core.ToolError;
import dev.toolhost.core.ToolInterceptor;
import dev.toolhost.core.ToolProgress;
import dev.toolhost.core.ToolResult;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.metrics.LongCounter;
import io.opentelemetry.context.Scope;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;
import tools.jackson.databind.node.StringNode;

/**
 * The secret scan interceptor is the dispatch chain's output scan: every tool result, of every
 * source, is scanned before anything else sees it (its text, its structured JSON, an error's
 * message and detail, and the progress messages it reports on the way), and a secret in it is
 * redacted, or the result blocked, as the {@link SecretPolicy} says for the caller's profile and
 * the tool's source.
 *
 * <p>Each finding is counted ({@code toolhost.secrets.findings}, tagged {@code rule}, {@code
 * tool_name} and {@code action}) and logged with its rule, the tool and the secret's length, never
 * its value.
 */
public final class SecretScanInterceptor implements ToolInterceptor {

  private static final Logger LOG = LoggerFactory.getLogger(SecretScanInterceptor.class);
  private static final AttributeKey<String> RULE = AttributeKey.stringKey("rule");
  private static final AttributeKey<String> TOOL = AttributeKey.stringKey("tool_name");
  private static final AttributeKey<String> ACTION = AttributeKey.stringKey("action");

  private final SecretScanner scanner;
  private final SecretPolicy policy;
  private final LongCounter findings;

  /** An interceptor that scans with the scanner, acts by the policy and counts on the telemetry. */
  public SecretScanInterceptor(
      SecretScanner scanner, SecretPolicy policy, OpenTelemetry openTelemetry) {
    this.scanner = scanner;
    this.policy = policy;
    this.findings =
        openTelemetry
            .getMeter("dev.toolhost.secrets")
            .counterBuilder("toolhost.secrets.findings")
            .setDescription("Secrets found in what leaves the host, by rule and action")
            .setUnit("{finding}")
            .build();
  }

  @Override
  public ToolResult intercept(Chain chain) {
    SecretPolicy.Action action = policy.actionFor(chain.profile().name(), chain.spec().source());
    if (action == SecretPolicy.Action.OFF) {
      return chain.proceed(chain.call());
    }
    String tool = chain.call().toolName();
    Optional<ToolProgress.Listener> listener = ToolProgress.current();
    ToolResult result;
    if (listener.isPresent()) {
      // Progress messages are one text in chunks: a secret split across two is still found.
      Redactor.Stream stream = scanner.stream();
      AtomicReference<double[]> last = new AtomicReference<>();
      AtomicReference<Optional<Double>> lastTotal = new AtomicReference<>(Optional.empty());
      try (Scope ignored =
          ToolProgress.listen(
              (progress, total, message) -> {
                Optional<String> safe;
                synchronized (stream) {
                  safe = message.map(stream::push).filter(text -> !text.isEmpty());
                }
                last.set(new double[] {progress});
                lastTotal.set(total);
                listener.get().progress(progress, total, safe);
              })) {
        result = chain.proceed(chain.call());
      }
      String rest;
      synchronized (stream) {
        rest = stream.finish();
      }
      // What the stream held back, once the call is over and nothing more can follow it.
      if (!rest.isEmpty() && last.get() != null) {
        listener.get().progress(last.get()[0], lastTotal.get(), Optional.of(rest));
      }
    } else {
      result = chain.proceed(chain.call());
    }
    return switch (result) {
      case ToolResult.Success success -> success(success, tool, action);
      case ToolResult.Failure failure -> failure(failure, tool, action);
    };
  }

  private ToolResult success(ToolResult.Success success, String tool, SecretPolicy.Action action) {
    List<Finding> found = new ArrayList<>();
    SecretScanner.Redaction content = scanner.redaction(success.content());
    found.addAll(content.findings());
    Optional<JsonNode> structured = success.structured().map(json -> redact(json, found));
    if (found.isEmpty()) {
      return success;
    }
    record(found, tool, action);
    if (action == SecretPolicy.Action.BLOCK) {
      return blocked(found, tool);
    }
    String note =
        "\n[toolhost: "
            + found.size()
            + (found.size() == 1 ? " secret was" : " secrets were")
            + " removed from this result]";
    return new ToolResult.Success(content.text() + note, structured);
  }

  private ToolResult failure(ToolResult.Failure failure, String tool, SecretPolicy.Action action) {
    ToolError error = failure.error();
    SecretScanner.Redaction message = scanner.redaction(error.message());
    SecretScanner.Redaction detail = scanner.redaction(error.detail());
    List<Finding> found = new ArrayList<>(message.findings());
    found.addAll(detail.findings());
    if (found.isEmpty()) {
      return failure;
    }
    record(found, tool, action);
    if (action == SecretPolicy.Action.BLOCK) {
      return blocked(found, tool);
    }
    return new ToolResult.Failure(new ToolError(error.code(), message.text(), detail.text()));
  }

  private static ToolResult blocked(List<Finding> found, String tool) {
    String rules = found.stream().map(Finding::rule).distinct().collect(Collectors.joining(", "));
    return ToolResult.failure(
        ErrorCode.EXECUTION_FAILED,
        "The result of tool '"
            + tool
            + "' held a secret ("
            + rules
            + ") and was withheld by the host's secret policy.");
  }

  private void record(List<Finding> found, String tool, SecretPolicy.Action action) {
    String acted = action == SecretPolicy.Action.BLOCK ? "blocked" : "redacted";
    for (Finding finding : found) {
      findings.add(1, Attributes.of(RULE, finding.rule(), TOOL, tool, ACTION, acted));
      LOG.warn(
          "A secret ({}, {} chars, {}) in the result of tool '{}' was {}",
          finding.rule(),
          finding.length(),
          finding.encoding().name().toLowerCase(java.util.Locale.ROOT),
          tool,
          acted);
    }
  }

  /** The JSON with every string in it redacted (keys included), noting what was found. */
  private JsonNode redact(JsonNode json, List<Finding> found) {
    if (json.isString()) {
      SecretScanner.Redaction redaction = scanner.redaction(json.asString());
      found.addAll(redaction.findings());
      return redaction.findings().isEmpty() ? json : StringNode.valueOf(redaction.text());
    }
    if (json instanceof ArrayNode array) {
      ArrayNode copy = array.arrayNode();
      array.forEach(each -> copy.add(redact(each, found)));
      return copy;
    }
    if (json instanceof ObjectNode object) {
      ObjectNode copy = object.objectNode();
      for (var entry : object.properties()) {
        SecretScanner.Redaction key = scanner.redaction(entry.getKey());
        found.addAll(key.findings());
        JsonNode value = entry.getValue();
        copy.set(
            key.text(),
            value.isString() ? redactAssigned(entry.getKey(), value, found) : redact(value, found));
      }
      return copy;
    }
    return json;
  }

  /**
   * A string value of an object, redacted as it reads after its key: scanned alone, a value would
   * escape the rules that find a secret only after its assignment (generic-api-key: {@code
   * "api_key": "..."}), and the structured JSON would keep a secret its text had redacted. The pair
   * is scanned as JSON writes it, and what is found in the value (or reaches into it) is redacted
   * there; the key is scanned on its own.
   */
  private JsonNode redactAssigned(String key, JsonNode value, List<Finding> found) {
    String prefix = "\"" + key + "\": \"";
    String text = value.asString();
    List<Finding> inValue = new ArrayList<>();
    for (Finding finding : scanner.scan(prefix + text + "\"")) {
      int start = Math.max(finding.start(), prefix.length()) - prefix.length();
      int end = Math.min(finding.end(), prefix.length() + text.length()) - prefix.length();
      if (start < end) {
        inValue.add(new Finding(finding.rule(), start, end, finding.encoding(), finding.known()));
      }
    }
    found.addAll(inValue);
    return inValue.isEmpty() ? value : StringNode.valueOf(SecretScanner.apply(text, inValue));
  }
}
