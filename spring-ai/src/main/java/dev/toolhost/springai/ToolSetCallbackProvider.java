package dev.toolhost.springai;

import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolSet;
import java.util.Objects;
import org.springframework.ai.tool.ToolCallback;
import org.springframework.ai.tool.ToolCallbackProvider;

/**
 * A tool set callback provider is a Spring AI {@link ToolCallbackProvider} that offers a Toolhost
 * {@link ToolSet} (the tools of one profile) to a {@code ChatClient}, and runs every call the
 * client's model makes through a Toolhost {@link ToolDispatcher}.
 *
 * <p>Each tool the set shows becomes a {@link ToolCallback} whose {@link
 * org.springframework.ai.tool.definition.ToolDefinition} carries the tool's name, description and
 * JSON Schema as is. Its {@code call} takes the one dispatch path every Toolhost call takes: lookup
 * in the set, validation, the tool's deadline ({@link ToolSet#defaultTimeout}), telemetry, and
 * whatever interceptors the dispatcher was built with (secret scanning, result chunking). A call's
 * session id is the tool context's {@link
 * org.springframework.ai.chat.memory.ChatMemory#CONVERSATION_ID} entry, when the request puts one
 * there ({@code .toolContext(Map.of(ChatMemory.CONVERSATION_ID, id))}); Spring AI gives a callback
 * no tool call id, so each call gets a fresh one.
 *
 * <p>Never throws at the client: a failed call returns the {@link dev.toolhost.core.ToolError}
 * message as the tool's answer, which the model reads and acts on. The set is read each time the
 * callbacks are asked for, which a {@code ChatClient} does once per call: a tool registered during
 * a call is offered from the next call on, and one removed during a call stays in that call's list
 * but answers {@code tool_not_found}, since the dispatcher looks each call up in the set.
 * Thread-safe.
 */
public final class ToolSetCallbackProvider implements ToolCallbackProvider {

  private final ToolSet tools;
  private final ToolDispatcher dispatcher;

  private ToolSetCallbackProvider(ToolSet tools, ToolDispatcher dispatcher) {
    this.tools = Objects.requireNonNull(tools, "tools");
    this.dispatcher = Objects.requireNonNull(dispatcher, "dispatcher");
  }

  /** A provider of the set's tools, whose calls run through the dispatcher. */
  public static ToolSetCallbackProvider of(ToolSet tools, ToolDispatcher dispatcher) {
    return new ToolSetCallbackProvider(tools, dispatcher);
  }

  @Override
  public ToolCallback[] getToolCallbacks() {
    return tools.specs().stream()
        .map(spec -> new ToolSetCallback(spec, tools, dispatcher))
        .toArray(ToolCallback[]::new);
  }
}
