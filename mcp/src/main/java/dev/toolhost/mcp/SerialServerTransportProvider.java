package dev.toolhost.mcp;

import io.modelcontextprotocol.spec.McpServerSession;
import io.modelcontextprotocol.spec.McpServerTransport;
import io.modelcontextprotocol.spec.McpServerTransportProvider;
import java.util.List;
import reactor.core.publisher.Mono;

/**
 * A serial server transport provider gives each session a transport that passes one message at a
 * time to the provider's own.
 *
 * <p>MCP Java SDK 2.1.0: the stdio server transport's {@code sendMessage} emits into a unicast
 * Reactor sink with {@code tryEmitNext}, which fails ("signaled serially") when two tool calls
 * answer at once. Only the hand-off is serialized, never a whole call. Remove once the SDK
 * serializes its own sends.
 */
final class SerialServerTransportProvider implements McpServerTransportProvider {

  private final McpServerTransportProvider delegate;

  SerialServerTransportProvider(McpServerTransportProvider delegate) {
    this.delegate = delegate;
  }

  @Override
  public void setSessionFactory(McpServerSession.Factory sessionFactory) {
    delegate.setSessionFactory(transport -> sessionFactory.create(new Serial(transport)));
  }

  @Override
  public Mono<Void> notifyClients(String method, Object params) {
    return delegate.notifyClients(method, params);
  }

  @Override
  public Mono<Void> notifyClient(String sessionId, String method, Object params) {
    return delegate.notifyClient(sessionId, method, params);
  }

  @Override
  public void close() {
    delegate.close();
  }

  @Override
  public Mono<Void> closeGracefully() {
    return delegate.closeGracefully();
  }

  @Override
  public List<String> protocolVersions() {
    return delegate.protocolVersions();
  }

  /** One session's transport, sending one message at a time. */
  private static final class Serial extends SerialTransport<McpServerTransport>
      implements McpServerTransport {

    Serial(McpServerTransport delegate) {
      super(delegate);
    }
  }
}
