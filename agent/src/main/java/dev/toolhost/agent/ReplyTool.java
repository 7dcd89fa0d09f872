package dev.toolhost.agent;

import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSpec;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * A reply tool is Spacebot's {@code reply}: a tool bound to one turn's response channel, through
 * which the model sends the user a message mid-turn.
 *
 * <p>Pass {@link #tool()} to {@link Agent#run(Conversation, String, RunListener, java.util.List)}:
 * it is added for the turn and removed after it, and the tool set refuses any later call. As a
 * second guard, once {@link #close() closed} the tool itself refuses to deliver, so a stale channel
 * never receives a message. Thread-safe.
 */
public final class ReplyTool implements AutoCloseable {

  /** The tool's name. */
  public static final String NAME = "reply";

  /** The tool's source. */
  public static final String SOURCE = "channel";

  private final AtomicBoolean open = new AtomicBoolean(true);
  private final ExecutableTool tool;

  /** A reply tool that delivers to the given channel until closed. */
  public ReplyTool(Consumer<String> channel) {
    ObjectNode parameters = JsonNodeFactory.instance.objectNode().put("type", "object");
    parameters
        .putObject("properties")
        .putObject("content")
        .put("type", "string")
        .put("description", "The message to send to the user now.");
    parameters.putArray("required").add("content");
    parameters.put("additionalProperties", false);
    ToolSpec spec =
        new ToolSpec(
            NAME,
            "Sends a message to the user now, before the turn ends (progress, a question).",
            parameters,
            SOURCE);
    this.tool =
        ExecutableTool.of(
            spec,
            (call, arguments) -> {
              if (!open.get()) {
                return ToolResult.failure(
                    ErrorCode.TOOL_NOT_FOUND,
                    "The reply channel of that turn has closed; the message was not delivered.");
              }
              channel.accept(arguments.get("content").asString());
              return ToolResult.success("Delivered.");
            });
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
