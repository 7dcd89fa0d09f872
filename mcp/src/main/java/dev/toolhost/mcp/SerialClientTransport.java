package dev.toolhost.mcp;

import io.modelcontextprotocol.spec.McpClientTransport;
import io.modelcontextprotocol.spec.McpSchema;
import java.util.function.Consumer;
import java.util.function.Function;
import reactor.core.publisher.Mono;

/**
 * A serial client transport passes one message at a time to the transport it wraps.
 *
 * <p>MCP Java SDK 2.1.0: {@code StdioClientTransport.sendMessage} emits into a unicast Reactor sink
 * with {@code tryEmitNext}, which fails ("signaled serially", {@code FAIL_NON_SERIALIZED}) when two
 * threads send at once; the failed request then waits for its timeout. Only the hand-off into the
 * sink is serialized here, never a whole call: many calls stay in flight at once. Remove this
 * wrapper once the SDK serializes its own sends.
 */
final class SerialClientTransport extends SerialTransport<McpClientTransport>
    implements McpClientTransport {

  SerialClientTransport(McpClientTransport delegate) {
    super(delegate);
  }

  @Override
  public Mono<Void> connect(
      Function<Mono<McpSchema.JSONRPCMessage>, Mono<McpSchema.JSONRPCMessage>> handler) {
    return delegate.connect(handler);
  }

  @Override
  public void setExceptionHandler(Consumer<Throwable> handler) {
    delegate.setExceptionHandler(handler);
  }
}
