package dev.toolhost.exec;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * An execution is what one process run by the {@link Sandbox} did: its exit code, what it wrote
 * (each stream within its cap), how long it took, and whether it timed out, waited for input, was
 * cut, and ran contained.
 *
 * @param exitCode the process's exit status; 128 plus the signal's number when a signal ended it
 *     (137 for the kill that ends a timed-out tree)
 * @param stdout what it wrote to standard output, cut as {@link OutputBuffer} says
 * @param stderr what it wrote to standard error, likewise
 * @param stdoutBytes every byte it wrote to standard output
 * @param stderrBytes every byte it wrote to standard error
 * @param elapsed from start to the end of the process tree
 * @param timedOut whether the timeout ended it
 * @param waitingForInput the prompt it showed, when it was ended for waiting on input
 * @param truncated whether either stream was cut
 * @param sandboxed whether it ran inside the sandbox ({@code false} only with {@code unsandboxed:
 *     true})
 * @param limit the call's limit that stopped it ({@code memory}: the kernel killed a process for
 *     the call's memory and the call was ended; {@code processes}: a fork was refused), if any
 */
public record Execution(
    int exitCode,
    String stdout,
    String stderr,
    long stdoutBytes,
    long stderrBytes,
    Duration elapsed,
    boolean timedOut,
    Optional<String> waitingForInput,
    boolean truncated,
    boolean sandboxed,
    Optional<String> limit) {

  public Execution {
    Objects.requireNonNull(stdout, "stdout");
    Objects.requireNonNull(stderr, "stderr");
    Objects.requireNonNull(elapsed, "elapsed");
    Objects.requireNonNull(waitingForInput, "waitingForInput");
    Objects.requireNonNull(limit, "limit");
  }

  /** The structured content of a result: the fields above in lower_snake. */
  public ObjectNode toJson() {
    ObjectNode json = JsonMapper.shared().createObjectNode();
    json.put("exit_code", exitCode);
    json.put("stdout", stdout);
    json.put("stderr", stderr);
    json.put("stdout_bytes", stdoutBytes);
    json.put("stderr_bytes", stderrBytes);
    json.put("elapsed_ms", elapsed.toMillis());
    json.put("timed_out", timedOut);
    json.put("waiting_for_input", waitingForInput.isPresent());
    json.put("truncated", truncated);
    json.put("sandboxed", sandboxed);
    limit.ifPresent(reached -> json.put("limit", reached));
    return json;
  }

  /** The one-line summary that opens a result's text. */
  String summary() {
    String how;
    if (timedOut) {
      how = "timed out after " + seconds(elapsed) + "; the process tree was killed";
    } else if (waitingForInput.isPresent()) {
      how =
          "ended: it waited for input ('"
              + waitingForInput.get().strip()
              + "') and stdin is empty; pass a flag such as -y or --yes, or pipe the answer in";
    } else if (limit.filter("memory"::equals).isPresent()) {
      how =
          "stopped by the call's memory limit after "
              + seconds(elapsed)
              + "; the kernel killed a process and the call was ended (exit code "
              + exitCode
              + ")";
    } else {
      how = "exit code " + exitCode + " in " + seconds(elapsed);
      if (limit.isPresent()) {
        how += "; the call reached its process limit and a fork was refused";
      }
    }
    return "[" + how + (sandboxed ? "; sandboxed" : "; NOT sandboxed") + "]";
  }

  /** The text of a shell or exec result: the summary, then each stream that wrote anything. */
  String text() {
    StringBuilder text = new StringBuilder(summary());
    if (!stdout.isEmpty()) {
      text.append("\nstdout:\n").append(stdout);
    }
    if (!stderr.isEmpty()) {
      if (stdout.isEmpty() || !stdout.endsWith("\n")) {
        text.append('\n');
      }
      text.append("stderr:\n").append(stderr);
    }
    return text.toString();
  }

  private static String seconds(Duration duration) {
    return String.format(java.util.Locale.ROOT, "%.2f s", duration.toNanos() / 1e9);
  }
}
