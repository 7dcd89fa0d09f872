package dev.toolhost.agent;

import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.ParametersSchema;
import dev.toolhost.core.Redactor;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSpec;
import java.util.LinkedHashSet;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import tools.jackson.databind.node.ObjectNode;

/**
 * A reply tool is Spacebot's {@code reply}: a tool bound to one turn's response channel, through
 * which the model sends the user a message mid-turn.
 *
 * <p>Pass {@link #tool()} to {@link Agent#run(Conversation, String, RunListener, java.util.List)}:
 * it is added for the turn and removed after it, and the tool set refuses any later call. As a
 * second guard, once {@link #close() closed} the tool itself refuses to deliver, so a stale channel
 * never receives a message.
 *
 * <p>Made with the host's {@link Redactor} (its secret scanner), it refuses content that carries a
 * secret with {@code invalid_arguments} ({@code blocked reply content: ...}), naming the kinds of
 * secret found and never the secret itself, and delivers nothing. Thread-safe.
 */
public final class ReplyTool implements AutoCloseable {

  /** The tool's name. */
  public static final String NAME = "reply";

  /** The tool's source. */
  public static final String SOURCE = "channel";

  private static final Pattern MARKER = Pattern.compile("\\[REDACTED:([^\\]]+)\\]");

  // The spec and its compiled schema, made once: each reply tool binds them to its channel.
  private static final ExecutableTool TEMPLATE = template();

  private static ExecutableTool template() {
    ObjectNode parameters =
        ParametersSchema.oneString("content", "The message to send to the user now.");
    ToolSpec spec =
        new ToolSpec(
            NAME,
            "Sends a message to the user now, before the turn ends (progress, a question).",
            parameters,
            SOURCE);
    return ExecutableTool.of(
        spec,
        (call, arguments) -> {
          throw new IllegalStateException("the template is never called");
        });
  }

  private final AtomicBoolean open = new AtomicBoolean(true);
  private final ExecutableTool tool;

  /** A reply tool that delivers to the given channel until closed, with no secret scanner. */
  public ReplyTool(Consumer<String> channel) {
    this(channel, Redactor.NONE);
  }

  /**
   * A reply tool that delivers to the given channel until closed, and refuses content in which the
   * redactor finds a secret.
   */
  public ReplyTool(Consumer<String> channel, Redactor redactor) {
    Objects.requireNonNull(channel, "channel");
    Objects.requireNonNull(redactor, "redactor");
    this.tool =
        TEMPLATE.withExecutor(
            (call, arguments) -> {
              if (!open.get()) {
                return ToolResult.failure(
                    ErrorCode.TOOL_NOT_FOUND,
                    "The reply channel of that turn has closed; the message was not delivered.");
              }
              String content = arguments.get("content").asString();
              String redacted = redactor.redact(content);
              if (!redacted.equals(content)) {
                return ToolResult.failure(
                    ErrorCode.INVALID_ARGUMENTS,
                    "blocked reply content: it carries a secret ("
                        + String.join(", ", kinds(redacted))
                        + "). Nothing was sent; never put a secret in a message to the user.");
              }
              channel.accept(content);
              return ToolResult.success("Delivered.");
            });
  }

  // The kinds of secret the redactor marked, such as github-pat, each once.
  private static Set<String> kinds(String redacted) {
    Set<String> kinds = new LinkedHashSet<>();
    Matcher marker = MARKER.matcher(redacted);
    while (marker.find()) {
      kinds.add(marker.group(1));
    }
    if (kinds.isEmpty()) {
      kinds.add("a value the secret scanner knows");
    }
    return kinds;
  }

  /** The tool to bind for the turn. */
  public ExecutableTool tool() {
    return tool;
  }

  /** Closes the channel: from now on the tool refuses to deliver. */
  @Override
  public void close() {
    open.set(false);
  }
}
