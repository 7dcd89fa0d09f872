package dev.toolhost.springai;

import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolSet;
import dev.toolhost.core.ToolSpec;
import org.springframework.ai.chat.memory.ChatMemory;
import org.springframework.ai.chat.model.ToolContext;
import org.springframework.ai.tool.ToolCallback;
import org.springframework.ai.tool.definition.ToolDefinition;

/** One Toolhost tool of a set as a Spring AI callback that dispatches through Toolhost. */
final class ToolSetCallback implements ToolCallback {

  private final ToolDefinition definition;
  private final ToolSet tools;
  private final ToolDispatcher dispatcher;

  ToolSetCallback(ToolSpec spec, ToolSet tools, ToolDispatcher dispatcher) {
    this.definition =
        ToolDefinition.builder()
            .name(spec.name())
            .description(spec.description())
            .inputSchema(spec.parameters().toString())
            .build();
    this.tools = tools;
    this.dispatcher = dispatcher;
  }

  @Override
  public ToolDefinition getToolDefinition() {
    return definition;
  }

  @Override
  public String call(String toolInput) {
    return dispatch(toolCall(toolInput));
  }

  @Override
  public String call(String toolInput, ToolContext toolContext) {
    ToolCall call = toolCall(toolInput);
    if (toolContext != null) {
      Object conversation = toolContext.getContext().get(ChatMemory.CONVERSATION_ID);
      if (conversation != null) {
        call = call.withSessionId(conversation.toString());
      }
    }
    return dispatch(call);
  }

  private ToolCall toolCall(String toolInput) {
    String name = definition.name();
    // The dispatcher reads "" as {}, as models send it for a tool without parameters.
    return ToolCall.of(name, toolInput == null ? "" : toolInput)
        .withTimeout(tools.defaultTimeout(name));
  }

  // A failure's text is the ToolError message: returned, not thrown, so that the model reads it.
  private String dispatch(ToolCall call) {
    return dispatcher.dispatch(tools, call).text();
  }
}
